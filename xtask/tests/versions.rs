//! One version for everything a user installs: the workspace's `version` in `Cargo.toml`.
//! The crates inherit it; `cargo xtask dist` writes it into the npm packages and maturin into
//! the wheels; the files below carry it as text, and this test fails when any differs. (The
//! built artifacts' versions are checked where they are installed: tests/tests/distribution.rs.)

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn read(path: &str) -> String {
    std::fs::read_to_string(xtask::workspace().join(path)).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

fn json(path: &str) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn assert_version(path: &str, found: Option<&str>) {
    assert_eq!(
        found,
        Some(VERSION),
        "{path} holds version {found:?} where Cargo.toml's [workspace.package] says {VERSION}: every version \
         comes from there"
    );
}

#[test]
fn every_manifest_carries_the_workspace_version() {
    for path in [
        "integrations/claude-code/.claude-plugin/plugin.json",
        "integrations/openclaw/package.json",
        "integrations/openclaw/openclaw.plugin.json",
        "bindings/node/package.json",
    ] {
        assert_version(path, json(path)["version"].as_str());
    }
    let marketplace = json(".claude-plugin/marketplace.json");
    assert_version(".claude-plugin/marketplace.json", marketplace["plugins"][0]["source"]["version"].as_str());

    // The plugin's launcher tells the binary which plugin version runs it.
    let launcher = read("integrations/claude-code/bin/scratchpad");
    let line = launcher.lines().find_map(|line| line.strip_prefix("SCRATCHPAD_PLUGIN_VERSION="));
    assert_version("integrations/claude-code/bin/scratchpad", line);
}

#[test]
fn every_crate_and_wheel_takes_the_version_from_the_workspace() {
    let root: toml::Table = read("Cargo.toml").parse().unwrap();
    assert_version("Cargo.toml", root["workspace"]["package"]["version"].as_str());
    for member in root["workspace"]["members"].as_array().unwrap() {
        let path = format!("{}/Cargo.toml", member.as_str().unwrap());
        let manifest: toml::Table = read(&path).parse().unwrap();
        let version = &manifest["package"]["version"];
        assert!(
            version.get("workspace").and_then(toml::Value::as_bool) == Some(true),
            "{path} sets its own version ({version}); write `version.workspace = true`"
        );
    }
    for pyproject in ["bindings/python/pyproject.toml", "packaging/pypi/cli/pyproject.toml"] {
        let project: toml::Table = read(pyproject).parse().unwrap();
        let dynamic = project["project"]["dynamic"].as_array().unwrap();
        assert!(
            dynamic.iter().any(|d| d.as_str() == Some("version")) && project["project"].get("version").is_none(),
            "{pyproject} must take its version from Cargo (dynamic = [\"version\"])"
        );
    }
}
