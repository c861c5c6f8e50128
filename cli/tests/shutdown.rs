//! Asked to stop (SIGTERM) in the middle of work: `scratchpad serve` takes no more requests,
//! answers the one it took — its operation committed whole — and exits 0; `scratchpad hook`
//! finishes its event instead of dying in it.

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;
use scratchpad_tests::components::PROBE_PATH;
use serde_json::{Value, json};

use crate::support;

use support::{Process, Rpc};

/// A configuration loading only the probe component, with `config` and a long call deadline.
fn config(dir: &Path, config: Value, timeout_ms: u64) -> std::path::PathBuf {
    let path = dir.join("scratchpad.toml");
    let text = format!(
        "[[plugin]]\nname = \"probe\"\npath = {path:?}\nallow_unsigned = true\ngrants = [\"inject\", \"rewrite-tool-calls\", \"replace-tool-results\", \"read-tool-traffic\", \"storage\", \"blobs\", \"config\"]\n\
         [plugin.config]\n{config}\n[plugin.limits]\ncall_timeout_ms = {timeout_ms}\n",
        path = PROBE_PATH,
        config = config.as_object().unwrap().iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join("\n"),
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn terminate(pid: u32) {
    let status = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

#[test]
fn serve_answers_the_request_it_took_then_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let config = config(dir.path(), json!({"prefix": "probe"}), 30_000);
    let mut command = support::command();
    command.arg("--db").arg(&db).arg("--config").arg(&config).arg("serve");
    let mut sidecar = Rpc::new(Process::spawn(command));
    let created = sidecar.request("session.create", json!({"session": "s1"}));
    assert!(created.get("result").is_some(), "{created}");

    // A call that writes, then runs for a while (about a second), taken before the signal.
    let arguments = json!({"secret": "x", "linger": 1_000_000_000u64, "mark": "finished"}).to_string();
    let call = json!({"jsonrpc": "2.0", "id": 99, "method": "tools.call",
        "params": {"turn": {"session_id": "s1", "turn_id": "t1"}, "name": "probe.stash", "arguments": arguments}});
    sidecar.process.send(format!("{call}\n").as_bytes());
    std::thread::sleep(Duration::from_millis(300));
    terminate(sidecar.process.pid());
    let answer = sidecar.process.read();
    assert_eq!(answer["id"], 99, "{answer}");
    assert!(answer.get("result").is_some(), "the request taken is answered: {answer}");
    assert!(sidecar.process.close(), "serve exits 0");

    let conn = Connection::open(&db).unwrap();
    let kept: i64 = conn
        .query_row("SELECT count(*) FROM plugin_state WHERE session = 's1' AND key = 'finished'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, 1, "its commit finished");
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok");
}

#[test]
fn the_hook_finishes_its_event_when_asked_to_stop() {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    // Its `before-query` runs until its deadline (1.5 s) and then fails: the event ends with
    // the hook's answer to a failed plugin (status 3), whatever signal came meanwhile.
    let config = config(dir.path(), json!({"prefix": "probe", "queryMode": "loop"}), 1_500);
    let mut child = support::command()
        .arg("--db")
        .arg(dir.path().join("s.db"))
        .arg("--config")
        .arg(&config)
        .args(["hook", "--runtime", "claude-code"])
        .env("SCRATCHPAD_HOOK_STATE", dir.path().join("hooks"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let event = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1", "prompt": "go", "cwd": "/tmp"});
    child.stdin.take().unwrap().write_all(event.to_string().as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(700));
    terminate(child.id());
    let output = child.wait_with_output().unwrap();
    let stderr = support::text(&output.stderr);
    assert_eq!(output.status.signal(), None, "not ended by the signal: {stderr}");
    assert_eq!(output.status.code(), Some(3), "the event ran to its end (the plugin's timeout): {stderr}");
    assert!(stderr.contains("timed out"), "{stderr}");
}

#[test]
fn mcp_over_stdio_answers_the_call_it_took_then_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let config = config(dir.path(), json!({"prefix": "probe"}), 30_000);
    let mut command = support::command();
    command.arg("--db").arg(&db).arg("--config").arg(&config).args(["mcp", "--session", "s1"]);
    let mut server = Rpc::new(Process::spawn(command));
    let init = server.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    server.process.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");

    let arguments = json!({"secret": "x", "linger": 1_000_000_000u64, "mark": "finished"});
    let call = json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": {"name": "probe.stash", "arguments": arguments}});
    server.process.send(format!("{call}\n").as_bytes());
    std::thread::sleep(Duration::from_millis(300));
    terminate(server.process.pid());
    let answer = server.process.read();
    assert_eq!(answer["id"], 99, "{answer}");
    assert_ne!(answer["result"]["isError"], true, "the call taken is answered: {answer}");
    assert!(server.process.close(), "mcp exits 0");
    let kept: i64 = Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM plugin_state WHERE session = 's1' AND key = 'finished'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, 1, "its commit finished");
}

/// One HTTP/1.1 exchange on a new connection to `addr` (closed after the answer): the answer's
/// head and body, as text.
fn http_post(addr: &str, path: &str, session: Option<&str>, body: &Value) -> (String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let body = body.to_string();
    let session = session.map(|id| format!("Mcp-Session-Id: {id}\r\n")).unwrap_or_default();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (head.to_owned(), body.to_owned())
}

#[test]
fn mcp_over_http_answers_the_call_it_took_then_exits_0_without_waiting_for_event_streams() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let config = config(dir.path(), json!({"prefix": "probe"}), 30_000);
    let mut child = support::command()
        .arg("--db")
        .arg(&db)
        .arg("--config")
        .arg(&config)
        .args(["mcp", "--http", "127.0.0.1:0"])
        .env_remove("SCRATCHPAD_MCP_TOKEN")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("http://").and_then(|rest| rest.strip_suffix("/mcp")).unwrap().to_owned();

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let (head, body) = http_post(&addr, "/mcp/s1", None, &init);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    let session = head
        .lines()
        .find_map(|line| {
            line.to_ascii_lowercase().strip_prefix("mcp-session-id:").map(|_| line[15..].trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no Mcp-Session-Id: {head}"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (head, _) = http_post(&addr, "/mcp/s1", Some(&session), &initialized);
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");

    // The session's event stream, held open by the client as MCP clients do: a read, which
    // the stop does not wait for.
    let mut events = std::net::TcpStream::connect(&addr).unwrap();
    std::io::Write::write_all(
        &mut events,
        format!(
            "GET /mcp/s1 HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
        )
        .as_bytes(),
    )
    .unwrap();

    // A call that writes, then runs for about a second, taken before the signal.
    let call = json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "probe.stash",
        "arguments": {"secret": "x", "linger": 1_000_000_000u64, "mark": "finished"}}});
    let calling = {
        let (addr, session) = (addr.clone(), session.clone());
        std::thread::spawn(move || http_post(&addr, "/mcp/s1", Some(&session), &call))
    };
    std::thread::sleep(Duration::from_millis(300));
    let stopped_at = std::time::Instant::now();
    terminate(child.id());
    let (head, body) = calling.join().unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "the call taken is answered: {head}\n{body}");
    assert!(body.contains("\"id\":99") && body.contains("\"result\""), "{body}");
    assert!(!body.contains("\"isError\":true"), "{body}");

    let status = child.wait().unwrap();
    assert!(status.success(), "mcp --http exits 0: {status}");
    assert!(
        stopped_at.elapsed() < Duration::from_secs(10),
        "the open event stream did not hold the stop to its 10 s bound: {:?}",
        stopped_at.elapsed()
    );
    assert!(std::net::TcpStream::connect(&addr).is_err(), "no longer listening");
    let kept: i64 = Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM plugin_state WHERE session = 's1' AND key = 'finished'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, 1, "its commit finished");
}
