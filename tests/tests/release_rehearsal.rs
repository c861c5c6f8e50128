//! The release rehearsed: `cargo xtask release --dry-run`, the release workflow's own xtask
//! steps, run on the artifacts of `cargo xtask dist` for this platform
//! (`scratchpad_tests::dist`, built once per test run) against a real npm registry on loopback
//! (verdaccio) and a real local Python index (pypiserver, pinned in
//! `xtask/rehearsal-requirements.txt`), then read back with the real `npm view` and installed
//! with the real `pip`. The crates go through `cargo publish --dry-run --no-verify` (packaged,
//! not built: tests/tests/published_crates.rs builds the packaged crates).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use scratchpad_tests::dist::{VERSION, artifacts};
use scratchpad_tests::npm_registry::NpmRegistry;
use scratchpad_tests::process::{free_port, wait_for};
use scratchpad_tests::runtimes::{python_with, root, run, system_npm};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The pins of the Python index (and of the uploader the rehearsal runs), shared with xtask.
const REQUIREMENTS: &str = "xtask/rehearsal-requirements.txt";
/// Where xtask installs them too.
const TOOLS: &str = "target/rehearsal-tools";

/// The npm packages of this platform's release, each with the packages of it that it needs on
/// the registry first (its `optionalDependencies`).
const NPM_PACKAGES: &[(&str, &[&str])] = &[
    ("@scratchpad-dev/cli-linux-x64", &[]),
    ("@scratchpad-dev/host-linux-x64-gnu", &[]),
    ("@scratchpad-dev/cli", &["@scratchpad-dev/cli-linux-x64"]),
    ("@scratchpad-dev/claude-code", &["@scratchpad-dev/cli-linux-x64"]),
    ("@scratchpad-dev/host", &["@scratchpad-dev/host-linux-x64-gnu"]),
];

/// A local Python index: pypiserver serving a temp dir on a free port of 127.0.0.1, taking
/// uploads without authentication and refusing a file it already has; killed by PID when
/// dropped.
struct PythonIndex {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl PythonIndex {
    fn start() -> PythonIndex {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("packages")).unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.path().join("index.log")).unwrap();
        let child = python_with(REQUIREMENTS, TOOLS)
            .args(["-m", "pypiserver", "run", "--port", &port.to_string(), "--host", "127.0.0.1"])
            .args(["--authenticate", ".", "--passwords", ".", "--disable-fallback"])
            .arg(dir.path().join("packages"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting pypiserver");
        let index = PythonIndex { child, port, dir };
        wait_for(Duration::from_secs(60), "pypiserver answering", || index.page("").map(|_| ()));
        index
    }

    /// `http://127.0.0.1:PORT/`: where uploads go.
    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// The simple index's page `path` (under `/simple/`), if it answers 200.
    fn page(&self, path: &str) -> Option<String> {
        let url = format!("{}simple/{path}", self.url());
        let script =
            "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())";
        let output = Command::new("python3").args(["-c", script, &url]).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The files the index holds, with their modification times.
    fn files(&self) -> BTreeMap<String, SystemTime> {
        std::fs::read_dir(self.dir.path().join("packages"))
            .unwrap()
            .map(|entry| entry.unwrap())
            .map(|entry| {
                (entry.file_name().to_string_lossy().into_owned(), entry.metadata().unwrap().modified().unwrap())
            })
            .collect()
    }
}

impl Drop for PythonIndex {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cargo xtask <args>` with the registry's publishing user; its output, whether it succeeded
/// or not.
fn xtask(registry: &NpmRegistry, args: &[&str]) -> Output {
    let mut xtask = Command::new(env!("CARGO"));
    xtask.arg("xtask").args(args).current_dir(root()).env("NPM_CONFIG_USERCONFIG", registry.publisher_npmrc());
    // The variables cargo set for this test's own build are not the xtask's.
    for var in ["CARGO_TARGET_DIR", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET"] {
        xtask.env_remove(var);
    }
    xtask.output().expect("running cargo xtask")
}

/// `cargo xtask release --dry-run` of the artifacts in `dist` to these registries.
fn rehearse(dist: &Path, registry: &NpmRegistry, index: &PythonIndex) -> Output {
    let dist = dist.to_str().unwrap();
    let (npm, python) = (registry.url(), index.url());
    let args =
        ["release", "--dry-run", "--dist", dist, "--npm-registry", &npm, "--python-index", &python, "--no-verify"];
    xtask(registry, &args)
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// `npm view NAME --json` on the registry: the packument's fields for the latest version, with
/// `dist-tags` and `time`; `None` when the registry has no such package.
fn npm_view(registry: &NpmRegistry, name: &str) -> Option<Value> {
    let output = Command::new(system_npm("reading the test registry"))
        .args(["view", name, "--json", "--registry", &registry.url()])
        .env("PATH", registry.path())
        .output()
        .unwrap();
    if !output.status.success() {
        assert!(text(&output).contains("E404"), "npm view {name}: {}", text(&output));
        return None;
    }
    Some(serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("npm view {name}: {e}")))
}

/// What the registries hold: each npm package's publish times and tarball digest, and each file
/// of the index with its modification time.
#[derive(Debug, PartialEq)]
struct State {
    npm: Vec<(Value, String)>,
    index: BTreeMap<String, SystemTime>,
}

fn state(registry: &NpmRegistry, index: &PythonIndex) -> State {
    let npm = NPM_PACKAGES
        .iter()
        .map(|(name, _)| {
            let view = npm_view(registry, name).unwrap_or_else(|| panic!("{name} is not on the registry"));
            let tarball = std::fs::read(registry.stored_tarball(name, VERSION)).unwrap();
            (view["time"].clone(), hex::encode(Sha256::digest(tarball)))
        })
        .collect();
    State { npm, index: index.files() }
}

#[test]
fn a_rehearsed_release_lands_each_package_after_its_dependencies_under_its_dist_tag_and_only_once() {
    let dist = artifacts();
    let registry = NpmRegistry::start();
    let index = PythonIndex::start();
    let rehearsal = rehearse(dist, &registry, &index);
    assert!(rehearsal.status.success(), "the rehearsal failed:\n{}", text(&rehearsal));
    let said = String::from_utf8_lossy(&rehearsal.stdout);

    // The crates, packaged by `cargo publish --dry-run`, each after those it depends on.
    let crates: Vec<&str> =
        said.lines().filter_map(|line| line.strip_suffix(&format!(" {VERSION} (dry run)"))).collect();
    let at = |name: &str| crates.iter().position(|c| *c == name).unwrap_or_else(|| panic!("{name} in {crates:?}"));
    assert!(at("scratchpad-powers") < at("scratchpad-host") && at("scratchpad-components") < at("scratchpad-host"));
    assert!(at("scratchpad-host") < at("scratchpad-cli"), "{crates:?}");
    // The GitHub release it would make, with every file and the checksums.
    let gh = said.lines().find(|line| line.starts_with("would run: gh release create")).expect("the GitHub step");
    assert!(gh.contains(&format!("v{VERSION} --verify-tag")) && gh.contains("SHA256SUMS"), "{gh}");

    // Every npm package at the version under `latest` (a release, not a pre-release), each
    // published after every package of the release it depends on.
    let views: BTreeMap<&str, Value> = NPM_PACKAGES
        .iter()
        .map(|(name, _)| (*name, npm_view(&registry, name).unwrap_or_else(|| panic!("{name} was not published"))))
        .collect();
    let published_at = |name: &str| views[name]["time"][VERSION].as_str().unwrap().to_owned();
    for (name, needs) in NPM_PACKAGES {
        let view = &views[name];
        assert_eq!(view["dist-tags"], serde_json::json!({ "latest": VERSION }), "{name}'s dist-tags");
        assert_eq!(view["version"], VERSION, "{name}");
        for need in *needs {
            assert_eq!(view["optionalDependencies"][need], VERSION, "{name} names {need} at the version");
            assert!(published_at(need) < published_at(name), "{need} was on the registry before {name}");
        }
    }
    assert_eq!(
        views["@scratchpad-dev/cli"]["optionalDependencies"].as_object().unwrap().len(),
        1,
        "the launcher names this platform's package, the one built here"
    );

    // The wheels are on the index and pip installs them from it alone.
    for project in ["scratchpad-cli", "scratchpad-host"] {
        let page = index.page(&format!("{project}/")).unwrap_or_else(|| panic!("the index has no {project}"));
        assert!(page.contains(&format!("-{VERSION}-")), "{project}: {page}");
    }
    let venv_dir = tempfile::tempdir().unwrap();
    let venv = venv_dir.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "creating a virtualenv");
    run(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check", "--no-cache-dir", "--index-url"])
            .arg(format!("{}simple/", index.url()))
            .args([format!("scratchpad-cli=={VERSION}"), format!("scratchpad-host=={VERSION}")])
            // Only the index: not the machine's local wheel directory.
            .env_remove("PIP_FIND_LINKS")
            .env_remove("PIP_INDEX_URL")
            .env_remove("PIP_EXTRA_INDEX_URL"),
        "pip install scratchpad-cli scratchpad-host from the local index",
    );
    let version = run(
        Command::new(venv.join("bin/scratchpad")).arg("--version").env("HOME", venv_dir.path()),
        "the installed scratchpad --version",
    );
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("scratchpad {VERSION}"));
    let host = run(
        Command::new(venv.join("bin/python")).args(["-c", "import scratchpad; print(scratchpad.Host.__name__)"]),
        "importing the installed host wheel",
    );
    assert_eq!(String::from_utf8_lossy(&host.stdout).trim(), "Host");

    // The same version again: refused before anything is uploaded, naming every package and
    // wheel already there, and the registries hold what they held.
    let before = state(&registry, &index);
    let again = rehearse(dist, &registry, &index);
    assert!(!again.status.success(), "a second publish of {VERSION} succeeded:\n{}", text(&again));
    let error = String::from_utf8_lossy(&again.stderr);
    assert!(error.contains("would be published twice") && error.contains("nothing was published"), "{error}");
    for (name, _) in NPM_PACKAGES {
        assert!(error.contains(&format!("{name}@{VERSION} on the npm registry")), "{name} is named: {error}");
    }
    for wheel in index.files().keys() {
        assert!(error.contains(&format!("{wheel} on the Python index")), "{wheel} is named: {error}");
    }
    assert!(!error.contains("Packaging"), "the crates were not even packaged: {error}");
    assert_eq!(state(&registry, &index), before, "the second rehearsal changed the registries");

    // The workflow's npm step alone refuses the same way; `--resume` (a publish that stopped
    // half-way, run again) skips what the registry has with the same bytes.
    let npm_step = ["publish", "npm", "--dir", dist.to_str().unwrap(), "--registry", &registry.url()];
    let refused = xtask(&registry, &npm_step);
    assert!(!refused.status.success(), "{}", text(&refused));
    let error = String::from_utf8_lossy(&refused.stderr);
    assert!(error.contains("already has") && error.contains("nothing was published"), "{error}");
    let resumed = xtask(&registry, &[&npm_step[..], &["--resume"]].concat());
    assert!(resumed.status.success(), "{}", text(&resumed));
    let skipped = String::from_utf8_lossy(&resumed.stdout);
    assert_eq!(skipped.matches("already on the registry with these bytes: skipped").count(), NPM_PACKAGES.len());
    assert_eq!(state(&registry, &index), before, "publish npm changed the registry");
}

#[test]
fn a_version_out_of_lockstep_fails_before_anything_is_published() {
    // This platform's artifacts (hard links: nothing is copied or changed in the cache), but
    // for a launcher packed at another version and a wheel of another version beside the others.
    let dist = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(artifacts()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name != format!("scratchpad-dev-cli-{VERSION}.tgz") {
            std::fs::hard_link(&path, dist.path().join(&name)).unwrap();
        }
        if name.starts_with("scratchpad_cli-") {
            let old = name.replacen(&format!("-{VERSION}-"), "-0.0.1-", 1);
            std::fs::hard_link(&path, dist.path().join(old)).unwrap();
        }
    }
    let launcher = artifacts().join(format!("scratchpad-dev-cli-{VERSION}.tgz"));
    repack_with_version(&launcher, "9.9.9", &dist.path().join(launcher.file_name().unwrap()));

    let registry = NpmRegistry::start();
    let index = PythonIndex::start();
    let rehearsal = rehearse(dist.path(), &registry, &index);
    assert!(!rehearsal.status.success(), "a release out of lockstep was rehearsed:\n{}", text(&rehearsal));
    let error = String::from_utf8_lossy(&rehearsal.stderr);
    assert!(error.contains(&format!("not all at the workspace's version {VERSION}")), "{error}");
    assert!(error.contains("npm package @scratchpad-dev/cli is 9.9.9"), "the launcher is named: {error}");
    assert!(error.contains("scratchpad_cli-0.0.1-") && error.contains("is 0.0.1"), "the wheel: {error}");
    assert!(error.contains("nothing was published"), "{error}");

    for (name, _) in NPM_PACKAGES {
        assert_eq!(npm_view(&registry, name), None, "{name} was published");
    }
    assert!(index.files().is_empty(), "the index received {:?}", index.files());
    assert!(!error.contains("Packaging"), "the crates were not even packaged: {error}");
}

/// What a maintainer runs, with no registry named: the rehearsal starts its own verdaccio and
/// pypiserver on loopback, publishes everything to them, and stops them when it is done.
#[test]
fn with_no_registry_named_the_rehearsal_starts_its_own_on_loopback_and_stops_them() {
    let dist = artifacts().to_str().unwrap();
    let mut xtask = Command::new(env!("CARGO"));
    xtask.args(["xtask", "release", "--dry-run", "--dist", dist, "--no-verify"]).current_dir(root());
    for var in
        ["CARGO_TARGET_DIR", "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_BUILD_TARGET", "NPM_CONFIG_USERCONFIG"]
    {
        xtask.env_remove(var);
    }
    let rehearsal = run(&mut xtask, "cargo xtask release --dry-run with its own registries");
    let said = String::from_utf8_lossy(&rehearsal.stdout);
    for (name, _) in NPM_PACKAGES {
        assert!(said.contains(&format!("{name}@{VERSION} under the dist-tag latest")), "{name}: {said}");
    }
    assert_eq!(said.matches(".whl uploaded to http://127.0.0.1:").count(), 2, "both wheels: {said}");
    let last = said.lines().last().unwrap();
    let urls: Vec<&str> = last.split_whitespace().filter(|word| word.starts_with("http://127.0.0.1:")).collect();
    assert_eq!(urls.len(), 2, "the registries it used: {last}");
    for url in urls {
        let address = url.trim_start_matches("http://").split('/').next().unwrap();
        assert!(std::net::TcpStream::connect(address).is_err(), "{url} still answers after the rehearsal");
    }
}

/// `tarball` (an npm package) packed again into `to` with `version` in its `package.json`.
fn repack_with_version(tarball: &Path, version: &str, to: &Path) {
    let staging = tempfile::tempdir().unwrap();
    run(Command::new("tar").arg("-xzf").arg(tarball).arg("-C").arg(staging.path()), "unpacking the launcher");
    let manifest_path: PathBuf = staging.path().join("package/package.json");
    let mut manifest: Value = serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest["version"] = version.into();
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    run(
        Command::new("tar").arg("-czf").arg(to).arg("-C").arg(staging.path()).arg("package"),
        "packing the launcher at another version",
    );
}
