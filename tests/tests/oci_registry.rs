//! The plugin supply chain, through the `scratchpad` binary: plugins pulled from a real OCI
//! registry on loopback (`docker-registry`, pushed to with `skopeo`; `registry.rs`), checked
//! digest by digest, cached, tag-pinned; and signed with the real `ssh-keygen`, verified
//! against the configured publishers before anything compiles.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scratchpad_tests::components::{HOSTILE_PATH, REMINDER_PATH};
use scratchpad_tests::registry::{Registry, sha256};
use scratchpad_tests::scratchpad_binary;
use serde_json::Value;

/// A user's machine: its own data and cache dirs (the lock file and the pull cache live there).
struct Machine {
    home: tempfile::TempDir,
}

impl Machine {
    fn new() -> Machine {
        Machine { home: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.home.path().join(name)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(scratchpad_binary())
            .args(["--db", self.path("agent.db").to_str().unwrap()])
            .args(args)
            .env("HOME", self.home.path())
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env_remove("SCRATCHPAD_CONFIG")
            .env_remove("SCRATCHPAD_DATABASE_URL")
            .output()
            .expect("running scratchpad")
    }

    /// `plugins --json` with the reminder from `source`, unsigned and granted what it asks for:
    /// the reminder's entry, or the error.
    fn load_reminder(&self, source: &str) -> Result<Value, String> {
        let out = self.run(&[
            "--json",
            "--plugin",
            source,
            "--allow-unsigned",
            "reminder",
            "--grant",
            "reminder=inject,storage",
            "plugins",
        ]);
        entry(out, "reminder")
    }

    fn lock_file(&self) -> String {
        std::fs::read_to_string(self.path("data/scratchpad/plugins.lock")).unwrap_or_default()
    }
}

/// The plugin `name` of a `plugins --json` run, or the run's error message.
fn entry(out: Output, name: &str) -> Result<Value, String> {
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {} {}", text(&out.stdout), text(&out.stderr)));
    if !out.status.success() {
        return Err(json["error"]["message"].as_str().unwrap_or_default().to_owned());
    }
    let plugins = json["plugins"].as_array().unwrap();
    Ok(plugins.iter().find(|p| p["name"] == name).cloned().unwrap_or_else(|| panic!("no {name}: {json}")))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn a_component_is_pulled_by_tag_then_by_digest_and_the_tag_is_pinned_to_what_it_resolved_to() {
    let registry = Registry::start();
    let reminder = read(REMINDER_PATH);
    let manifest = registry.push_component("acme/reminder", "1.0", &reminder);
    let machine = Machine::new();

    let tagged = registry.reference("acme/reminder:1.0");
    let loaded = machine.load_reminder(&tagged).expect("pulled by tag");
    assert_eq!(loaded["identity"], sha256(&reminder), "the component's identity is its bytes' digest");
    assert_eq!(loaded["tools"][0]["name"], "reminder.set");
    let lock = machine.lock_file();
    assert!(lock.contains(&format!("reference = \"{tagged}\"")) && lock.contains(&manifest), "{lock}");

    let by_digest = registry.reference(&format!("acme/reminder@{manifest}"));
    assert_eq!(machine.load_reminder(&by_digest).expect("pulled by digest")["identity"], sha256(&reminder));

    // The tag moves to another component: refused, naming both digests; nothing loaded.
    let moved = registry.push_component("acme/reminder", "1.0", &read(HOSTILE_PATH));
    let refused = machine.load_reminder(&tagged).unwrap_err();
    assert!(refused.contains(&manifest) && refused.contains(&moved), "{refused}");
    assert!(refused.contains("now points to") && refused.contains("delete its pin"), "{refused}");

    // Another machine never saw the old tag: it pins the new one.
    let fresh = Machine::new();
    let err = fresh.load_reminder(&tagged).unwrap_err();
    assert!(err.contains("asks for"), "the hostile component asks for more than was granted: {err}");
    assert!(fresh.lock_file().contains(&moved));
}

#[test]
fn a_layer_whose_bytes_do_not_match_its_digest_is_refused() {
    let registry = Registry::start();
    let reminder = read(REMINDER_PATH);
    registry.push_component("acme/reminder", "1.0", &reminder);
    // Damage the stored layer in place, keeping its size: the registry serves it as it is.
    let blob = registry.blob_file(&sha256(&reminder));
    let mut bytes = std::fs::read(&blob).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&blob, &bytes).unwrap();

    let machine = Machine::new();
    let refused = machine.load_reminder(&registry.reference("acme/reminder:1.0")).unwrap_err();
    assert!(refused.contains("does not match its digest"), "{refused}");
    assert!(refused.contains(&sha256(&reminder)) && refused.contains(&sha256(&bytes)), "{refused}");
}

#[test]
fn with_the_registry_down_a_cached_component_loads_and_an_uncached_one_is_a_clear_error() {
    let mut registry = Registry::start();
    let reminder = read(REMINDER_PATH);
    let manifest = registry.push_component("acme/reminder", "1.0", &reminder);
    let (tagged, by_digest) =
        (registry.reference("acme/reminder:1.0"), registry.reference(&format!("acme/reminder@{manifest}")));
    let machine = Machine::new();
    machine.load_reminder(&tagged).expect("pulled while the registry is up");
    registry.stop();

    assert_eq!(machine.load_reminder(&tagged).expect("the pinned tag from the cache")["identity"], sha256(&reminder));
    assert_eq!(machine.load_reminder(&by_digest).expect("the digest from the cache")["identity"], sha256(&reminder));

    let elsewhere = Machine::new();
    let err = elsewhere.load_reminder(&tagged).unwrap_err();
    assert!(err.contains(&format!("the registry {} could not be reached", registry.host())), "{err}");
    assert!(err.contains("not in the cache"), "{err}");
}

/// A fresh Ed25519 key made by `ssh-keygen`: (private key, public key file).
fn keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    scratchpad_tests::setup::ensure_commands(&scratchpad_tests::setup::OCI, &["ssh-keygen"]);
    let key = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen (OpenSSH) is needed: apt-get install openssh-client");
    assert!(out.status.success(), "{}", text(&out.stderr));
    (key.clone(), key.with_extension("pub"))
}

/// `ssh-keygen -Y sign` of `file` in the plugin namespace: writes and returns `file.sig`.
fn sign(key: &Path, file: &Path) -> Vec<u8> {
    let _ = std::fs::remove_file(format!("{}.sig", file.display()));
    let out = Command::new("ssh-keygen")
        .args(["-q", "-Y", "sign", "-n", "scratchpad-plugin", "-f"])
        .arg(key)
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::read(format!("{}.sig", file.display())).unwrap()
}

#[test]
fn signatures_by_a_configured_publisher_are_verified_and_every_other_case_is_refused_with_its_reason() {
    let registry = Registry::start();
    let machine = Machine::new();
    let (acme, acme_pub) = keygen(machine.home.path(), "acme");
    let (mallory, _) = keygen(machine.home.path(), "mallory");
    let file = machine.path("reminder.wasm");
    std::fs::copy(REMINDER_PATH, &file).unwrap();
    let reminder = read(REMINDER_PATH);
    registry.push_component("acme/reminder", "1.0", &reminder);
    let source = registry.reference("acme/reminder:1.0");
    let config = machine.path("scratchpad.toml");
    std::fs::write(
        &config,
        format!(
            "[[publisher]]\nname = \"acme\"\nkey_file = \"acme.pub\"\n\n[[plugin]]\nname = \"reminder\"\npath = \
             \"{source}\"\ngrants = [\"inject\", \"storage\"]\n"
        ),
    )
    .unwrap();
    assert!(acme_pub.is_file());
    let load = || entry(machine.run(&["--json", "--config", config.to_str().unwrap(), "plugins"]), "reminder");

    // Unsigned: refused, saying what was expected.
    let err = load().unwrap_err();
    assert!(err.contains("no signature") && err.contains("`acme` (SHA256:"), "{err}");

    // Signed by a key no publisher has: refused, naming the key.
    registry.push_signature("acme/reminder", &reminder, &sign(&mallory, &file));
    let err = load().unwrap_err();
    assert!(err.contains("which is not a trusted publisher's"), "{err}");

    // Signed by acme, but over other bytes: refused.
    let other = machine.path("other.wasm");
    std::fs::copy(HOSTILE_PATH, &other).unwrap();
    registry.push_signature("acme/reminder", &reminder, &sign(&acme, &other));
    let err = load().unwrap_err();
    assert!(err.contains("does not match the component's bytes"), "{err}");

    // Signed by acme: loaded, and says so.
    registry.push_signature("acme/reminder", &reminder, &sign(&acme, &file));
    let loaded = load().expect("a signature by acme is accepted");
    assert_eq!(loaded["signed_by"], "acme");
    assert_eq!(loaded["grants"], serde_json::json!(["inject", "storage"]));

    // A file works the same way, with its signature beside it (what ssh-keygen wrote).
    let signed = machine.run(&[
        "--json",
        "--publisher",
        &format!("acme={}", acme_pub.display()),
        "--plugin",
        file.to_str().unwrap(),
        "--grant",
        "reminder=inject,storage",
        "plugins",
    ]);
    assert_eq!(entry(signed, "reminder").expect("the signed file loads")["signed_by"], "acme");
    std::fs::write(&file, read(HOSTILE_PATH)).unwrap();
    let tampered = machine.run(&[
        "--publisher",
        &format!("acme={}", acme_pub.display()),
        "--plugin",
        file.to_str().unwrap(),
        "plugins",
    ]);
    assert_eq!(tampered.status.code(), Some(3));
    assert!(text(&tampered.stderr).contains("does not match the component's bytes"), "{}", text(&tampered.stderr));
}
