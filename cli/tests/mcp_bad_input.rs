//! Bad input to `scratchpad mcp` on stdio (hardening against bad input): this test is the client, a
//! separate process writing raw bytes to the server's stdin. Every bad line gets an answer —
//! a client waiting on it must never hang — with `"id": null` whenever the id cannot be read,
//! and the server keeps serving. JSON-RPC batches follow the negotiated protocol version:
//! refused under 2025-06-18, answered as one array under 2025-03-26.

use serde_json::{Value, json};

use crate::support;

use support::Process;

/// An initialized MCP server (a raw-bytes client's view of it).
struct Server(Process);

impl Server {
    /// An initialized MCP server on a fresh database, speaking protocol `version`.
    fn start(dir: &std::path::Path, version: &str) -> Server {
        let db = dir.join("mcp.db");
        let mut server = Server(Process::start(&["--db", db.to_str().unwrap(), "mcp", "--session", "bad-input"]));
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
        let answer = server.answer(format!("{initialize}\n").as_bytes());
        assert_eq!(answer["result"]["protocolVersion"], version, "{answer}");
        server.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        server
    }

    fn send(&mut self, bytes: &[u8]) {
        self.0.send(bytes);
    }

    fn read(&self) -> Value {
        self.0.read()
    }

    /// The server's answer to a line of `bytes`.
    fn answer(&mut self, bytes: &[u8]) -> Value {
        self.send(bytes);
        self.read()
    }

    fn assert_alive(&mut self, id: i64) {
        let pong = self.answer(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n").as_bytes());
        assert_eq!((pong["id"].clone(), pong["result"].clone()), (json!(id), json!({})), "{pong}");
    }
}

/// Asserts `answer` is an error with `code` and an `id` member equal to `id`.
fn assert_error(answer: &Value, code: i64, id: Value) {
    assert!(answer.as_object().unwrap().contains_key("id"), "an error always has an id member: {answer}");
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], code, "{answer}");
}

#[test]
fn invalid_utf8_and_invalid_json_get_parse_errors_with_a_null_id_and_the_server_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), "2025-06-18");

    let answer = server.answer(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\xff\"}\n");
    assert_error(&answer, -32700, Value::Null);
    server.assert_alive(2);

    assert_error(&server.answer(b"{\"jsonrpc\":\"2.0\",\"id\":3,\n"), -32700, Value::Null);
    assert_error(&server.answer(b"[1, 2\n"), -32700, Value::Null);
    server.assert_alive(4);
}

#[test]
fn an_invalid_request_gets_an_error_with_its_id_or_null() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path(), "2025-06-18");

    // Unreadable ids: null.
    assert_error(&server.answer(b"{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}\n"), -32600, Value::Null);
    assert_error(&server.answer(b"\"just a string\"\n"), -32600, Value::Null);
    assert_error(&server.answer(b"{\"id\":5}\n"), -32600, json!(5));
    // A readable id with bad params: that id.
    let answer = server.answer(b"{\"jsonrpc\":\"2.0\",\"id\":\"call-6\",\"method\":\"tools/call\",\"params\":5}\n");
    assert_error(&answer, -32602, json!("call-6"));
    server.assert_alive(7);
}

#[test]
fn batches_are_refused_after_2025_03_26_and_answered_as_one_array_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let batch = b"[{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/list\"}]\n";

    let mut current = Server::start(dir.path(), "2025-06-18");
    let refused = current.answer(batch);
    assert_error(&refused, -32600, Value::Null);
    assert!(refused["error"]["message"].as_str().unwrap().contains("2025-03-26"), "{refused}");
    current.assert_alive(12);
    drop(current);

    let mut old = Server::start(dir.path(), "2025-03-26");
    let answers = old.answer(batch);
    let answers = answers.as_array().unwrap_or_else(|| panic!("one array: {answers}"));
    let mut ids: Vec<i64> = answers.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [10, 11], "{answers:?}");
    let tools = answers.iter().find(|a| a["id"] == 11).unwrap();
    assert!(tools["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "session.scratchpad"));
    old.assert_alive(13);
}
