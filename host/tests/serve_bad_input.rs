//! A bad byte must not kill the JSON-RPC sidecar (issue 14, item 9): this test is the client,
//! a separate process writing raw bytes to `scratchpad serve`'s stdin, as a buggy runtime
//! would. A line that is not UTF-8 or not JSON gets a parse error with `"id": null`, and the
//! next request is still answered.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// The sidecar, with its stdout read on a thread so that a missing answer fails the test
/// after a while instead of hanging it.
struct Sidecar {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Sidecar {
    fn start(db: &std::path::Path) -> Sidecar {
        let mut child = Command::new(env!("CARGO_BIN_EXE_scratchpad"))
            .args(["--db", db.to_str().unwrap(), "serve"])
            .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting scratchpad serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Sidecar { child, stdin: Some(stdin), lines }
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Closes stdin; whether the sidecar then exited with status 0.
    fn close(&mut self) -> bool {
        drop(self.stdin.take());
        self.child.wait().unwrap().success()
    }

    fn read(&self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(60)).expect("the sidecar answered within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"))
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_line_of_invalid_utf8_gets_a_parse_error_and_the_sidecar_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let mut sidecar = Sidecar::start(&dir.path().join("bad.db"));

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
