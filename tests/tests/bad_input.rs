//! Bad input, table-driven: tool arguments, WIT-level values (ids, keys), sessions, plugin
//! configuration and config files. Each case gets a clear error (its kind and a message naming
//! what was wrong) and leaves the database byte-for-byte unchanged. The CLI's table is
//! `cli/tests/bad_input_cli.rs` (it needs the `scratchpad` binary).

use std::path::Path;

use scratchpad_host::{Error, Host, HostConfig, Observation, Origin, ToolCall};
use scratchpad_tests::{Fixture, dump_all, probe, scratchpad, turn};
use serde_json::{Value, json};

/// The scratchpad's configuration: notes 100 chars, so a 90-char note plus a 10-char append
/// (joined by a newline) is one char over.
fn config() -> Value {
    json!({ "notesMaxChars": 100, "planMaxChars": 50, "refsMaxItems": 3 })
}

/// One bad input.
enum Attempt {
    /// `call_tool` in session `s`, turn `t1`.
    Tool(&'static str, String),
    /// `call_tool(session, turn, tool, "{}")`.
    ToolAt(String, String, &'static str),
    Query(String, String),
    Tools(String),
    State(String),
    Compaction(String),
    ToolResult(String),
    Create(String, Origin),
    /// A host on the same database with this scratchpad configuration.
    Open(Value),
    /// `HostConfig::from_toml_str`.
    Toml(&'static str),
    /// `HostConfig::from_toml_file` of these bytes.
    TomlFile(&'static [u8]),
}

use Attempt::*;

fn long(n: usize) -> String {
    "k".repeat(n)
}

fn tool(name: &'static str, arguments: impl Into<String>) -> Attempt {
    Tool(name, arguments.into())
}

fn scratchpad_args(arguments: Value) -> Attempt {
    Tool("session.scratchpad", arguments.to_string())
}

/// (case, attempt, expected error code, text the message must contain).
fn cases() -> Vec<(&'static str, Attempt, &'static str, String)> {
    let nested = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let ten = "0123456789";
    let s = || "s".to_owned();
    let rows: Vec<(&str, Attempt, &str, &str)> = vec![
        // Tool arguments of session.scratchpad: malformed JSON, wrong types, unknown actions.
        ("malformed JSON", tool("session.scratchpad", "{oops"), "invalid-arguments", "not valid JSON"),
        ("an array", tool("session.scratchpad", "[1]"), "invalid-arguments", "JSON object, got an array"),
        ("a string", tool("session.scratchpad", r#""set_notes""#), "invalid-arguments", "got a string"),
        (
            "trailing garbage",
            tool("session.scratchpad", r#"{"action":"set_plan","content":"x"} x"#),
            "invalid-arguments",
            "trailing characters",
        ),
        ("nested 200 deep", tool("session.scratchpad", nested.clone()), "invalid-arguments", "recursion limit"),
        (
            "lone surrogate",
            tool("session.scratchpad", r#"{"action":"set_notes","content":"\ud800"}"#),
            "invalid-arguments",
            "hex escape",
        ),
        ("blank arguments", tool("session.scratchpad", " "), "invalid-arguments", "`action` is required"),
        ("no action", scratchpad_args(json!({})), "invalid-arguments", "`action` is required"),
        ("unknown action", scratchpad_args(json!({"action": "explode"})), "invalid-arguments", "got \"explode\""),
        (
            "action a number",
            scratchpad_args(json!({"action": 3})),
            "invalid-arguments",
            "`action` must be a string, got a number",
        ),
        ("no content", scratchpad_args(json!({"action": "set_notes"})), "invalid-arguments", "`content` is required"),
        (
            "content a number",
            scratchpad_args(json!({"action": "set_plan", "content": 5})),
            "invalid-arguments",
            "`content` must be a string",
        ),
        (
            "content null",
            scratchpad_args(json!({"action": "append_notes", "content": null})),
            "invalid-arguments",
            "`content` must be a string, got null",
        ),
        (
            "empty append",
            scratchpad_args(json!({"action": "append_notes", "content": ""})),
            "invalid-arguments",
            "must not be empty",
        ),
        (
            "append one over",
            scratchpad_args(json!({"action": "append_notes", "content": ten})),
            "rejected",
            "(101 chars) would exceed the 100 char budget",
        ),
        (
            "blank ref",
            scratchpad_args(json!({"action": "refs.add", "ref": "  "})),
            "invalid-arguments",
            "`ref` must be a non-empty",
        ),
        (
            "ref an object",
            scratchpad_args(json!({"action": "refs.add", "ref": {}})),
            "invalid-arguments",
            "`ref` must be a string, got an object",
        ),
        (
            "remove a missing ref",
            scratchpad_args(json!({"action": "refs.remove", "ref": "never"})),
            "not-found",
            "\"never\" is not in refs",
        ),
        (
            "items a string",
            scratchpad_args(json!({"action": "refs.set", "items": "a,b"})),
            "invalid-arguments",
            "`items` must be an array",
        ),
        ("no items", scratchpad_args(json!({"action": "refs.set"})), "invalid-arguments", "`items` is required"),
        (
            "unknown mode",
            scratchpad_args(json!({"content": "x", "mode": "sideways"})),
            "invalid-arguments",
            "got \"sideways\"",
        ),
        (
            "mode a number",
            scratchpad_args(json!({"content": "x", "mode": 7})),
            "invalid-arguments",
            "`mode` must be a string",
        ),
        (
            "legacy append one over",
            scratchpad_args(json!({"content": ten, "mode": "append"})),
            "rejected",
            "Append would exceed 100 char budget",
        ),
        // The notepad tools.
        (
            "unknown operation",
            tool("update_notepad", r#"{"operation":"explode"}"#),
            "invalid-arguments",
            "`operation` must be one of",
        ),
        ("no operation", tool("update_notepad", "{}"), "invalid-arguments", "`operation` is required"),
        (
            "empty find",
            tool("update_notepad", r#"{"operation":"find_replace","find":"","replace":"y"}"#),
            "invalid-arguments",
            "`find` must not be empty",
        ),
        (
            "find absent",
            tool("update_notepad", r#"{"operation":"find_replace","find":"zzz","replace":"y"}"#),
            "not-found",
            "not found in the notepad",
        ),
        (
            "replace_all a string",
            tool("update_notepad", r#"{"operation":"find_replace","find":"x","replace":"y","replace_all":"yes"}"#),
            "invalid-arguments",
            "`replace_all` must be true or false",
        ),
        (
            "replace over budget",
            tool("update_notepad", r#"{"operation":"find_replace","find":"x","replace":"xy","replace_all":true}"#),
            "rejected",
            "notepad unchanged",
        ),
        (
            "prepend one over",
            tool("update_notepad", format!(r#"{{"operation":"prepend","content":"{ten}"}}"#)),
            "rejected",
            "(101 chars)",
        ),
        (
            "write content a list",
            tool("write_notepad", r#"{"content":["a"]}"#),
            "invalid-arguments",
            "`content` must be a string, got an array",
        ),
        ("read malformed", tool("read_notepad", "["), "invalid-arguments", "not valid JSON"),
        // Unknown tools.
        ("misspelt tool", tool("session.scratchpadd", "{}"), "unknown-tool", "session.scratchpadd"),
        ("empty tool name", tool("", "{}"), "unknown-tool", "no loaded plugin offers a tool named ``"),
        ("another plugin's verb", tool("p.explode", "{}"), "unknown-tool", "p.explode"),
        // WIT-level values: ids and keys, each one past its limit.
        ("empty session id", Create(String::new(), Origin::New), "invalid-input", "session id: must not be empty"),
        (
            "session id of 257 bytes",
            Create(long(257), Origin::New),
            "invalid-input",
            "is 257 bytes long; the limit is 256",
        ),
        ("control char in id", Create("a\nb".into(), Origin::New), "invalid-input", "control characters"),
        (
            "empty turn id",
            ToolAt(s(), String::new(), "session.scratchpad"),
            "invalid-input",
            "turn id: must not be empty",
        ),
        (
            "turn id of 257 bytes",
            ToolAt(s(), long(257), "session.scratchpad"),
            "invalid-input",
            "turn id: is 257 bytes",
        ),
        ("query session of 257 bytes", Query(long(257), "t1".into()), "invalid-input", "session id: is 257 bytes"),
        (
            "key of 257 bytes",
            tool("p.write", json!({"key": long(257), "value": "v"}).to_string()),
            "failed",
            "key of 257 bytes is longer than the 256-byte limit",
        ),
        ("empty key", tool("p.write", r#"{"key":"","value":"v"}"#), "failed", "keys must not be empty"),
        ("probe arguments not JSON", tool("p.write", "{"), "invalid-arguments", "EOF"),
        // Unknown sessions, duplicates, missing parents.
        (
            "call in a missing session",
            ToolAt("nope".into(), "t1".into(), "session.scratchpad"),
            "session-not-found",
            "`nope` does not exist",
        ),
        ("query a missing session", Query("nope".into(), "t1".into()), "session-not-found", "`nope`"),
        ("tools of a missing session", Tools("nope".into()), "session-not-found", "`nope`"),
        ("state of a missing session", State("nope".into()), "session-not-found", "`nope`"),
        ("state of an empty session id", State(String::new()), "invalid-input", "session id: must not be empty"),
        ("compaction of a missing session", Compaction("nope".into()), "session-not-found", "`nope`"),
        ("tool result in a missing session", ToolResult("nope".into()), "session-not-found", "`nope`"),
        ("duplicate session", Create(s(), Origin::New), "session-exists", "session `s` already exists"),
        (
            "fork of a missing parent",
            Create("child".into(), Origin::Fork { parent: "ghost".into() }),
            "session-not-found",
            "`ghost`",
        ),
        (
            "spawn of a missing parent",
            Create("child".into(), Origin::Spawn { parent: "ghost".into(), copy: true }),
            "session-not-found",
            "`ghost`",
        ),
        // Plugin configuration, on the same database.
        (
            "limit of zero",
            Open(json!({"notesMaxChars": 0})),
            "load-refused",
            "`notesMaxChars` must be an integer from 1",
        ),
        ("negative limit", Open(json!({"refsMaxItems": -1})), "load-refused", "`refsMaxItems`"),
        ("limit a string", Open(json!({"planMaxChars": "50"})), "load-refused", "`planMaxChars`"),
        ("unknown config key", Open(json!({"colour": "blue"})), "load-refused", "unknown key `colour`"),
        ("unknown placement", Open(json!({"placement": "top"})), "load-refused", "`placement` must be one of"),
        ("unknown surface", Open(json!({"surfaces": ["notes"]})), "load-refused", "`surfaces`"),
        ("config not an object", Open(json!([1])), "load-refused", "must be a JSON object"),
        // Config files.
        ("not TOML", Toml("[[["), "config", "not valid config TOML"),
        ("misspelt key", Toml("databse = \"x\""), "config", "unknown field `databse`"),
        (
            "zero timeout",
            Toml("[limits]\ncall_timeout_ms = 0"),
            "config",
            "limits.call_timeout_ms must be greater than 0",
        ),
        ("negative memory", Toml("[limits]\nmemory_bytes = -1"), "config", "memory_bytes"),
        ("timeout a string", Toml("[limits]\ncall_timeout_ms = \"100\""), "config", "call_timeout_ms"),
        (
            "quota past u64",
            Toml("[limits]\nstorage_quota_bytes = 18446744073709551616"),
            "config",
            "not valid config TOML",
        ),
        ("unknown tokenizer", Toml("tokenizer = \"gpt2\""), "config", "unknown variant `gpt2`"),
        (
            "no such embedded plugin",
            Toml("[[plugin]]\nname = \"nowhere\""),
            "config",
            "no embedded component is named `nowhere`",
        ),
        (
            "duplicate plugin names",
            Toml("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n[[plugin]]\nname = \"a\"\npath = \"b.wasm\""),
            "config",
            "two plugins are named `a`",
        ),
        ("empty plugin name", Toml("[[plugin]]\nname = \"\"\npath = \"x.wasm\""), "config", "empty name"),
        ("zero concurrency", Toml("max_concurrent_calls = 0"), "config", "max_concurrent_calls must be at least 1"),
        (
            "zero output cap",
            Toml("[[plugin]]\nname = \"scratchpad\"\n[plugin.limits]\noutput_bytes = 0"),
            "config",
            "output_bytes must be greater than 0",
        ),
        ("invalid UTF-8 file", TomlFile(b"database = \"\xff\xfe\"\n"), "config", "UTF-8"),
    ];
    rows.into_iter().map(|(name, attempt, code, needle)| (name, attempt, code, needle.to_owned())).collect()
}

/// Runs one attempt; `Err((code, message))` when it failed.
async fn attempt(fx: &Fixture, host: &Host, attempt: Attempt) -> Result<(), (String, String)> {
    let api = |e: Error| (e.code().to_owned(), e.to_string());
    let config_error = |e: anyhow::Error| ("config".to_owned(), format!("{e:#}"));
    match attempt {
        Tool(name, arguments) => host.call_tool(&turn("s", "t1"), name, &arguments).await.map(drop).map_err(api),
        ToolAt(session, turn_id, name) => {
            host.call_tool(&turn(&session, &turn_id), name, "{}").await.map(drop).map_err(api)
        }
        Query(session, turn_id) => host.before_query(&turn(&session, &turn_id), "hi").await.map(drop).map_err(api),
        Tools(session) => host.tools(&turn(&session, "t1")).await.map(drop).map_err(api),
        State(session) => host.state(&session).await.map(drop).map_err(api),
        Compaction(session) => host.after_compaction(&turn(&session, "t1")).await.map_err(api),
        ToolResult(session) => {
            let call = ToolCall::new("fs_read", "{}", 1);
            host.after_tool_result(&turn(&session, "t1"), &call, &Observation::text("x")).await.map(drop).map_err(api)
        }
        Create(id, origin) => host.create_session(&id, origin).await.map(drop).map_err(api),
        Open(config) => Host::open(fx.config(vec![scratchpad(config)])).await.map(drop).map_err(api),
        Toml(text) => HostConfig::from_toml_str(text, Path::new("/etc/agent")).map(drop).map_err(config_error),
        TomlFile(bytes) => {
            let path = fx.dir.path().join("bad.toml");
            std::fs::write(&path, bytes).unwrap();
            HostConfig::from_toml_file(&path).map(drop).map_err(config_error)
        }
    }
}

/// A host with the scratchpad and a probe, session `s` in turn `t1` with 90 chars of notes,
/// a plan, two refs and a probe key.
async fn seeded(fx: &Fixture) -> Host {
    let host = fx.open(vec![scratchpad(config()), probe("probe", "p")]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    let calls = [
        ("session.scratchpad", json!({"action": "set_notes", "content": "x".repeat(90)})),
        ("session.scratchpad", json!({"action": "set_plan", "content": "1. hold"})),
        ("session.scratchpad", json!({"action": "refs.set", "items": ["a.rs", "b.rs"]})),
        ("p.write", json!({"key": "kept", "value": "1"})),
    ];
    for (name, arguments) in calls {
        host.call_tool(&t, name, &arguments.to_string()).await.unwrap();
    }
    host
}

#[tokio::test]
async fn every_bad_input_gets_a_clear_error_and_changes_nothing() {
    let fx = Fixture::new();
    let host = seeded(&fx).await;
    let cases = cases();
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut failures = Vec::new();
    for (name, input, code, needle) in cases {
        let before = dump_all(&fx.db());
        let outcome = attempt(&fx, &host, input).await;
        if dump_all(&fx.db()) != before {
            failures.push(format!("{name}: the stored state changed"));
        }
        match outcome {
            Ok(()) => failures.push(format!("{name}: accepted")),
            Err((got, message)) if got != code || !message.contains(&needle) => {
                failures.push(format!("{name}: expected {code} containing {needle:?}, got {got}: {message}"))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{} bad inputs misbehaved:\n{}", failures.len(), failures.join("\n"));
}

#[tokio::test]
async fn the_same_inputs_one_step_inside_each_limit_are_accepted() {
    let fx = Fixture::new();
    let host = seeded(&fx).await;
    let t = turn("s", "t1");
    // 90 chars + newline + 9 chars is exactly the 100-char budget.
    let exact = json!({"action": "append_notes", "content": "012345678"}).to_string();
    let out = host.call_tool(&t, "session.scratchpad", &exact).await.unwrap();
    assert!(out.content.contains("notes 100/100 chars"), "{}", out.content);
    let id = "i".repeat(256);
    host.create_session(&id, Origin::New).await.unwrap();
    host.call_tool(&turn(&id, &"t".repeat(256)), "p.write", &json!({"key": long(256), "value": "v"}).to_string())
        .await
        .unwrap();
    assert_eq!(host.state(&id).await.unwrap().iter().filter(|e| e.key.len() == 256).count(), 1);
}
