//! A bad byte must not kill the JSON-RPC sidecar (hardening against bad input): this test is the client,
//! a separate process writing raw bytes to `scratchpad serve`'s stdin, as a buggy runtime
//! would. A line that is not UTF-8 or not JSON gets a parse error with `"id": null`, and the
//! next request is still answered.

use serde_json::{Value, json};

use crate::support;

use support::Process;

/// `scratchpad serve` on the database `db`.
fn sidecar(db: &std::path::Path) -> Process {
    Process::start(&["--db", db.to_str().unwrap(), "serve"])
}

#[test]
fn a_line_of_invalid_utf8_gets_a_parse_error_and_the_sidecar_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut sidecar = sidecar(&dir.path().join("bad.db"));

    sidecar.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"plugins\xff\xfe\"}\n");
    let error = sidecar.read();
    assert_eq!(error["id"], Value::Null, "{error}");
    assert!(error.as_object().unwrap().contains_key("id"), "JSON-RPC requires \"id\": null: {error}");
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("UTF-8"), "{error}");

    sidecar.send(b"{not json\n");
    let error = sidecar.read();
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (Value::Null, json!(-32700)), "{error}");

    // An id of a type JSON-RPC does not allow cannot be echoed: null.
    sidecar.send(b"{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"plugins\"}\n");
    let error = sidecar.read();
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (Value::Null, json!(-32600)), "{error}");

    sidecar
        .send(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.create\",\"params\":{\"session\":\"after-bad\"}}\n");
    let created = sidecar.read();
    assert_eq!(created["id"], 2, "{created}");
    assert!(created["result"]["guidance"].is_array(), "the next request is served: {created}");

    // Closing stdin still ends the sidecar cleanly.
    assert!(sidecar.close());
}

#[test]
fn bad_project_keys_and_queries_are_clear_errors_that_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut sidecar = sidecar(&dir.path().join("recall.db"));
    let mut ask = |id: u64, method: &str, params: Value| {
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        sidecar.send(format!("{request}\n").as_bytes());
        sidecar.read()
    };
    for (id, project) in [(1, json!("")), (2, json!("a\u{7}b")), (3, json!("x".repeat(1025))), (4, json!(7))] {
        let refused = ask(id, "session.create", json!({ "session": format!("s{id}"), "project": project }));
        assert!(refused["error"]["message"].is_string(), "{refused}");
        let show = ask(100 + id, "session.show", json!({ "session": format!("s{id}") }));
        assert!(show["error"]["message"].as_str().unwrap().contains("does not exist"), "nothing created: {show}");
    }
    let created = ask(10, "session.create", json!({ "session": "ok", "project": "acme/web" }));
    assert!(created["result"]["guidance"].is_array(), "{created}");
    let shown = ask(11, "session.show", json!({ "session": "ok" }));
    assert_eq!(shown["result"]["session"]["project"], "acme/web", "{shown}");
    for (id, query) in [(20, json!("")), (21, json!("*** ()")), (22, json!("w ".repeat(500_000)))] {
        let refused = ask(id, "recall.search", json!({ "project": "acme/web", "query": query }));
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    let hits = ask(30, "recall.search", json!({ "project": "acme/web", "query": "NEAR(a b) title:x" }));
    assert_eq!(hits["result"]["hits"], json!([]), "{hits}");
    let preview = ask(31, "recall.preview", json!({ "project": "acme/web" }));
    assert!(preview["result"]["rendered"].is_string(), "{preview}");
}

#[test]
fn a_directory_names_its_checkout_and_a_missing_one_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let mut sidecar = sidecar(&dir.path().join("dirs.db"));
    let mut ask = |id: u64, params: Value| {
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": "project.of_dir", "params": params });
        sidecar.send(format!("{request}\n").as_bytes());
        sidecar.read()
    };
    let found = ask(1, json!({ "dir": repo.join("src") }));
    assert_eq!(found["result"]["project"], repo.to_str().unwrap(), "{found}");
    for (id, bad) in [(2, json!("relative/dir")), (3, json!("/no/such/dir")), (4, json!(7))] {
        let refused = ask(id, json!({ "dir": bad }));
        assert!(refused["error"]["message"].is_string(), "{refused}");
    }
}
