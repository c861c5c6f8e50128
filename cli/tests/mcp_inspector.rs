//! The official MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, pinned in
//! tests/clients/inspector/package-lock.json) against `scratchpad mcp --http` with a bearer
//! token: it lists and calls the tools with the token, and is refused without it, with a wrong
//! one, or with a foreign `Origin`. It runs on the pinned Node 24 (`runtimes::node24`, the
//! Inspector needs Node >= 22.19); the server listens on 127.0.0.1 on a port the system picks,
//! with the token from a file, and is killed by PID.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use scratchpad_tests::runtimes;

use crate::support;

/// The token the server is started with (from a file; at least 16 characters).
const TOKEN: &str = "inspector-test-token-5f1c9a7e2b";

/// Node 24, the Inspector's launcher (the package's `mcp-inspector` bin), installed from its
/// lock file when missing, and a `PATH` with Node 24 first.
fn inspector() -> (PathBuf, PathBuf, std::ffi::OsString) {
    let (entry, path) = runtimes::npm_package_on_node24(
        "tests/clients/inspector",
        "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js",
        "the pinned MCP Inspector",
    );
    (runtimes::node24(), entry, path)
}

/// Runs the Inspector CLI against `url` with `headers` and the method arguments `args`; its
/// home is `home` (it keeps a catalog and OAuth state under `~/.mcp-inspector`), and it never
/// starts an interactive OAuth login.
struct Inspector {
    node: PathBuf,
    entry: PathBuf,
    path: std::ffi::OsString,
    home: PathBuf,
}

impl Inspector {
    fn run(&self, url: &str, headers: &[String], args: &[&str]) -> Output {
        let mut command = Command::new(&self.node);
        command.arg(&self.entry).args([
            "--cli",
            "--stored-auth-only",
            "--format",
            "json",
            "--transport",
            "http",
            "--server-url",
            url,
        ]);
        for header in headers {
            command.args(["--header", header]);
        }
        command
            .args(args)
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env_remove("MCP_CATALOG_PATH")
            .env_remove("MCP_CLIENT_CONFIG_PATH")
            .env_remove("MCP_AUTO_OPEN_ENABLED")
            .current_dir(&self.home)
            .output()
            .expect("running the MCP Inspector CLI")
    }
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The `result` of a successful `--format json` run.
fn result(output: &Output) -> Value {
    assert!(output.status.success(), "the Inspector failed:\n{}", text(output));
    let body: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", text(output)));
    body["result"].clone()
}

/// `scratchpad --json show SESSION` on the server's database, from another process.
fn show(db: &Path, session: &str) -> (bool, Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_scratchpad"))
        .args(["--db", db.to_str().unwrap(), "--json", "show", session])
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("running scratchpad show");
    let body = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", text(&output)));
    (output.status.success(), body)
}

#[test]
fn the_mcp_inspector_cli_uses_the_http_server_with_its_token_and_is_refused_without_it() {
    let (node, entry, path) = inspector();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let inspector = Inspector { node, entry, path, home };
    let version = runtimes::run(
        Command::new(&inspector.node)
            .arg(&inspector.entry)
            .args(["--cli", "--version"])
            .env("PATH", &inspector.path)
            .env("HOME", &inspector.home),
        "running the MCP Inspector CLI",
    );
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), "2.12.0", "{}", text(&version));

    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let db = dir.path().join("inspector.db");
    let server = support::HttpServer::start(&db, &["--token-file".as_ref(), token_file.as_os_str()]);
    assert!(server.url.ends_with("/mcp"), "the server prints its MCP URL first: {}", server.url);
    let url = format!("{}/inspector", server.url);
    let bearer = format!("Authorization: Bearer {TOKEN}");

    // With the token: the tools are listed, and a call writes the scratchpad, which another
    // process then reads from the database.
    let listed = result(&inspector.run(&url, std::slice::from_ref(&bearer), &["--method", "tools/list"]));
    let names: Vec<&str> =
        listed["tools"].as_array().expect("tools/list has tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"session.scratchpad"), "{listed}");

    let plan = "1. inspect the HTTP server\n2. check the token";
    let arguments = serde_json::json!({ "action": "set_plan", "content": plan }).to_string();
    let args = ["--method", "tools/call", "--tool-name", "session.scratchpad", "--tool-args-json", &arguments];
    let called = result(&inspector.run(&url, std::slice::from_ref(&bearer), &args));
    assert_eq!(called["isError"], false, "{called}");
    let (found, shown) = show(&db, "inspector");
    assert!(found, "{shown}");
    let state = shown["state"].as_array().expect("show lists the plugins' state");
    assert!(
        state.iter().any(|e| e["plugin"] == "scratchpad" && e["key"] == "plan" && e["text"] == plan),
        "the plan set through the Inspector is stored: {shown}"
    );

    // A page of this server's own origin is accepted (so the Origin header does reach it).
    let own_origin = format!("Origin: {}", server.url.trim_end_matches("/mcp"));
    let allowed = inspector.run(&url, &[bearer.clone(), own_origin], &["--method", "tools/list"]);
    assert!(result(&allowed)["tools"].is_array(), "{}", text(&allowed));

    // Refused: no token, a wrong token (401), a foreign Origin even with the token (403). A
    // refused request changes nothing: the session it names is not created.
    let refused_url = format!("{}/refused", server.url);
    let cases = [
        ("no token", vec![], &["unauthorized", "-32001"][..]),
        (
            "a wrong token",
            vec![format!("Authorization: Bearer {}", "x".repeat(TOKEN.len()))],
            &["unauthorized", "-32001"],
        ),
        ("a foreign Origin", vec![bearer, "Origin: http://evil.example".to_owned()], &["403", "Origin"]),
    ];
    for (case, headers, reasons) in cases {
        let output = inspector.run(&refused_url, &headers, &["--method", "tools/list"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{case}: the Inspector was not refused:\n{}", text(&output));
        for reason in reasons {
            assert!(stderr.contains(reason), "{case}: the error does not say `{reason}`:\n{}", text(&output));
        }
        assert!(!stderr.contains(TOKEN), "{case}: the token never appears in an error");
        assert!(!String::from_utf8_lossy(&output.stdout).contains("session.scratchpad"), "{case}: no tools listed");
        let (found, _) = show(&db, "refused");
        assert!(!found, "{case}: a refused request created its session");
    }
    drop(server);
}
