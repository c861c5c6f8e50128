//! `scratchpad demo`: a scripted session a newcomer can read from top to bottom.
//!
//! It runs on the embedded default plugins through the real host and a real SQLite file,
//! including a host restart, so everything it shows is what an embedding runtime gets.

use scratchpad_host::{Error, Host, Observation, Origin, ToolCall, TurnContext};

use crate::args::Global;

const SYSTEM_PROMPT: &str = "You are a coding agent.";

pub(crate) async fn run(global: &Global) -> anyhow::Result<()> {
    let mut config = global.host_config()?;
    let temporary = global.db.is_none() && global.config.is_none();
    let file = std::env::temp_dir().join(format!("scratchpad-demo-{}.db", std::process::id()));
    if temporary {
        config.database = file.clone().into();
    }
    let result = script(config).await;
    if temporary {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
        }
    }
    result
}

async fn script(config: scratchpad_host::HostConfig) -> anyhow::Result<()> {
    let session = format!("demo-{}", std::process::id());
    step(&format!("Opening a host on {} with the embedded plugins", config.database));
    let host = Host::open(config.clone()).await?;
    for plugin in host.plugins() {
        let tools: Vec<_> = plugin.tools.iter().map(|t| t.name.as_str()).collect();
        println!("  plugin `{}` declares: {}", plugin.name, tools.join(", "));
    }

    step(&format!("Creating session `{session}`: each plugin adds its system-prompt guidance"));
    for injection in host.create_session(&session, Origin::New).await? {
        println!("[{} → {}]\n{}", injection.plugin, injection.placement.as_str(), indent(&injection.text));
    }

    let turn1 = TurnContext::new(&session, "turn-1");
    step("Turn 1: the model sees these tools");
    for tool in host.tools(&turn1).await? {
        println!("  {} ({})", tool.name, tool.plugin);
    }

    step("Turn 1: the model writes its plan, a finding and a reference");
    for args in [
        r#"{"action":"set_plan","content":"1. Reproduce the login failure\n2. Fix token expiry\n3. Add a regression test"}"#,
        r#"{"action":"append_notes","content":"Root cause: timezone mismatch in token expiry (UTC vs local)"}"#,
        r#"{"action":"refs.add","ref":"src/auth/login.ts"}"#,
    ] {
        tool_call(&host, &turn1, args).await?;
    }

    step("Turn 1: an append that would overflow the notes budget is rejected, notes unchanged");
    let huge = format!(r#"{{"action":"append_notes","content":"{}"}}"#, "x".repeat(4000));
    tool_call(&host, &turn1, &huge).await?;

    let log: String =
        (0..2000).map(|i| format!("INFO 2026-04-26 10:{:02}:{:02} event number {i}\n", i / 60 % 60, i % 60)).collect();
    let log = log + "ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n";
    step(&format!("Turn 1: fs_read returns a {} KB log; the observations plugin offloads it", log.len() / 1000));
    let call = ToolCall::new("fs_read", r#"{"path":"/tmp/big_log.txt"}"#, 1);
    let observation = Observation::text(log).with_metadata(serde_json::json!({ "path": "/tmp/big_log.txt" }));
    let view = host.after_tool_result(&turn1, &call, &observation).await?;
    match view.replacement {
        Some(seen) => {
            let seen: serde_json::Value = serde_json::from_str(&seen)?;
            let summary = seen["summary"].as_str().unwrap_or_default();
            let lines: Vec<&str> = summary.lines().collect();
            println!("  the model sees {} bytes instead of {}:", seen.to_string().len(), observation.bytes.len());
            println!(
                "  scratchpad_id {}, summary: {} … {} … {}",
                seen["scratchpad_id"],
                lines[0],
                lines.iter().find(|l| l.starts_with("[...")).unwrap_or(&""),
                lines[lines.len() - 1]
            );
            step("Turn 1: the model reads the end of it with scratchpad_read");
            let args =
                serde_json::json!({ "scratchpad_id": seen["scratchpad_id"], "mode": "tail", "n": 47 }).to_string();
            println!("→ scratchpad_read {args}");
            let out = host.call_tool(&turn1, "scratchpad_read", &args).await?;
            println!("{}", indent(&out.content));
        }
        None => println!("  (no plugin offloaded it)"),
    }

    step("Turn 2: the user says \"continue with step 2\"; the model receives");
    let prompt = host.before_query(&TurnContext::new(&session, "turn-2"), "continue with step 2").await?;
    print_prompt(&prompt.render(SYSTEM_PROMPT, "continue with step 2"));

    step("Restarting the host on the same database (a new process would do the same)");
    drop(host);
    let host = Host::open(config).await?;
    let prompt = host.before_query(&TurnContext::new(&session, "turn-3"), "what's next?").await?;
    println!("Turn 3 after the restart: the scratchpad is still injected");
    print_prompt(&prompt.render(SYSTEM_PROMPT, "what's next?"));
    Ok(())
}

async fn tool_call(host: &Host, turn: &TurnContext, args: &str) -> anyhow::Result<()> {
    let shown = if args.len() > 120 { format!("{}…", &args[..117]) } else { args.to_owned() };
    println!("→ session.scratchpad {shown}");
    match host.call_tool(turn, "session.scratchpad", args).await {
        Ok(output) => println!("{}", indent(&output.content)),
        Err(Error::Tool { error, .. }) => {
            println!("{}", indent(&format!("✗ {}: {}", error.kind.as_str(), error.message)))
        }
        Err(other) => return Err(other.into()),
    }
    Ok(())
}

fn print_prompt(rendered: &scratchpad_host::RenderedPrompt) {
    println!("--- system ---\n{}\n--- user ---\n{}\n--------------", rendered.system, rendered.user);
}

fn step(title: &str) {
    println!("\n== {title}");
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}
