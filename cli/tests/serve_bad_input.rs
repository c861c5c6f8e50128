//! A bad byte must not kill the JSON-RPC sidecar (hardening against bad input): this test is the client,
//! a separate process writing raw bytes to `scratchpad serve`'s stdin, as a buggy runtime
//! would. A line that is not UTF-8 or not JSON gets a parse error with `"id": null`, and the
//! next request is still answered.

use serde_json::{Value, json};

mod support;

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
