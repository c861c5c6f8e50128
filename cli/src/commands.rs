//! One function per subcommand. Each opens a fresh host on the database.

use anyhow::Context;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use scratchpad_host::{Host, Location, Observation, Origin, Placement, PluginSpec, ToolCall, TurnContext};
use serde_json::json;

use crate::args::{Cli, Command, Global, SessionCommand, TurnArgs};
use crate::output::print_json;
use scratchpad_host::terminal;

/// Runs the command; an error from a damaged database file points at `scratchpad doctor`.
pub(crate) async fn run(cli: Cli) -> anyhow::Result<()> {
    let (global, doctor) = (cli.global.clone(), matches!(cli.command, Command::Doctor { .. }));
    dispatch(cli).await.map_err(|error| if doctor { error } else { crate::doctor::hint(error, &global) })
}

async fn dispatch(cli: Cli) -> anyhow::Result<()> {
    let global = cli.global;
    match cli.command {
        Command::Demo => crate::demo::run(&global).await,
        Command::Doctor { recover } => crate::doctor::run(&global, recover.as_deref()),
        Command::Inspect { source } => inspect(&global, &source).await,
        Command::Plugins => plugins(&open(&global).await?, &global),
        Command::Session(SessionCommand::Create { session, fork, spawn, copy, project }) => {
            let origin = match (fork, spawn) {
                (Some(parent), _) => Origin::Fork { parent },
                (None, Some(parent)) => Origin::Spawn { parent, copy },
                (None, None) => Origin::New,
            };
            // The directory is checked before anything is opened: a bad one changes nothing.
            let project = match project {
                Some(dir) => Some(scratchpad_host::project_of_dir(std::path::absolute(&dir)?)?),
                None => None,
            };
            create(&open(&global).await?, &global, &session, origin, project.as_deref()).await
        }
        Command::Session(SessionCommand::List) => list(&open(&global).await?, &global).await,
        Command::Tools { session, turn } => tools(&open(&global).await?, &global, turn_of(&session, &turn)).await,
        Command::Call { session, tool, arguments, step, turn } => {
            let call = ToolCall::new(tool, arguments, step);
            run_call(&open(&global).await?, &global, turn_of(&session, &turn), &call).await
        }
        Command::Query { session, message, system, turn } => {
            query(&open(&global).await?, &global, turn_of(&session, &turn), &message, &system).await
        }
        Command::Observe { session, tool, file, metadata, step, turn } => {
            let host = open(&global).await?;
            observe(&host, &global, turn_of(&session, &turn), &tool, &file, &metadata, step).await
        }
        Command::Serve(args) => crate::serve::run(global.host_config()?, args).await,
        Command::Mcp(args) => crate::mcp::run(global.host_config()?, args).await,
        Command::Ui(args) => crate::ui::run(global.host_config()?, args).await,
        Command::Hook(args) => crate::hook::run(global.host_config(), args).await,
        Command::Setup(command) => crate::setup::run(command, global.json),
        Command::Recall(command) => crate::recall::run(&open(&global).await?, &global, command).await,
        Command::Precompile { dir, target } => {
            let written = scratchpad_host::precompiled::write(&dir, target.as_deref())?;
            if global.json {
                print_json(&json!({ "ok": true, "written": written }));
            } else {
                written.iter().for_each(|path| println!("{}", path.display()));
            }
            Ok(())
        }
        Command::ImportOpenclaw { path } => {
            let report = open(&global).await?.import_openclaw(&path).await?;
            if global.json {
                print_json(&json!({ "ok": true, "report": report }));
            } else {
                println!(
                    "imported {} session(s), {} already up to date; skipped {} malformed line(s), {} record(s) of other types",
                    report.sessions.len(),
                    report.unchanged.len(),
                    report.skipped_lines.len(),
                    report.skipped_records
                );
                report.skipped_lines.iter().for_each(|line| println!("  skipped {line}"));
            }
            Ok(())
        }
        Command::ExportOpenclaw { session, file } => {
            let records = open(&global).await?.export_openclaw(&session, &file).await?;
            if global.json {
                print_json(&json!({ "ok": true, "records": records }));
            } else {
                println!("appended {} record(s) to {}", records.len(), file.display());
            }
            Ok(())
        }
        Command::Migrate { from, to } => {
            let target = match to {
                Some(to) => Location::parse(&to),
                None => global.host_config()?.database,
            };
            let source = Location::parse(&from);
            let report = scratchpad_host::migrate(&source, &target).await?;
            if global.json {
                print_json(
                    &json!({ "ok": true, "from": source.to_string(), "to": target.to_string(), "report": report }),
                );
            } else {
                println!("migrated {source} → {target}");
                println!(
                    "  sessions: {} ({} copied now, {} already there, {} of them changed in the target since)",
                    report.sessions,
                    report.copied,
                    report.sessions - report.copied,
                    report.changed_in_target
                );
                println!(
                    "  storage keys: {}, metadata: {}, checkpoints: {}, observations: {} ({} bytes), identities: {}",
                    report.state_keys,
                    report.metadata_keys,
                    report.checkpoints,
                    report.observations,
                    report.observation_bytes,
                    report.identities
                );
                println!("  verified: every session read back from the target matches (sha256 {})", report.checksum);
            }
            Ok(())
        }
        Command::Gc => {
            let removed = open(&global).await?.gc().await?;
            if global.json {
                print_json(&json!({ "ok": true, "removed": removed }));
            } else {
                println!("removed {removed} expired observation(s)");
            }
            Ok(())
        }
        Command::Show { session } => show(&open(&global).await?, &global, &session).await,
    }
}

async fn open(global: &Global) -> anyhow::Result<Host> {
    Ok(Host::open(global.host_config()?).await?)
}

/// The turn a command acts in: `--turn T`, or a turn of its own.
fn turn_of(session: &str, args: &TurnArgs) -> TurnContext {
    let turn_id = args.turn.clone().unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        format!("cli-{}-{}", now.as_micros(), std::process::id())
    });
    TurnContext {
        session_id: session.to_owned(),
        turn_id,
        tokens_used: args.tokens_used,
        context_window: args.context_window,
    }
}

fn plugins(host: &Host, global: &Global) -> anyhow::Result<()> {
    let plugins = host.plugins();
    if global.json {
        print_json(&json!({ "ok": true, "plugins": plugins }));
        return Ok(());
    }
    for plugin in plugins {
        println!(
            "{}  (timeout {} ms, memory {} bytes, storage quota {} bytes, output cap {} bytes)",
            plugin.name, plugin.call_timeout_ms, plugin.memory_bytes, plugin.storage_quota_bytes, plugin.output_bytes
        );
        let signed = plugin.signed_by.as_deref().map(|p| format!(", signed by `{}`", terminal::line(p)));
        println!("  {}{}", plugin.identity, signed.unwrap_or_default());
        let grants = if plugin.grants.is_empty() { "none".to_owned() } else { plugin.grants.join(", ") };
        println!("  powers: {grants}");
        for tool in plugin.tools {
            println!("  {:<22} {}", tool.name, terminal::line(first_line(&tool.description)));
        }
    }
    Ok(())
}

async fn create(
    host: &Host,
    global: &Global,
    session: &str,
    origin: Origin,
    project: Option<&str>,
) -> anyhow::Result<()> {
    let guidance = host.create_session_in(session, origin.clone(), project).await?;
    let project = host.session(session).await?.project;
    if global.json {
        print_json(
            &json!({ "ok": true, "session": session, "origin": origin, "project": project, "guidance": guidance }),
        );
    } else {
        match &project {
            Some(project) => println!("created session {session} in project {}", terminal::line(project)),
            None => println!("created session {session}"),
        }
        for injection in guidance {
            let (plugin, placement) = (&injection.plugin, injection.placement.as_str());
            println!("\n[{plugin} guidance, {placement}]\n{}", terminal::block(&injection.text));
        }
    }
    Ok(())
}

async fn list(host: &Host, global: &Global) -> anyhow::Result<()> {
    let sessions = host.sessions().await?;
    if global.json {
        print_json(&json!({ "ok": true, "sessions": sessions }));
    } else {
        for s in sessions {
            let origin = s.origin.to_string();
            println!("{}\t{}\tturns: {}", s.id, terminal::line(&origin), s.turn_index + 1);
        }
    }
    Ok(())
}

async fn tools(host: &Host, global: &Global, turn: TurnContext) -> anyhow::Result<()> {
    let tools = host.tools(&turn).await?;
    if global.json {
        print_json(&json!({ "ok": true, "turn": turn.turn_id, "tools": tools }));
    } else {
        for tool in tools {
            let (description, parameters) = (terminal::line(&tool.description), terminal::line(&tool.parameters));
            println!("{} ({})\n  {description}\n  parameters: {parameters}\n", tool.name, tool.plugin);
        }
    }
    Ok(())
}

/// A tool call as a runtime makes it: every plugin's `before-tool-call` (which may rewrite the
/// arguments, e.g. resolve `{{step1.content}}`), then the owning plugin's tool.
async fn run_call(host: &Host, global: &Global, turn: TurnContext, call: &ToolCall) -> anyhow::Result<()> {
    let arguments = host.before_tool_call(&turn, call).await?;
    let output = host.call_tool(&turn, &call.name, &arguments).await?;
    if global.json {
        print_json(&json!({ "ok": true, "plugin": output.plugin, "content": output.content }));
    } else {
        println!("{}", terminal::text(&output.content));
    }
    Ok(())
}

async fn query(host: &Host, global: &Global, turn: TurnContext, message: &str, system: &str) -> anyhow::Result<()> {
    let prompt = host.before_query(&turn, message).await?;
    let rendered = prompt.render(system, message);
    if global.json {
        // Each block with its token count in the host's encoding (the budget's; what
        // `scratchpad ui` shows).
        let with_tokens = |i: &scratchpad_host::Injection| json!({ "plugin": i.plugin, "placement": i.placement, "text": i.text, "tokens": host.count_tokens(&i.text) });
        let by_placement: serde_json::Map<String, serde_json::Value> = Placement::ALL
            .iter()
            .map(|p| (p.as_str().to_owned(), json!(prompt.at(*p).map(with_tokens).collect::<Vec<_>>())))
            .collect();
        print_json(&json!({ "ok": true, "injections": by_placement, "rendered": rendered }));
    } else {
        let (system, user) = (terminal::text(&rendered.system), terminal::text(&rendered.user));
        println!("=== system ===\n{system}\n=== user ===\n{user}");
        // Stdout is exactly what the model reads; who injected what goes to stderr.
        let by: Vec<String> = Placement::ALL
            .iter()
            .flat_map(|p| {
                prompt.at(*p).map(move |i| {
                    format!(
                        "{} ({}, {} bytes, {} tokens)",
                        i.plugin,
                        p.as_str(),
                        i.text.len(),
                        host.count_tokens(&i.text)
                    )
                })
            })
            .collect();
        if !by.is_empty() {
            eprintln!("(injected by: {})", by.join("; "));
        }
    }
    Ok(())
}

async fn show(host: &Host, global: &Global, session: &str) -> anyhow::Result<()> {
    let record = host.session(session).await?;
    let state = host.state(session).await?;
    let observations = host.observations(session).await?;
    let metadata = host.metadata(session).await?;
    let checkpoint = host.latest_checkpoint(session).await?;
    let entries: Vec<_> = state
        .iter()
        .map(|e| match std::str::from_utf8(&e.value) {
            Ok(text) => json!({ "plugin": e.plugin, "key": e.key, "text": text }),
            Err(_) => json!({ "plugin": e.plugin, "key": e.key, "hex": hex_string(&e.value) }),
        })
        .collect();
    if global.json {
        print_json(&json!({
            "ok": true,
            "session": record,
            "metadata": metadata,
            "state": entries,
            "observations": observations,
            "latest_checkpoint": checkpoint,
        }));
    } else {
        println!(
            "session {}  origin {:?}  turns {}  compactions {}",
            record.id,
            record.origin,
            record.turn_index + 1,
            record.compaction_count
        );
        for m in &metadata {
            println!("[{}] metadata {} = {}", m.plugin, terminal::line(&m.key), m.value);
        }
        if let Some(c) = &checkpoint {
            println!(
                "latest checkpoint {} at {} tokens, {} messages: {}",
                c.id,
                c.tokens_at_checkpoint,
                c.message_count_at_checkpoint,
                terminal::line(&c.checkpoint.summary)
            );
        }
        for e in &state {
            let value = match std::str::from_utf8(&e.value) {
                Ok(text) => text.to_owned(),
                Err(_) => format!("<{} bytes: {}>", e.value.len(), hex_string(&e.value)),
            };
            println!("\n[{}] {}\n{}", e.plugin, terminal::line(&e.key), terminal::block(&value));
        }
        for o in &observations {
            let kind = format!("{:?}", o.kind).to_lowercase();
            println!(
                "\n[{}] observation {}  turn {} step {}  {} {} bytes  from {}",
                o.plugin,
                o.id,
                terminal::line(&o.turn_id),
                o.step,
                kind,
                o.size_bytes,
                terminal::line(&o.tool)
            );
        }
    }
    Ok(())
}

/// Prints exactly what the model would see as the tool's result (the replacement's text, or
/// the observation itself as a JSON string when no plugin replaced it). With `--json` it is wrapped
/// with the turn and step, which a later `--turn` needs; without, those go to stderr.
async fn observe(
    host: &Host,
    global: &Global,
    turn: TurnContext,
    tool: &str,
    file: &std::path::Path,
    metadata: &str,
    step: Option<u32>,
) -> anyhow::Result<()> {
    let metadata: serde_json::Value = serde_json::from_str(metadata).context("--metadata must be a JSON object")?;
    anyhow::ensure!(metadata.is_object(), "--metadata must be a JSON object, not {metadata}");
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let step = match step {
        Some(step) => step,
        None => {
            let stored = host.observations(&turn.session_id).await?;
            stored.iter().filter(|e| e.turn_id == turn.turn_id).count() as u32 + 1
        }
    };
    let call = ToolCall::new(tool, "{}", step);
    let view = host.after_tool_result(&turn, &call, &Observation::bytes(bytes.clone()).with_metadata(metadata)).await?;
    let seen = match &view.replacement {
        Some(text) => serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
        None => match std::str::from_utf8(&bytes) {
            Ok(text) => json!(text),
            Err(_) => json!({ "base64": BASE64.encode(&bytes) }),
        },
    };
    if global.json {
        let by = view.replaced_by;
        print_json(&json!({ "ok": true, "turn": turn.turn_id, "step": step, "replaced_by": by, "observation": seen }));
    } else {
        // The text byte for byte as the model gets it (a binary observation as JSON base64).
        match (&view.replacement, &seen) {
            (Some(text), _) => println!("{}", terminal::text(text)),
            (None, serde_json::Value::String(text)) => println!("{}", terminal::text(text)),
            (None, binary) => println!("{binary}"),
        }
        match &view.replaced_by {
            Some(plugin) => eprintln!("(turn {}, step {step}: replaced by plugin `{plugin}`)", turn.turn_id),
            None => eprintln!("(turn {}, step {step}: passed through unchanged)", turn.turn_id),
        }
    }
    Ok(())
}

async fn inspect(global: &Global, source: &str) -> anyhow::Result<()> {
    let config = global.host_config()?;
    // The configuration's own entry for this source (its policy, grants, name), if it has one.
    let spec = PluginSpec::parse_source(source, std::path::Path::new(".")).map_err(anyhow::Error::msg)?;
    let spec = config.plugins.iter().find(|p| p.name == spec.name).cloned().unwrap_or(spec);
    let name = spec.name.clone();
    let report = scratchpad_host::inspect(spec, &config).await?;
    let requested = report.requested.as_ref().map(|names| names.join(", "));
    if global.json {
        let plugin = match &report.plugin {
            Ok(tools) => json!({ "ok": true, "tools": tools }),
            Err(message) => json!({ "ok": false, "error": message }),
        };
        let signature = match &report.signature {
            Ok(publisher) => json!({ "ok": true, "publisher": publisher }),
            Err(message) => json!({ "ok": false, "error": message }),
        };
        print_json(&json!({
            "ok": report.plugin.is_ok(),
            "identity": report.identity,
            "requested": report.requested,
            "signature": signature,
            "imports": report.imports,
            "exports": report.exports,
            "plugin": plugin,
        }));
    } else {
        println!("identity: {}", report.identity);
        match &requested {
            Some(names) if names.is_empty() => println!("asks for: no power"),
            Some(names) => println!("asks for: {names}"),
            None => println!("asks for: (a 0.1.0 component: it cannot ask; it holds what its configuration grants)"),
        }
        match &report.signature {
            Ok(Some(publisher)) => println!("signature: verified, by publisher `{}`", terminal::line(publisher)),
            Ok(None) => println!("signature: not checked (loaded unsigned by its configuration)"),
            Err(message) => println!("signature: would be refused: {}", terminal::line(message)),
        }
        println!("imports:");
        report.imports.iter().for_each(|i| println!("  {}", terminal::line(i)));
        println!("exports:");
        report.exports.iter().for_each(|e| println!("  {}", terminal::line(e)));
        match &report.plugin {
            Ok(tools) => {
                println!("implements {}; tools:", scratchpad_host::WORLD);
                tools.iter().for_each(|t| println!("  {:<22} {}", t.name, terminal::line(first_line(&t.description))));
            }
            Err(message) => println!("not a loadable plugin: {}", terminal::line(message)),
        }
    }
    match report.plugin {
        Ok(_) => Ok(()),
        // The JSON report above already carries the error; exit as a refused plugin would.
        Err(_) if global.json => std::process::exit(3),
        Err(message) => Err(anyhow::Error::new(scratchpad_host::Error::Load { plugin: name, message })),
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
