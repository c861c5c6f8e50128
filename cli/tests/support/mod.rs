//! What the CLI tests share: the real `scratchpad` binary, run the way a user runs it, and
//! readers of what it printed. Each test binary uses its part (`mod support;`).
#![allow(dead_code)]

use std::ffi::OsStr;
use std::process::{Command, Output};

/// The `scratchpad` binary with the test run's compiled-component cache and no database taken
/// from the environment (a test names its database).
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_scratchpad"));
    command
        .env("XDG_CACHE_HOME", concat!(env!("CARGO_TARGET_TMPDIR"), "/scratchpad-cache"))
        .env_remove(scratchpad_host::DATABASE_URL_ENV)
        .env_remove("SCRATCHPAD_CONFIG");
    command
}

/// Runs `scratchpad --db DB ARGS…` to the end.
pub fn run(db: impl AsRef<OsStr>, args: &[impl AsRef<OsStr>]) -> Output {
    command().arg("--db").arg(db).args(args).output().expect("running scratchpad")
}

/// Bytes the CLI printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What the CLI printed on stdout, as JSON.
pub fn json_of(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", text(&output.stdout)))
}

/// Runs `scratchpad --db DIR/s.db hook --tool-prefix PREFIX OPTIONS…` with `input` on stdin,
/// its ledger in `DIR/hooks` and the variables `env`, as a coding agent runs it for one event.
pub fn hook(dir: &std::path::Path, prefix: &str, options: &[&str], env: &[(&str, &str)], input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command()
        .arg("--db")
        .arg(dir.join("s.db"))
        .args(["hook", "--tool-prefix", prefix])
        .args(options)
        .env("SCRATCHPAD_HOOK_STATE", dir.join("hooks"))
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// A long-running `scratchpad` (a `serve` or `mcp` process on stdio) that a test writes raw
/// bytes to, with its stdout read on a thread so that a missing answer fails the test after a
/// while instead of hanging it. Killed when dropped.
pub struct Process {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Process {
    /// Starts `scratchpad ARGS…`.
    pub fn start(args: &[&str]) -> Process {
        let mut scratchpad = command();
        scratchpad.args(args);
        Process::spawn(scratchpad)
    }

    /// Starts `command` (a `scratchpad` from [`command`] with its arguments and environment).
    pub fn spawn(mut command: Command) -> Process {
        use std::io::BufRead;
        use std::process::Stdio;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting scratchpad");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Process { child, stdin: Some(stdin), lines }
    }

    /// Writes `bytes` to its stdin.
    pub fn send(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Its next line on stdout, as JSON (at most 60 s away).
    pub fn read(&self) -> serde_json::Value {
        let line =
            self.lines.recv_timeout(std::time::Duration::from_secs(60)).expect("scratchpad answered within 60 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"))
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes stdin; whether the process then exited with status 0.
    pub fn close(&mut self) -> bool {
        drop(self.stdin.take());
        self.child.wait().unwrap().success()
    }
}

/// A JSON-RPC 2.0 peer on a [`Process`]'s stdio (`serve`, `mcp`): numbered requests, each
/// answered by one line.
pub struct Rpc {
    pub process: Process,
    id: i64,
}

impl Rpc {
    pub fn new(process: Process) -> Rpc {
        Rpc { process, id: 0 }
    }

    /// An MCP server (`scratchpad mcp …`, spawned as `command`) past its handshake, as the
    /// client `name` at `version` would see it.
    pub fn mcp(command: Command, name: &str, version: &str) -> Rpc {
        let mut server = Rpc::new(Process::spawn(command));
        let init = serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": name, "version": version}});
        let answer = server.request("initialize", init);
        assert!(answer.get("result").is_some(), "{answer}");
        server.process.send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        server
    }

    /// `tools/call` of `name` with `arguments`: whether the result is an error, and its text.
    pub fn call_tool(&mut self, name: &str, arguments: serde_json::Value) -> (bool, String) {
        let answer = self.request("tools/call", serde_json::json!({"name": name, "arguments": arguments}));
        let result = &answer["result"];
        (result["isError"] == true, result["content"][0]["text"].as_str().unwrap_or_default().to_owned())
    }

    /// The answer to request `method` with `params`.
    pub fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.id += 1;
        let line = serde_json::json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        self.process.send(format!("{line}\n").as_bytes());
        let answer = self.process.read();
        assert_eq!(answer["id"], self.id, "{answer}");
        answer
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the Python (stdlib) client `tests/clients/NAME` against the binary and requires it to
/// report every check passed.
pub fn python_client(name: &str) {
    client(Command::new("python3"), name, &[]);
}

/// Runs the client `tests/clients/NAME` with the pinned packages of
/// `tests/clients/requirements.txt` (the official MCP SDK), installed when missing, and `args`
/// after the binary; requires it to report every check passed.
pub fn python_mcp_client(name: &str, args: &[&OsStr]) {
    let python = scratchpad_tests::runtimes::python_with("tests/clients/requirements.txt", "target/python-deps");
    client(python, name, args);
}

fn client(mut python: Command, name: &str, args: &[&OsStr]) {
    let script = format!("{}/../tests/clients/{name}", env!("CARGO_MANIFEST_DIR"));
    let output = python
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_scratchpad"))
        .args(args)
        .env("SCRATCHPAD_TEST_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("python3 is required for the clients' tests (see .ci/run)");
    let stdout = text(&output.stdout);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "the Python client {name} failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");
}

/// `scratchpad --db DB mcp --http 127.0.0.1:0 ARGS…`, killed by PID on drop.
pub struct HttpServer {
    child: std::process::Child,
    /// The URL the server printed first.
    pub url: String,
}

impl HttpServer {
    /// Starts the server and reads its URL.
    pub fn start(db: &std::path::Path, args: &[&OsStr]) -> HttpServer {
        use std::io::BufRead;
        let mut child = command()
            .arg("--db")
            .arg(db)
            .args(["mcp", "--http", "127.0.0.1:0"])
            .args(args)
            .env_remove("SCRATCHPAD_MCP_TOKEN")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("starting scratchpad mcp --http");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "the server prints its URL first: {url:?}");
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The page at `path` of the viewer whose URL (`http://ADDR/?token=T`, as `scratchpad ui`
/// prints it) is `url`, sent with the token's cookie.
pub fn viewer_page(url: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let (addr, token) = url.strip_prefix("http://").and_then(|rest| rest.split_once("/?token=")).expect("the URL");
    let port = addr.rsplit_once(':').expect("a port").1;
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nCookie: scratchpad_ui_{port}={token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
}

/// `scratchpad setup …` as a user whose home is `home` runs it: the binary's copy goes under
/// its `XDG_DATA_HOME` ([`setup_copy`]).
pub fn setup_command(home: &std::path::Path) -> Command {
    let mut command = command();
    command.arg("setup").env("XDG_DATA_HOME", home.join("data"));
    command
}

/// Where `scratchpad setup` copies the binary for a user whose home is `home`.
pub fn setup_copy(home: &std::path::Path) -> std::path::PathBuf {
    home.join(format!("data/scratchpad/bin/{}/scratchpad", env!("CARGO_PKG_VERSION")))
}

/// Writes a user's settings file `file`, making its directory.
pub fn write_settings(file: &std::path::Path, text: &str) {
    std::fs::create_dir_all(file.parent().expect("a settings file's directory")).unwrap();
    std::fs::write(file, text).unwrap();
}

/// The backup `scratchpad setup` keeps of `file`.
pub fn backup(file: &std::path::Path) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{}.bak", file.display()))
}
