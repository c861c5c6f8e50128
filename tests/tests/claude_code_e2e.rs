//! Claude Code runs the components: the real `claude` (pinned 2.1.331, headless `claude -p`)
//! with the plugin package `integrations/claude-code` (its hooks run `scratchpad hook`, its MCP
//! server is `scratchpad mcp`), against a scripted Anthropic Messages API on 127.0.0.1. Each
//! scenario asserts on markers in what the model received.

use std::path::Path;

use scratchpad_tests::agents::claude_code::{Claude, PREFIX, last_tool_results, text_of, tool_names, tool_uses};
use scratchpad_tests::scripted::Model;
use scratchpad_tests::{big_log, scratchpad_binary};
use serde_json::{Value, json};

const PLAN: &str = "1. PLAN-MARKER-42: fix the parser\n2. add a test";
/// The plan as the scratchpad block injects it (the history's `set_plan` call holds the plan
/// without its heading).
const INJECTED_PLAN: &str = "## Plan\n1. PLAN-MARKER-42";

fn tool(name: &str) -> String {
    format!("{PREFIX}{name}")
}

/// A `scratchpad` that notes each run's subcommand in `log` before it runs the real one.
fn logging_scratchpad(dir: &Path, log: &Path) -> std::path::PathBuf {
    let wrapper = dir.join("scratchpad-logged");
    let script = format!("#!/bin/sh\necho \"$1\" >> {log:?}\nexec {:?} \"$@\"\n", scratchpad_binary());
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    wrapper
}

/// The plan is written through the plugin's MCP tool, injected on the next turn (in a new
/// process, `--resume`), still injected after `/compact` when the history no longer holds the
/// tool call, readable with `scratchpad show`, and invisible to another session. Every hook
/// event but a session's start is answered by the plugin's running MCP server (`mcp_tool`
/// hooks): `scratchpad hook` runs once per `claude` process.
#[test]
fn the_plan_survives_turns_resume_and_compaction_and_stays_in_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({
        "rules": [
            { "when": "SCRIPT:plan", "reply": [{ "tool_use": { "name": tool("session_scratchpad"),
                "input": { "action": "set_plan", "content": PLAN } } }] },
            { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
        ],
        "compact_summary": "SUMMARY: the user asked for a plan.",
    });
    let model = Model::start("anthropic", dir.path(), &script);
    let mut claude = Claude::with_plugin(dir.path(), &model);
    let runs = dir.path().join("runs.log");
    claude.scratchpad = Some(logging_scratchpad(dir.path(), &runs));

    let first = claude.prompt("SCRIPT:plan make a plan", None);
    let session = first["session_id"].as_str().expect("a session id").to_owned();
    assert_eq!(first["result"], "PLAN-SAVED", "the tool call succeeded: {first}");
    let requests = model.turn_requests();
    assert!(
        tool_names(&requests[0]).contains(&tool("session_scratchpad")),
        "the scratchpad tool is offered directly, not behind a tool search: {:?}",
        tool_names(&requests[0])
    );
    let seen = text_of(&requests[0]);
    assert_eq!(
        seen.matches("## Session Scratchpad").count(),
        1,
        "the guidance reached the model once (the MCP server's instructions): {seen}"
    );
    assert!(seen.contains(&format!("{PREFIX}session_scratchpad")), "it names the tool as the model sees it: {seen}");
    assert!(!seen.contains("session.scratchpad"), "and never by the component's name: {seen}");

    let second = claude.prompt("SCRIPT:next continue", Some(&session));
    assert_eq!(second["session_id"], session.as_str());
    let last = model.turn_requests().pop().unwrap();
    assert!(text_of(&last).contains(INJECTED_PLAN), "the plan is injected on the next turn");

    let compacted = claude.run("/compact", Some(&session));
    assert!(compacted.status.success(), "{}", String::from_utf8_lossy(&compacted.stderr));
    claude.prompt("SCRIPT:after what next?", Some(&session));
    let last = model.turn_requests().pop().unwrap();
    assert!(text_of(&last).contains("SUMMARY: the user asked for a plan."), "the history was compacted");
    assert!(
        !tool_uses(&last).iter().any(|u| u["name"] == tool("session_scratchpad").as_str()),
        "the compacted history no longer holds the tool call"
    );
    assert!(text_of(&last).contains(INJECTED_PLAN), "the plan is still injected after compaction");
    let shown = claude.show(&session);
    assert!(shown.to_string().contains("PLAN-MARKER-42"), "`scratchpad show` sees what the model wrote: {shown}");
    assert_eq!(shown["session"]["compaction_count"], 1, "the compaction was counted once: {shown}");

    let other = claude.prompt("SCRIPT:other hello", None);
    assert_ne!(other["session_id"], session.as_str());
    let last = model.turn_requests().pop().unwrap();
    // Another session (of the same project: the same directory) has no plan of its own; recall
    // offers it the first one's, and never adopts it.
    assert!(!text_of(&last).contains(INJECTED_PLAN), "another session does not have the plan");
    assert!(text_of(&last).contains("offered, not adopted"), "recall offers it: {}", text_of(&last));
    let other_id = other["session_id"].as_str().unwrap();
    assert!(!claude.show(other_id).to_string().contains("PLAN-MARKER-42"), "nor does it store it");

    // Five `claude` processes: each started one MCP server and ran one SessionStart command;
    // the prompts, the tool calls, the compaction and the turns' ends were served in-process.
    let runs = std::fs::read_to_string(&runs).unwrap();
    let count = |subcommand: &str| runs.lines().filter(|line| *line == subcommand).count();
    assert_eq!((count("mcp"), count("hook")), (5, 5), "{runs}");
}

/// An append over the notes budget reaches the model as the component's refusal, and a large
/// MCP tool result reaches it as the large-observation store's synthetic observation, read back in slices with
/// `scratchpad_read` in the same turn.
#[test]
fn a_refusal_reaches_the_model_and_a_large_result_is_offloaded_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("big.log");
    std::fs::write(&log, big_log()).unwrap();
    let script = json!({
        "rules": [
            { "when": "SCRIPT:overflow", "reply": [{ "tool_use": { "name": tool("session_scratchpad"),
                "input": { "action": "append_notes", "content": "x".repeat(5000) } } }] },
            { "when": "append_notes rejected", "reply": [{ "text": "REFUSAL-SEEN" }] },
            { "when": "SCRIPT:log", "reply": [{ "tool_use": { "name": "mcp__logs__fetch_log", "input": {} } }] },
            // The grep's answer first: it quotes the entry's id too.
            { "when": "\"match_count\":1", "reply": [{ "text": "FOUND-IT" }] },
            { "when": "scratchpad_id", "capture": "\"scratchpad_id\"\\s*:\\s*\"([^\"]+)\"",
              "reply": [{ "tool_use": { "name": tool("scratchpad_read"),
                "input": { "scratchpad_id": "$1", "mode": "grep", "pattern": "LAST_CRITICAL_EVENT" } } }] },
        ],
    });
    let model = Model::start("anthropic", dir.path(), &script);
    let mut claude = Claude::with_plugin(dir.path(), &model);
    let servers = json!({ "mcpServers": { "logs": {
        "command": "python3",
        "args": [scratchpad_tests::runtimes::root().join("tests/claude-code/log_server.py"), &log],
        "alwaysLoad": true,
    } } });
    let mcp_config = dir.path().join("logs.json");
    std::fs::write(&mcp_config, servers.to_string()).unwrap();
    claude.extra_args = vec!["--mcp-config".into(), mcp_config.into_os_string()];

    let refused = claude.prompt("SCRIPT:overflow note this", None);
    assert_eq!(refused["result"], "REFUSAL-SEEN", "the refusal reached the model: {refused}");
    let results = last_tool_results(&model.turn_requests().pop().unwrap());
    assert!(results.contains("4000 char budget"), "the model reads why: {results}");
    let session = refused["session_id"].as_str().unwrap().to_owned();
    let notes = claude.show(&session).to_string();
    assert!(!notes.contains("xxxxxxxxxx"), "the refused append changed nothing: {notes}");

    let read = claude.prompt("SCRIPT:log fetch the log", Some(&session));
    assert_eq!(read["result"], "FOUND-IT", "{read}");
    let requests = model.turn_requests();
    let offloaded = requests.iter().map(last_tool_results).find(|r| r.contains("scratchpad_id")).expect("an offload");
    assert!(offloaded.len() < 20_000, "the model got the synthetic observation, not 89 KB: {} bytes", offloaded.len());
    assert!(!offloaded.contains("event number 1000\n"), "the middle of the log is not in context");
    let slice = last_tool_results(requests.last().unwrap());
    assert!(
        slice.contains(r#""line":2096,"text":"ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT""#),
        "scratchpad_read's grep returned the log's last line: {slice}"
    );
}

/// A component that loops forever ends in a hook error within its deadline and the turn still
/// completes; with the `scratchpad` binary missing every hook fails and the turn completes too.
#[test]
fn a_looping_component_or_a_missing_binary_never_breaks_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let model = Model::start(
        "anthropic",
        dir.path(),
        &json!({ "rules": [{ "when": "SCRIPT:hi", "reply": [{ "text": "HELLO-BACK" }] }] }),
    );
    let mut claude = Claude::with_plugin(dir.path(), &model);
    let config = dir.path().join("config.toml");
    let probe = scratchpad_tests::components::PROBE_PATH;
    std::fs::write(
        &config,
        format!(
            "[[plugin]]\nname = \"scratchpad\"\n[[plugin]]\nname = \"observations\"\n[[plugin]]\nname = \"probe\"\npath = {probe:?}\nallow_unsigned = true\ngrants = [\"inject\", \"storage\", \"config\"]\n[plugin.config]\nqueryMode = \"loop\"\npowers = [\"inject\", \"storage\", \"config\"]\n"
        ),
    )
    .unwrap();
    claude.config = Some(config);
    let started = std::time::Instant::now();
    let looped = claude.prompt("SCRIPT:hi there", None);
    assert_eq!(looped["result"], "HELLO-BACK", "the turn completed: {looped}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "the loop ended at its deadline");
    let session = looped["session_id"].as_str().unwrap();
    let state = claude.show(session).to_string();
    assert!(!state.contains("query-was-here"), "the looping call's write was discarded: {state}");

    claude.config = None;
    claude.scratchpad = Some(dir.path().join("no-such-scratchpad"));
    let missing = claude.prompt("SCRIPT:hi again", None);
    assert_eq!(missing["result"], "HELLO-BACK", "the turn completed without the binary: {missing}");
    let last: Value = model.requests().pop().unwrap();
    assert!(!text_of(&last).contains("Session Scratchpad"), "nothing was injected");
}

/// The Claude Agent SDK example (`integrations/claude-code/examples/agent-sdk`, TypeScript run by
/// Node 24) passes the plugin to `query()`: the model writes the plan with the plugin's tool, and
/// the next `query()` resuming the session gets it injected.
#[test]
fn the_agent_sdk_example_runs_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let script = json!({ "rules": [
        { "when": "SCRIPT:plan", "reply": [{ "tool_use": { "name": tool("session_scratchpad"),
            "input": { "action": "set_plan", "content": PLAN } } }] },
        { "when": "Plan set.", "reply": [{ "text": "SDK-SAVED" }] },
    ] });
    let model = Model::start("anthropic", dir.path(), &script);
    let claude = Claude::with_plugin(dir.path(), &model);
    let (example, path) = scratchpad_tests::runtimes::npm_package_on_node24(
        "integrations/claude-code/examples/agent-sdk",
        "agent-sdk.ts",
        "the Agent SDK example's pinned @anthropic-ai/claude-agent-sdk",
    );
    let node = scratchpad_tests::runtimes::node24();
    let run = |prompt: &str, resume: Option<&str>| -> Value {
        let mut command = claude.command(&node);
        command.env("PATH", &path).arg(&example).arg(prompt).args(resume);
        let output = command.output().expect("running the Agent SDK example");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    };
    let first = run("SCRIPT:plan make a plan", None);
    assert_eq!(first["result"], "SDK-SAVED", "{first}");
    let session = first["session_id"].as_str().unwrap().to_owned();
    assert!(claude.show(&session).to_string().contains("PLAN-MARKER-42"));
    run("SCRIPT:next continue", Some(&session));
    let last = model.turn_requests().pop().unwrap();
    assert!(text_of(&last).contains(INJECTED_PLAN), "the plan is injected in the resumed query");
}

/// A user installs the plugin from its marketplace (the directory, offline) in two commands and
/// the next `claude -p` runs it without `--plugin-dir`.
#[test]
fn the_plugin_installs_from_its_marketplace() {
    let dir = tempfile::tempdir().unwrap();
    let model = Model::start("anthropic", dir.path(), &json!({ "rules": [] }));
    let mut claude = Claude::with_plugin(dir.path(), &model);
    let runs = dir.path().join("runs.log");
    claude.scratchpad = Some(logging_scratchpad(dir.path(), &runs));
    let marketplace = scratchpad_tests::runtimes::root().join("integrations/claude-code");
    claude.claude(&["plugin", "marketplace", "add", marketplace.to_str().unwrap()]);
    claude.claude(&["plugin", "install", "scratchpad@scratchpad"]);
    claude.plugin_dir = false;
    claude.prompt("hello", None);
    let first = model.turn_requests().remove(0);
    assert!(tool_names(&first).contains(&tool("session_scratchpad")), "{:?}", tool_names(&first));
    assert!(text_of(&first).contains("## Session Scratchpad"), "the installed plugin's server gave its guidance");
    let runs = std::fs::read_to_string(&runs).unwrap();
    let mut started: Vec<&str> = runs.lines().collect();
    started.sort_unstable();
    assert_eq!(started, ["hook", "mcp"], "the installed plugin's server and its `SessionStart` hook ran");
}
