//! OpenClaw hosts the components: the real `openclaw@2026.9.6` loads `integrations/openclaw`,
//! which runs `scratchpad serve`, and the scripted Chat Completions API (`tests/scripted/chat.py`
//! with `agents::openclaw::script`) drives real turns through a gateway. The assertions read the
//! model's requests for this project's own markers (never whole prompts: OpenClaw's system prompt is ~46 KB and changes
//! between releases) and the database through `scratchpad show`.
//!
//! One scenario in one test: gateways take ~20 s to start on two cores, so one gateway serves
//! most turns, a second one proves the state survives an OpenClaw restart and that a hostile
//! component ends in an error the turn survives.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use scratchpad_tests::agents::openclaw::{
    OpenClaw, append_custom_record, declare_tools, install, messages, requests_for, run_ok, scratchpad_json, script,
    text_of, tool_results, transcript_text,
};
use scratchpad_tests::scripted::Model;
use scratchpad_tests::{big_log, scratchpad_binary};
use serde_json::{Value, json};

const SESSION_KEY: &str = "e2e";
/// The host session the plugin maps OpenClaw's session key to.
const SESSION: &str = "agent:main:e2e";
const BLOCK_START: &str = "[Session Scratchpad - your persistent working memory]";
const GUIDANCE: &str = "## Session Scratchpad";
const PLAN_MARKER: &str = "PLAN-MARKER-ALPHA";
const NOTE_MARKER: &str = "NOTE-MARKER-BRAVO";
const WARNING: &str = "will be compacted after your next response";

/// The plugin's config: the embedded scratchpad and observations (with the large-observation store's test
/// deadline for an 89 KB offload on a loaded machine), and `extra` components after them.
fn plugin_config(db: &Path, extra: Vec<Value>) -> Value {
    let mut components = vec![
        json!({ "name": "scratchpad" }),
        json!({ "name": "observations", "limits": { "call_timeout_ms": 10000 } }),
    ];
    components.extend(extra);
    // The compiled components are cached with the other tests' (a cold compile takes seconds).
    let cache = scratchpad_tests::shared_cache();
    json!({ "binary": scratchpad_binary(), "database": db, "cacheDir": cache, "components": components,
            "requestTimeoutMs": 30000 })
}

/// The last request of the turn whose user message carries `marker`.
fn last_request(model: &Model, marker: &str) -> Value {
    requests_for(model, marker).pop().unwrap_or_else(|| panic!("the model never received a request for {marker}"))
}

/// Everything the model received outside the system prompt, in order.
fn conversation(request: &Value) -> String {
    messages(request).iter().filter(|m| m["role"] != "system").map(text_of).collect::<Vec<_>>().join("\n")
}

fn system_prompt(request: &Value) -> String {
    messages(request).iter().filter(|m| m["role"] == "system").map(text_of).collect::<Vec<_>>().join("\n")
}

/// The scratchpad component's stored `key` in the session, as `scratchpad show` prints it.
fn stored(db: &Path, key: &str) -> Option<String> {
    let show = scratchpad_json(db, &["show", SESSION]);
    let state = show["state"].as_array().unwrap().iter();
    state.filter(|e| e["plugin"] == "scratchpad" && e["key"] == key).find_map(|e| e["text"].as_str().map(str::to_owned))
}

/// The turn's final text, as `openclaw agent --json` prints it.
fn reply(turn: &Value) -> String {
    turn["result"]["payloads"].as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect()
}

/// The `scratchpad serve` processes under `ancestor` (the gateway), by PID.
fn sidecars(ancestor: u32) -> Vec<u32> {
    let mut parents = std::collections::HashMap::new();
    let mut serves = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let ppid = stat.rsplit_once(") ").and_then(|(_, rest)| rest.split(' ').nth(1)).and_then(|p| p.parse().ok());
        if let Some(ppid) = ppid {
            parents.insert(pid, ppid);
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if args.first().is_some_and(|a| a.ends_with(b"scratchpad")) && args.iter().any(|a| *a == b"serve") {
            serves.push(pid);
        }
    }
    serves.retain(|pid| {
        let mut at = *pid;
        while let Some(&parent) = parents.get(&at) {
            if parent == ancestor {
                return true;
            }
            at = parent;
        }
        false
    });
    serves
}

#[test]
fn openclaw_runs_the_components_through_a_real_turn_loop() {
    let started = Instant::now();
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    let openclaw = OpenClaw::new(root);
    let model = Model::start("chat", root, &script());
    let db = root.join("scratchpad.db");
    std::fs::write(openclaw.workspace().join("big_log.txt"), big_log()).unwrap();
    let package = scratchpad_tests::runtimes::root().join("integrations/openclaw");
    openclaw.configure(&model.url, Some(&package), plugin_config(&db, vec![]));

    let gateway = openclaw.gateway("gateway-1");

    // Turn 1: the model saves a plan and a note with the scratchpad tool, under its API name.
    let turn = openclaw.turn(SESSION_KEY, "start SCRIPT:plan");
    assert!(reply(&turn).contains("SCRIPT-DONE plan after 2"), "{turn}");
    let results = tool_results(&last_request(&model, "SCRIPT:plan"), "SCRIPT:plan");
    assert!(results.len() == 2 && results.iter().all(|r| r.contains("Usage: notes")), "{results:?}");
    assert!(stored(&db, "plan").unwrap().contains(PLAN_MARKER));
    assert!(stored(&db, "notes").unwrap().contains(NOTE_MARKER));
    let tools = last_request(&model, "SCRIPT:plan")["tools"].to_string();
    assert!(tools.contains("\"session_scratchpad\"") && !tools.contains("session.scratchpad\""), "offered directly");
    // Recall: the session is in the project of the agent's workspace, its search tool offered.
    let workspace = openclaw.workspace().canonicalize().unwrap();
    let project = scratchpad_json(&db, &["show", SESSION])["session"]["project"].clone();
    assert_eq!(project, json!(workspace.to_str().unwrap()), "the workspace directory's project");
    assert!(tools.contains("\"recall_search\""), "recall's tools are declared and offered: {tools}");

    // Turn 2: the block comes before the user's message; the guidance is in the system prompt.
    openclaw.turn(SESSION_KEY, "go on SCRIPT:continue");
    let request = last_request(&model, "SCRIPT:continue");
    let text = conversation(&request);
    let block = text.rfind(BLOCK_START).unwrap_or_else(|| panic!("no scratchpad block in turn 2:\n{text}"));
    let message = text.rfind("go on SCRIPT:continue").unwrap();
    assert!(block < message, "the block must come before the user's message");
    assert!(text[block..message].contains(PLAN_MARKER) && text[block..message].contains(NOTE_MARKER));
    assert!(system_prompt(&request).contains(GUIDANCE), "the standing guidance is in the system prompt");
    assert_eq!(request.to_string().matches(GUIDANCE).count(), 1, "the guidance goes once in a model call: {request}");
    assert!(
        system_prompt(&request).contains("session_scratchpad")
            && !system_prompt(&request).contains("session.scratchpad"),
        "the guidance names the tool as the model is offered it"
    );

    // Turn 3: an 89 KB tool result reaches the model as the large-observation store's synthetic observation, and
    // scratchpad_read returns slices of it.
    openclaw.turn(SESSION_KEY, "look SCRIPT:log LOG-PATH=big_log.txt");
    let results = tool_results(&last_request(&model, "SCRIPT:log"), "SCRIPT:log");
    assert_eq!(results.len(), 3, "{results:?}");
    let observation: Value = serde_json::from_str(&results[0]).unwrap_or_else(|e| panic!("{e}: {}", results[0]));
    assert_eq!((observation["size_bytes"].as_u64(), observation["kind"].as_str()), (Some(89_042), Some("text")));
    assert!(observation["summary"].as_str().unwrap().contains("characters omitted"), "{observation}");
    assert!(!results[0].contains("event number 1000"), "the middle of the log never reaches the model");
    assert!(results[1].contains("event number 0") && results[1].len() < 2000, "head: {}", results[1]);
    assert!(results[2].contains("LAST_CRITICAL_EVENT") && results[2].contains("2096"), "grep: {}", results[2]);

    // Turn 4: an append over the notes budget reaches the model as the component's refusal,
    // and a malformed call as its invalid-arguments error; the notes are unchanged.
    openclaw.turn(SESSION_KEY, "more SCRIPT:overbudget");
    let results = tool_results(&last_request(&model, "SCRIPT:overbudget"), "SCRIPT:overbudget");
    assert!(results.iter().any(|r| r.contains("append_notes rejected, notes unchanged")), "{results:?}");
    openclaw.turn(SESSION_KEY, "oops SCRIPT:malformed");
    let results = tool_results(&last_request(&model, "SCRIPT:malformed"), "SCRIPT:malformed");
    assert!(results.iter().any(|r| r.contains("`content` is required")), "{results:?}");
    assert!(!stored(&db, "notes").unwrap().contains("OVERBUDGET"));

    // Compaction through the gateway fires both hooks: the host counts it, and the warning
    // goes into the next prompt build (OpenClaw's compaction hooks only observe).
    let before = scratchpad_json(&db, &["show", SESSION])["session"]["compaction_count"].as_i64().unwrap_or(0);
    run_ok(openclaw.command(&["sessions", "compact", SESSION, "--json"]), "openclaw sessions compact");
    let after = scratchpad_json(&db, &["show", SESSION])["session"]["compaction_count"].as_i64().unwrap_or(0);
    assert_eq!(after, before + 1, "after_compaction counted the compaction");

    // The component host dies between turns: the next turn starts another, with every
    // acknowledged write, and delivers the compaction warning.
    let killed = sidecars(gateway.0.id());
    assert_eq!(killed.len(), 1, "one scratchpad serve under the gateway");
    Command::new("kill").args(["-9", &killed[0].to_string()]).status().unwrap();
    openclaw.turn(SESSION_KEY, "after SCRIPT:aftercompaction");
    let text = conversation(&last_request(&model, "SCRIPT:aftercompaction"));
    assert!(text.contains(WARNING), "the compaction warning is delivered on the next prompt build");
    assert!(text.contains(BLOCK_START) && text.contains(PLAN_MARKER), "the state survived the host's death");
    assert_ne!(sidecars(gateway.0.id()), killed, "a new scratchpad serve");
    drop(gateway);

    // OpenClaw restarted, now with a hostile component: the block is still injected, and a
    // component looping forever ends in an error the turn survives; OpenClaw keeps serving.
    // The plugin imports the shared sidecar client beside it (integrations/sidecar-js).
    let copy = root.join("plugin/integrations/openclaw");
    copy_dir(&package, &copy);
    copy_dir(&package.join("../sidecar-js"), &root.join("plugin/integrations/sidecar-js"));
    // Built here: loaded unsigned, granted what it asks for (injecting, with its storage).
    let probe = json!({ "name": "probe", "path": scratchpad_tests::components::PROBE_PATH,
                        "allowUnsigned": true, "grants": ["inject", "storage", "config"],
                        "config": { "powers": ["inject", "storage", "config"] },
                        "limits": { "call_timeout_ms": 500 } });
    let config = plugin_config(&db, vec![probe]);
    declare_tools(&openclaw, &copy, &config);
    openclaw.configure(&model.url, Some(&copy), config);
    let gateway = openclaw.gateway("gateway-2");
    openclaw.turn(SESSION_KEY, "back SCRIPT:restarted");
    let text = conversation(&last_request(&model, "SCRIPT:restarted"));
    assert!(text.contains(BLOCK_START) && text.contains(PLAN_MARKER), "the block survives an OpenClaw restart");
    assert!(!text.contains(WARNING), "the warning was delivered once");

    let hostile = Instant::now();
    let turn = openclaw.turn(SESSION_KEY, "attack SCRIPT:hostile");
    let results = tool_results(&last_request(&model, "SCRIPT:hostile"), "SCRIPT:hostile");
    assert!(
        results.iter().any(|r| r.contains("component `probe` failed in tool probe.loop: timed out")),
        "{results:?}"
    );
    assert!(reply(&turn).contains("SCRIPT-DONE hostile after 1"), "{turn}");
    eprintln!("hostile turn: {:?}", hostile.elapsed());
    let turn = openclaw.turn(SESSION_KEY, "still there SCRIPT:continue2");
    assert!(reply(&turn).contains("SCRIPT-DONE continue2"), "{turn}");
    assert!(conversation(&last_request(&model, "SCRIPT:continue2")).contains(PLAN_MARKER));

    drop(gateway);

    // The injection never lands in OpenClaw's transcript.
    let store = openclaw.state().join("agents/main/agent/openclaw-agent.sqlite");
    let transcript = transcript_text(&store);
    assert!(transcript.contains("SCRIPT:continue") && !transcript.contains(BLOCK_START));

    // import-openclaw reads the store the real openclaw wrote, once a scratchpad record is in
    // it (written under OpenClaw's own schema and checks).
    append_custom_record(&store, SESSION, "openclaw:scratchpad:plan", "IMPORTED-PLAN from the store");
    let imported = root.join("imported.db");
    let report = scratchpad_json(&imported, &["import-openclaw", openclaw.state().to_str().unwrap()]);
    assert!(report["report"]["sessions"].as_array().unwrap().contains(&json!(SESSION)), "{report}");
    let show = scratchpad_json(&imported, &["show", SESSION]);
    assert!(show["state"].to_string().contains("IMPORTED-PLAN from the store"), "{show}");
    eprintln!("openclaw end-to-end: {:?}", started.elapsed());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_name() == "node_modules" {
            continue;
        }
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Bad plugin config is refused at load with one message naming every offending key, before
/// any process is started or file written.
#[test]
fn bad_plugin_config_is_one_clear_error_naming_every_offending_key() {
    let (node, _) = install();
    let package = scratchpad_tests::runtimes::root().join("integrations/openclaw/src/config.js");
    let script = format!(
        "import {{ resolveConfig }} from {:?};\n\
         try {{ resolveConfig({{ databse: 'x', requestTimeoutMs: 5, components: [{{ path: 7, limits: {{ call_timeout_ms: -1 }} }}] }}); \
               console.log('accepted'); }}\n\
         catch (e) {{ console.log(e.message); }}",
        package.to_str().unwrap()
    );
    let output = Command::new(node).args(["--input-type=module", "-e", &script]).output().unwrap();
    let message = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "unknown key `databse`",
        "`requestTimeoutMs` must be an integer >= 100",
        "`components[0].name` must be a non-empty string",
        "`components[0].path` must be a non-empty string",
        "`components[0].limits.call_timeout_ms` must be a positive integer",
    ] {
        assert!(message.contains(needle), "missing {needle:?} in {message}");
    }
}
