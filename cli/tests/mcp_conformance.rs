//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/clients/conformance/package-lock.json) against `scratchpad mcp --http`, directly: the
//! suite tests servers only over Streamable HTTP. It runs on the pinned Node 24
//! (`runtimes::node24`); the server listens on 127.0.0.1 on a port the system picks and is
//! killed by PID.
//!
//! Every server scenario of the pinned suite is in exactly one of two lists: the ones that
//! apply to this server, which must pass, and the ones that need the suite's own fixture
//! tools, resources or prompts (`test_simple_text`, `test://static-text`, ...), which a memory
//! server does not have and must not grow to pass a test. A scenario of a newer pin that is in
//! neither list fails the test until someone decides.

use std::path::PathBuf;
use std::process::Command;

use scratchpad_tests::runtimes;

use crate::support;

/// The scenarios that apply, each of which must pass.
const APPLICABLE: &[&str] = &[
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "resources-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
];

/// The scenarios that need the suite's fixtures, with the fixture each needs.
const NOT_APPLICABLE: &[(&str, &str)] = &[
    ("completion-complete", "completions for the fixture prompt `test_prompt_with_arguments`"),
    ("tools-call-simple-text", "the fixture tool `test_simple_text`"),
    ("tools-call-image", "the fixture tool `test_image_content`"),
    ("tools-call-audio", "the fixture tool `test_audio_content`"),
    ("tools-call-embedded-resource", "the fixture tool `test_embedded_resource`"),
    ("tools-call-mixed-content", "the fixture tool `test_multiple_content_types`"),
    ("tools-call-with-logging", "the fixture tool `test_tool_with_logging`"),
    ("tools-call-error", "the fixture tool `test_error_handling`"),
    ("tools-call-with-progress", "the fixture tool `test_tool_with_progress`"),
    ("tools-call-sampling", "the fixture tool `test_sampling`"),
    ("tools-call-elicitation", "the fixture tool `test_elicitation`"),
    ("json-schema-2020-12", "the fixture tool `json_schema_2020_12_tool`"),
    ("elicitation-sep1034-defaults", "the fixture tool `test_client_elicitation_defaults`"),
    ("elicitation-sep1330-enums", "the fixture tool `test_elicitation_sep1330_enums`"),
    ("server-sse-polling", "the fixture tool `test_reconnection`"),
    ("resources-read-text", "the fixture resource `test://static-text`"),
    ("resources-read-binary", "the fixture resource `test://static-binary`"),
    ("resources-templates-read", "the fixture resource template `test://template/{id}/data`"),
    ("resources-subscribe", "the fixture resource `test://watched-resource`"),
    ("resources-unsubscribe", "the fixture resource `test://watched-resource`"),
    ("prompts-get-simple", "the fixture prompt `test_simple_prompt`"),
    ("prompts-get-with-args", "the fixture prompt `test_prompt_with_arguments`"),
    ("prompts-get-embedded-resource", "the fixture prompt `test_prompt_with_embedded_resource`"),
    ("prompts-get-with-image", "the fixture prompt `test_prompt_with_image`"),
];

/// The suite's entry point, installed from its lock file when missing, and a `PATH` with
/// Node 24 first.
fn conformance_suite() -> (PathBuf, std::ffi::OsString) {
    runtimes::npm_package_on_node24(
        "tests/clients/conformance",
        "node_modules/@modelcontextprotocol/conformance/dist/index.js",
        "the pinned MCP conformance suite",
    )
}

#[test]
fn every_applicable_conformance_scenario_passes_over_http() {
    let (suite, path) = conformance_suite();
    let node = runtimes::node24();
    let listed = runtimes::run(
        Command::new(&node).arg(&suite).args(["list", "--server"]).env("PATH", &path),
        "listing the conformance suite's server scenarios",
    );
    let listed = String::from_utf8_lossy(&listed.stdout);
    let scenarios: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert!(scenarios.len() > 10, "{listed}");
    for scenario in &scenarios {
        let known = APPLICABLE.contains(scenario) || NOT_APPLICABLE.iter().any(|(s, _)| s == scenario);
        assert!(known, "scenario `{scenario}` of the pinned suite is in neither list: decide whether it applies");
    }

    let dir = tempfile::tempdir().unwrap();
    let server = support::HttpServer::start(&dir.path().join("conformance.db"), &[]);
    let url = format!("{}/conformance", server.url);
    let mut failures = Vec::new();
    for scenario in APPLICABLE {
        let output = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &url, "--scenario", scenario])
            .env("PATH", &path)
            .current_dir(dir.path())
            .output()
            .expect("running the conformance suite");
        if !output.status.success() {
            failures.push(format!(
                "{scenario}:\n{}\n{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "conformance scenarios failed:\n{}", failures.join("\n"));
}
