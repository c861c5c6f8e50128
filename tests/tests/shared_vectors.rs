//! The same scratchpad component in three runtimes : the shared test vectors
//! (`tests/embed/vectors/scratchpad.json`, format in `tests/embed/README.md`) are replayed by
//! the real Rust host over SQLite, by the Node host on jco (`tests/embed/node`) and by the
//! Python host on wasmtime-py (`tests/embed/python`), each run here as a child process. Every
//! host must give exactly the expected answers; a divergence fails the test that found it.

use std::path::{Path, PathBuf};
use std::process::Command;

use scratchpad_host::{Encoding, Error, Host, Observation, Origin, ToolCall, TurnContext};
use scratchpad_tests::{Fixture, runtimes, scratchpad};
use serde_json::{Value, json};

fn vectors_path() -> PathBuf {
    runtimes::root().join("tests/embed/vectors/scratchpad.json")
}

fn vectors_file() -> Value {
    let text = std::fs::read_to_string(vectors_path()).expect("reading the vectors");
    serde_json::from_str(&text).expect("the vectors file is JSON")
}

fn vectors() -> Vec<Value> {
    vectors_file()["vectors"].as_array().expect("`vectors` is an array").clone()
}

/// One step whose answer is not the expected one.
#[derive(Debug)]
struct Divergence {
    vector: String,
    step: usize,
    expected: Value,
    actual: Value,
}

fn field<'a>(step: &'a Value, name: &str) -> &'a str {
    step[name].as_str().unwrap_or_else(|| panic!("step {step} has no string `{name}`"))
}

fn turn(step: &Value) -> TurnContext {
    TurnContext::new(field(step, "session"), field(step, "turn"))
}

fn injections<'a>(injections: impl IntoIterator<Item = &'a scratchpad_host::Injection>) -> Value {
    injections.into_iter().map(|i| json!({"placement": i.placement.as_str(), "text": i.text})).collect()
}

/// What the Rust host answers to one step, in the vectors' JSON shape.
async fn run_step(host: &Host, step: &Value) -> scratchpad_host::Result<Value> {
    Ok(match field(step, "op") {
        "create_session" => {
            let origin: Origin = serde_json::from_value(step.get("origin").cloned().unwrap_or(json!({"kind": "new"})))
                .expect("a valid origin");
            json!({"guidance": injections(&host.create_session(field(step, "session"), origin).await?)})
        }
        "tools" => {
            let names: Vec<String> = host.tools(&turn(step)).await?.into_iter().map(|t| t.name).collect();
            json!({"tools": names})
        }
        "call_tool" => {
            let arguments = match step.get("arguments_text") {
                Some(text) => text.as_str().expect("`arguments_text` is a string").to_owned(),
                None => step["arguments"].to_string(),
            };
            match host.call_tool(&turn(step), field(step, "name"), &arguments).await {
                Ok(output) => json!({"ok": output.content}),
                Err(Error::Tool { error, .. }) => {
                    json!({"error": {"variant": error.kind.as_str(), "message": error.message}})
                }
                Err(Error::UnknownTool(_)) => json!({"host_error": "unknown-tool"}),
                Err(other) => return Err(other),
            }
        }
        "before_query" => {
            // The prompt starts with the session's standing guidance; the rest is this turn's.
            let guidance = host.session(field(step, "session")).await?.guidance.len();
            let prompt = host.before_query(&turn(step), field(step, "message")).await?;
            json!({"injections": injections(&prompt.injections[guidance..])})
        }
        "after_response" => {
            host.after_response(&turn(step), field(step, "text")).await?;
            Value::Null
        }
        "before_compaction" => {
            let warnings = host.before_compaction(&turn(step)).await?;
            json!({"warning": warnings.first().map(|w| w.text.clone())})
        }
        "after_compaction" => {
            host.after_compaction(&turn(step)).await?;
            Value::Null
        }
        "after_tool_result" => {
            let call = &step["call"];
            let call =
                ToolCall::new(field(call, "name"), field(call, "arguments"), call["step"].as_u64().unwrap() as u32);
            let view =
                host.after_tool_result(&turn(step), &call, &Observation::text(field(step, "observation"))).await?;
            json!({"replacement": view.replacement})
        }
        "state" => {
            let entries = host.state(field(step, "session")).await?;
            let state: serde_json::Map<String, Value> = entries
                .into_iter()
                .filter(|e| e.plugin == "scratchpad")
                .map(|e| (e.key, Value::String(String::from_utf8(e.value).expect("stored text is UTF-8"))))
                .collect();
            json!({"state": state})
        }
        other => panic!("unknown op `{other}`"),
    })
}

/// Replays one vector on a fresh host over a fresh SQLite file; its divergences.
async fn replay(vector: &Value) -> Vec<Divergence> {
    let name = vector["name"].as_str().expect("every vector has a name").to_owned();
    let steps = vector["steps"].as_array().expect("every vector has steps");
    let diverged = |step: usize, expected: &Value, actual: Value| Divergence {
        vector: name.clone(),
        step,
        expected: expected.clone(),
        actual,
    };
    let mut plugin = scratchpad(vector["config"].clone());
    if let Some(quota) = vector.get("limits").and_then(|l| l["storage_quota_bytes"].as_u64()) {
        plugin.limits.storage_quota_bytes = quota;
    }
    let fx = Fixture::new();
    let (host, loaded) = match Host::open(fx.config(vec![plugin])).await {
        Ok(host) => {
            let manifest: Vec<String> = host.plugins()[0].tools.iter().map(|t| t.name.clone()).collect();
            (Some(host), json!({"manifest": manifest}))
        }
        Err(Error::Load { message, .. }) => {
            let refused = message.strip_prefix("it refused its configuration: ").unwrap_or(&message);
            (None, json!({"load_error": refused}))
        }
        Err(other) => panic!("opening the host for \"{name}\": {other}"),
    };
    let first_is_load = steps.first().is_some_and(|s| s["op"] == "load");
    if first_is_load && loaded != steps[0]["expect"] {
        return vec![diverged(0, &steps[0]["expect"], loaded)];
    }
    let Some(host) = host else {
        let rest = steps.len() - usize::from(first_is_load);
        return if rest > 0 { vec![diverged(0, &json!("the component to load"), loaded)] } else { Vec::new() };
    };
    let mut divergences = Vec::new();
    for (index, step) in steps.iter().enumerate().skip(usize::from(first_is_load)) {
        let actual = match run_step(&host, step).await {
            Ok(actual) => actual,
            Err(error) => {
                divergences.push(diverged(index, step.get("expect").unwrap_or(&Value::Null), json!(error.to_string())));
                break;
            }
        };
        if let Some(expected) = step.get("expect")
            && *expected != actual
        {
            divergences.push(diverged(index, expected, actual));
        }
    }
    divergences
}

fn report(divergences: &[Divergence]) -> String {
    divergences
        .iter()
        .map(|d| format!("\"{}\", step {}:\n  expected {}\n  actual   {}", d.vector, d.step, d.expected, d.actual))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A copy of the vectors in which one expected tool answer is wrong, in a temp dir.
fn divergent_vectors(dir: &Path) -> PathBuf {
    let mut file = vectors_file();
    let step = file["vectors"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .flat_map(|v| v["steps"].as_array_mut().unwrap())
        .find(|s| s["expect"].get("ok").is_some())
        .expect("a vector with a successful tool call");
    step["expect"]["ok"] = json!("an answer no host gives");
    let path = dir.join("divergent.json");
    std::fs::write(&path, serde_json::to_string_pretty(&file).unwrap()).unwrap();
    path
}

/// The `summary: {...}` line a replay prints last, and whether it exited successfully.
fn replay_in(mut command: Command, vectors: &Path) -> (bool, Value, String) {
    let output = command.arg("--wasm").arg(runtimes::component()).arg("--vectors").arg(vectors).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let transcript = format!("{command:?}\n--- stdout\n{stdout}--- stderr\n{stderr}");
    let summary = stdout
        .lines()
        .find_map(|line| line.strip_prefix("summary: "))
        .unwrap_or_else(|| panic!("no summary line:\n{transcript}"));
    (output.status.success(), serde_json::from_str(summary).expect("the summary is JSON"), transcript)
}

fn node_replay() -> Command {
    let mut node = runtimes::node();
    node.arg("replay.mjs").arg("--out").arg(runtimes::generated_dir("jco"));
    node
}

fn python_replay() -> Command {
    let mut python = runtimes::python();
    python.arg(runtimes::root().join("tests/embed/python/replay.py"));
    python
}

/// Asserts that a replay ran every vector and found no divergence.
fn assert_agrees(command: Command, host: &str) {
    let (success, summary, transcript) = replay_in(command, &vectors_path());
    let count = vectors().len() as u64;
    assert_eq!(summary["host"], host, "{transcript}");
    assert_eq!(summary["vectors"], count, "every vector was replayed:\n{transcript}");
    assert_eq!(summary["failed"], 0, "the {host} host diverged from the vectors:\n{transcript}");
    assert!(success, "{transcript}");
}

/// Asserts that a replay of vectors with one wrong expectation fails, naming that one vector.
fn assert_divergence_fails(command: Command) {
    let dir = tempfile::tempdir().unwrap();
    let (success, summary, transcript) = replay_in(command, &divergent_vectors(dir.path()));
    assert!(!success, "a divergence must fail the replay:\n{transcript}");
    assert_eq!(summary["failed"], 1, "{transcript}");
    assert!(transcript.contains("an answer no host gives"), "the divergence is shown:\n{transcript}");
}

#[tokio::test]
async fn the_rust_host_gives_every_answer_the_shared_vectors_expect() {
    assert_eq!(vectors_file()["tokenizer"], Encoding::default().as_str(), "token counts need the same encoding");
    let vectors = vectors();
    assert!(vectors.len() >= 20, "the vectors file lost vectors: {}", vectors.len());
    let mut divergences = Vec::new();
    for vector in &vectors {
        divergences.extend(replay(vector).await);
    }
    assert!(divergences.is_empty(), "the Rust host diverged from the vectors:\n{}", report(&divergences));
}

#[tokio::test]
async fn a_wrong_expectation_fails_the_rust_replay() {
    let dir = tempfile::tempdir().unwrap();
    let file: Value = serde_json::from_str(&std::fs::read_to_string(divergent_vectors(dir.path())).unwrap()).unwrap();
    let mut divergences = Vec::new();
    for vector in file["vectors"].as_array().unwrap() {
        divergences.extend(replay(vector).await);
    }
    assert_eq!(divergences.len(), 1, "{}", report(&divergences));
    assert_eq!(divergences[0].expected["ok"], "an answer no host gives");
}

#[test]
fn node_on_jco_gives_the_same_answers_as_the_rust_host() {
    assert_agrees(node_replay(), "node");
}

#[test]
fn a_wrong_expectation_fails_the_node_replay() {
    assert_divergence_fails(node_replay());
}

#[test]
fn python_on_wasmtime_py_gives_the_same_answers_as_the_rust_host() {
    assert_agrees(python_replay(), "python");
}

#[test]
fn a_wrong_expectation_fails_the_python_replay() {
    assert_divergence_fails(python_replay());
}

#[test]
fn the_vectors_cover_every_action_tool_operation_hook_placement_refusal_and_the_quota() {
    let text = std::fs::read_to_string(vectors_path()).unwrap();
    let vectors = vectors();
    let steps: Vec<&Value> = vectors.iter().flat_map(|v| v["steps"].as_array().unwrap()).collect();
    let args = |tool: &str, key: &str| -> Vec<String> {
        steps
            .iter()
            .filter(|s| s["op"] == "call_tool" && s["name"] == tool)
            .filter_map(|s| s["arguments"][key].as_str().map(str::to_owned))
            .collect()
    };
    for action in ["set_notes", "append_notes", "set_plan", "refs.add", "refs.remove", "refs.set"] {
        assert!(args("session.scratchpad", "action").iter().any(|a| a == action), "no vector calls {action}");
    }
    assert!(args("session.scratchpad", "mode").iter().any(|m| m == "append"), "no vector of 001's legacy form");
    for operation in ["find_replace", "append", "prepend", "delete"] {
        assert!(args("update_notepad", "operation").iter().any(|o| o == operation), "no update_notepad {operation}");
    }
    for tool in ["read_notepad", "write_notepad"] {
        assert!(steps.iter().any(|s| s["name"] == tool), "no vector calls {tool}");
    }
    for op in [
        "load",
        "create_session",
        "tools",
        "call_tool",
        "before_query",
        "after_response",
        "before_compaction",
        "after_compaction",
        "after_tool_result",
        "state",
    ] {
        assert!(steps.iter().any(|s| s["op"] == op), "no vector step is `{op}`");
    }
    for needle in [
        "\"prepend-context\"",
        "\"append-context\"",
        "\"prepend-system\"",
        "\"append-system\"",
        "\"invalid-arguments\"",
        "\"rejected\"",
        "\"not-found\"",
        "\"unknown-tool\"",
        "storage quota exceeded",
        "\"load_error\"",
        "\"kind\": \"spawn\"",
        "\"kind\": \"fork\"",
        "truncated to",
        "[Hint: ",
        "tokenBudget",
    ] {
        assert!(text.contains(needle), "no vector covers {needle}");
    }
}
