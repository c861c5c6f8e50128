//! What a user installs, installed as a user would: the artifacts of `cargo xtask dist` for
//! this platform (`scratchpad_tests::dist`) published to a real npm registry on loopback
//! (verdaccio) or put in a local Python index, then installed in a fresh directory with a fresh
//! `HOME` and a `PATH` that has no cargo, rustc or `scratchpad`: `npm install` and `npx`, `pip`
//! into a fresh virtualenv, the real Claude Code's `plugin marketplace add` and `plugin
//! install`, and `npx @scratchpad-dev/cli setup codex` before the real Codex. Everything is
//! offline: the registry has no uplink, pip gets `--no-index`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use scratchpad_tests::agents::{claude_code as claude, codex};
use scratchpad_tests::dist::{TARGET, VERSION, artifacts, file};
use scratchpad_tests::npm_registry::NpmRegistry;
use scratchpad_tests::runtimes::{node24, python_with, root, run, system_npm};
use scratchpad_tests::scripted::Model;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The platform package this machine installs.
const PLATFORM_PACKAGE: &str = "scratchpad-dev-cli-linux-x64";

/// A directory of shims for a user's `PATH`: `node` (Node 24, which Claude Code and Codex need)
/// and the machine's `npm` and `npx` run on it. Nothing else: no cargo, rustc or scratchpad.
fn user_bin(dir: &Path) -> PathBuf {
    let bin = dir.join("user-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let npm = system_npm("the install tests");
    let npx = npm.with_file_name("npx");
    for (name, target) in [("node", node24()), ("npm", npm), ("npx", npx)] {
        std::os::unix::fs::symlink(std::fs::canonicalize(&target).unwrap(), bin.join(name)).unwrap();
    }
    bin
}

/// A user's `PATH`: their shims, then the system's directories; checked to hold no Rust
/// toolchain and no `scratchpad`.
fn user_path(bin: &Path) -> OsString {
    let path = OsString::from(format!("{}:/usr/bin:/bin", bin.display()));
    for program in ["cargo", "rustc", "rustup", "scratchpad"] {
        let found = std::env::split_paths(&path).any(|dir| dir.join(program).exists());
        assert!(!found, "the user's PATH must not hold {program}: {path:?}");
    }
    path
}

/// A fresh user: a home whose `.npmrc` makes `registry` their default registry.
struct User {
    dir: tempfile::TempDir,
    path: OsString,
}

impl User {
    fn new(registry: &NpmRegistry) -> User {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::write(dir.path().join("home/.npmrc"), registry.user_npmrc()).unwrap();
        let path = user_path(&user_bin(dir.path()));
        User { dir, path }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A fresh npm project of this user's (`npm init -y`).
    fn project(&self) -> PathBuf {
        let project = self.dir.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        run(self.command("npm", &project).args(["init", "-y"]), "npm init");
        project
    }

    /// `program` in this user's environment only, in `cwd`.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>, cwd: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", self.home())
            .env("XDG_DATA_HOME", self.home().join(".local/share"))
            .env("XDG_CACHE_HOME", self.home().join(".cache"))
            .current_dir(cwd);
        command
    }
}

fn publish(registry: &NpmRegistry, packages: &[&str]) {
    for package in packages {
        registry.publish(&file(artifacts(), &format!("{package}-{VERSION}"), ".tgz"));
    }
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// How many compiled components (`*.cwasm`) `dir` holds (0 when it does not exist).
fn cwasm_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries.filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "cwasm")).count()
}

fn sha256(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn npm_install_picks_the_platform_package_and_npx_runs_the_demo() {
    let registry = NpmRegistry::start();
    publish(&registry, &[PLATFORM_PACKAGE, "scratchpad-dev-cli"]);
    let user = User::new(&registry);
    let project = user.project();
    run(
        user.command("npm", &project).args(["install", "--no-audit", "--no-fund", "@scratchpad-dev/cli"]),
        "npm install",
    );
    let installed = project.join("node_modules/@scratchpad-dev/cli-linux-x64/bin/scratchpad");
    assert!(installed.is_file(), "npm installed this platform's package by itself");
    let listed: Vec<String> = std::fs::read_dir(project.join("node_modules/@scratchpad-dev"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(listed.len(), 2, "the launcher and one platform package, no other: {listed:?}");

    let version = run(user.command("npx", &project).args(["scratchpad", "--version"]), "npx scratchpad --version");
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("scratchpad {VERSION}"));
    let demo = run(user.command("npx", &project).args(["scratchpad", "demo"]), "npx scratchpad demo");
    scratchpad_tests::assert_demo_output(&String::from_utf8_lossy(&demo.stdout));
    // The first start compiled nothing: the package's precompiled components were loaded.
    let precompiled = installed.parent().unwrap().join("precompiled");
    assert_eq!(cwasm_files(&precompiled), scratchpad_host::embedded::EMBEDDED.len(), "one per embedded component");
    let cache = user.home().join(".cache/scratchpad");
    assert_eq!(cwasm_files(&cache), 0, "the first start compiled and cached nothing");

    // The README's lines: without installing first (npx assumes yes when stdin is no
    // terminal), and installed globally.
    let elsewhere = user.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let npx = run(
        user.command("npx", &elsewhere).args(["@scratchpad-dev/cli", "demo"]).stdin(std::process::Stdio::null()),
        "npx @scratchpad-dev/cli demo",
    );
    scratchpad_tests::assert_demo_output(&String::from_utf8_lossy(&npx.stdout));
    let prefix = user.home().join(".npm-global");
    run(
        user.command("npm", &elsewhere)
            .args(["install", "-g", "--no-audit", "--no-fund", "@scratchpad-dev/cli"])
            .env("NPM_CONFIG_PREFIX", &prefix),
        "npm install -g @scratchpad-dev/cli",
    );
    let global = run(user.command(prefix.join("bin/scratchpad"), &elsewhere).arg("--version"), "the global scratchpad");
    assert_eq!(String::from_utf8_lossy(&global.stdout).trim(), format!("scratchpad {VERSION}"));

    // A platform with no package: the launcher's one line naming those that exist.
    let launcher = project.join("node_modules/@scratchpad-dev/cli/bin/scratchpad.js");
    let script = format!(
        "Object.defineProperty(process, 'platform', {{ value: 'sunos' }}); require({:?})",
        launcher.display().to_string()
    );
    let refused = user.command("node", &project).args(["-e", &script, "--", "demo"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(
        message.trim(),
        "scratchpad: no scratchpad binary is built for sunos-x64; packages exist for: linux-x64, linux-arm64, \
         win32-x64, darwin-x64, darwin-arm64"
    );
}

/// Bad input at install: a tarball damaged in the registry is refused by npm's integrity check
/// (nothing installed), and when npm installs no platform package (here: told the machine is
/// another CPU), the launcher says which package is missing and which platforms exist.
#[test]
fn a_damaged_tarball_is_refused_and_a_missing_platform_package_is_named() {
    let registry = NpmRegistry::start();
    publish(&registry, &[PLATFORM_PACKAGE, "scratchpad-dev-cli"]);
    let user = User::new(&registry);
    let project = user.project();
    let platform_package = project.join("node_modules/@scratchpad-dev/cli-linux-x64");

    run(
        user.command("npm", &project).args([
            "install",
            "--no-audit",
            "--no-fund",
            "--cpu",
            "arm64",
            "@scratchpad-dev/cli",
        ]),
        "npm install --cpu arm64 @scratchpad-dev/cli",
    );
    assert!(!platform_package.exists(), "npm installed the x64 package for arm64");
    let missing = user.command("npx", &project).args(["scratchpad", "--version"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing));
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim(),
        "scratchpad: @scratchpad-dev/cli-linux-x64 is not installed (npm skips an optional dependency whose os, cpu \
         or libc does not match, or that --omit=optional left out); reinstall @scratchpad-dev/cli, or see the \
         packages that exist: linux-x64, linux-arm64, win32-x64, darwin-x64, darwin-arm64"
    );

    let stored = registry.stored_tarball("@scratchpad-dev/cli-linux-x64", VERSION);
    let mut bytes = std::fs::read(&stored).unwrap_or_else(|e| panic!("{}: {e}", stored.display()));
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&stored, bytes).unwrap();
    let damaged = user
        .command("npm", &project)
        .args(["install", "--no-audit", "--no-fund", "@scratchpad-dev/cli-linux-x64"])
        .output()
        .unwrap();
    assert!(!damaged.status.success(), "npm installed a damaged tarball: {}", text(&damaged));
    // npm's words for it; its error code is EINTEGRITY or zlib's Z_DATA_ERROR, whichever check
    // of the stream trips first.
    assert!(text(&damaged).contains("seems to be corrupted"), "{}", text(&damaged));
    assert!(!platform_package.exists(), "something of the damaged tarball was installed");
}

#[test]
fn the_wheels_install_from_a_local_index_and_meet_manylinux_2_17() {
    let dist = artifacts();
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "creating a virtualenv");
    run(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check", "--no-index", "--find-links"])
            .arg(dist)
            .args(["scratchpad-cli", "scratchpad-host"]),
        "pip install scratchpad-cli scratchpad-host from the local index",
    );
    let version =
        run(Command::new(venv.join("bin/scratchpad")).arg("--version").env("HOME", dir.path()), "scratchpad --version");
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("scratchpad {VERSION}"));
    // pip put the wheel's precompiled components under the environment's prefix, where the
    // binary finds them: its first start compiles nothing.
    let demo = run(
        Command::new(venv.join("bin/scratchpad"))
            .arg("demo")
            .env("HOME", dir.path())
            .env("XDG_CACHE_HOME", dir.path().join("pip-cache")),
        "scratchpad demo from the virtualenv",
    );
    scratchpad_tests::assert_demo_output(&String::from_utf8_lossy(&demo.stdout));
    assert_eq!(cwasm_files(&venv.join("share/scratchpad/precompiled")), scratchpad_host::embedded::EMBEDDED.len());
    scratchpad_tests::assert_no_embedded_component_compiled(&dir.path().join("pip-cache/scratchpad"));
    let script = "import scratchpad, sys\n\
                  host = scratchpad.Host.open(sys.argv[1])\n\
                  host.create_session('s1')\n\
                  turn = scratchpad.Turn('s1', 'turn-1')\n\
                  host.call_tool(turn, 'session.scratchpad', {'action': 'set_plan', 'content': '1. WHEEL-PLAN'})\n\
                  prompt = host.before_query(scratchpad.Turn('s1', 'turn-2'), 'go on')\n\
                  system, user = prompt.render('sys', 'go on')\n\
                  print(system, user)\n";
    let session = run(
        Command::new(venv.join("bin/python"))
            .args(["-c", script])
            .arg(dir.path().join("agent.db"))
            .env("XDG_CACHE_HOME", dir.path().join("cache")),
        "a session through the installed host wheel",
    );
    assert!(String::from_utf8_lossy(&session.stdout).contains("1. WHEEL-PLAN"), "{}", text(&session));

    // uv runs the CLI wheel as `uvx --from scratchpad-cli scratchpad` does, offline.
    let tools = || python_with("tests/clients/install-requirements.txt", "target/install-tools");
    let uvx = run(
        tools()
            .args(["-m", "uv", "tool", "run", "--offline", "--no-index", "--find-links"])
            .arg(dist)
            .args(["--from", "scratchpad-cli", "scratchpad", "demo"])
            .env("HOME", dir.path())
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("UV_CACHE_DIR", dir.path().join("uv-cache"))
            .env("UV_TOOL_DIR", dir.path().join("uv-tools")),
        "uvx --from scratchpad-cli scratchpad demo",
    );
    scratchpad_tests::assert_demo_output(&String::from_utf8_lossy(&uvx.stdout));
    // Neither uv's install of the CLI nor the host wheel compiled an embedded component.
    scratchpad_tests::assert_no_embedded_component_compiled(&dir.path().join("cache/scratchpad"));

    // auditwheel, the PyPA's checker, on both wheels.
    let auditwheel = tools;
    for prefix in ["scratchpad_cli-", "scratchpad_host-"] {
        let wheel = file(dist, prefix, ".whl");
        let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.contains("manylinux_2_17_x86_64"), "{name}");
        let shown = run(auditwheel().args(["-m", "auditwheel", "show"]).arg(&wheel), "auditwheel show");
        let shown = String::from_utf8_lossy(&shown.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            shown.contains("consistent with the following platform tag: \"manylinux_2_17_x86_64\""),
            "{name}: {shown}"
        );
    }
}

#[test]
fn one_binary_goes_into_the_archive_the_npm_package_and_the_wheel_and_sha256sums_lists_every_artifact() {
    let dist = artifacts();
    let dir = tempfile::tempdir().unwrap();
    let archive = file(dist, &format!("scratchpad-{VERSION}-{TARGET}"), ".tar.gz");
    run(Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(dir.path()), "unpacking the archive");
    let from_archive = dir.path().join(format!("scratchpad-{VERSION}-{TARGET}/scratchpad"));
    run(
        Command::new("tar").arg("-xzf").arg(file(dist, PLATFORM_PACKAGE, ".tgz")).arg("-C").arg(dir.path()),
        "unpacking the npm package",
    );
    let from_npm = dir.path().join("package/bin/scratchpad");
    let wheel = dir.path().join("wheel");
    run(
        Command::new("python3").args(["-m", "zipfile", "-e"]).arg(file(dist, "scratchpad_cli-", ".whl")).arg(&wheel),
        "unpacking the wheel",
    );
    let from_wheel = wheel.join(format!("scratchpad_cli-{VERSION}.data/scripts/scratchpad"));
    assert_eq!(sha256(&from_archive), sha256(&from_npm), "the npm package holds the archive's binary");
    let archive_precompiled = from_archive.parent().unwrap().join("precompiled");
    assert_eq!(cwasm_files(&archive_precompiled), scratchpad_host::embedded::EMBEDDED.len());
    let wheel_precompiled = wheel.join(format!("scratchpad_cli-{VERSION}.data/data/share/scratchpad/precompiled"));
    for (package, precompiled) in
        [("npm package", from_npm.parent().unwrap().join("precompiled")), ("wheel", wheel_precompiled)]
    {
        assert_eq!(cwasm_files(&precompiled), cwasm_files(&archive_precompiled), "the {package}'s precompiled/");
        for entry in std::fs::read_dir(&archive_precompiled).unwrap() {
            let path = entry.unwrap().path();
            let twin = precompiled.join(path.file_name().unwrap());
            assert_eq!(sha256(&path), sha256(&twin), "the {package} holds the archive's {}", path.display());
        }
    }
    assert_eq!(sha256(&from_archive), sha256(&from_wheel), "the wheel holds the archive's binary");
    let version = run(Command::new(&from_archive).arg("--version"), "the archive's binary");
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("scratchpad {VERSION}"));

    let sums = std::fs::read_to_string(dist.join("SHA256SUMS")).unwrap();
    let mut listed = 0;
    for line in sums.lines() {
        let (digest, name) = line.split_once("  ").expect("`<digest>  <file>`");
        assert_eq!(sha256(&dist.join(name)), digest, "{name}");
        listed += 1;
    }
    let files = std::fs::read_dir(dist).unwrap().count();
    assert_eq!(listed, files - 1, "every artifact but SHA256SUMS itself is listed:\n{sums}");
}

/// Claude Code installs the plugin the way the README says (its marketplace, in this
/// repository, names the npm package) from the registry, with the binary for this platform and
/// nothing on `PATH`; the plan set in turn 1 is injected in turn 2 and after `/compact`.
#[test]
fn claude_code_installs_the_plugin_from_npm_with_its_binary_and_keeps_the_plan_through_compact() {
    let registry = NpmRegistry::start();
    publish(&registry, &[PLATFORM_PACKAGE, "scratchpad-dev-claude-code"]);
    let user = User::new(&registry);
    let (binary, _) = claude::install();
    let script = json!({
        "rules": [
            { "when": "SCRIPT:plan", "reply": [{ "tool_use": { "name": format!("{}session_scratchpad", claude::PREFIX),
                "input": { "action": "set_plan", "content": "1. NPM-PLAN-7: ship it" } } }] },
            { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
        ],
        "compact_summary": "SUMMARY: a plan was made.",
    });
    let model = Model::start("anthropic", user.dir.path(), &script);
    let claude = claude::Claude {
        binary,
        path: user.path.clone(),
        home: user.home(),
        model_url: model.url.clone(),
        scratchpad: None,
        database: user.dir.path().join("scratchpad.db"),
        config: None,
        extra_args: Vec::new(),
        plugin_dir: false,
    };
    claude.claude(&["plugin", "marketplace", "add", root().to_str().unwrap()]);
    let installed = claude.claude(&["plugin", "install", "scratchpad@scratchpad"]);
    assert!(installed.contains("Successfully installed"), "{installed}");
    let plugin_root = user.home().join(format!(".claude/plugins/cache/scratchpad/scratchpad/{VERSION}"));
    assert!(
        plugin_root.join("node_modules/@scratchpad-dev/cli-linux-x64/bin/scratchpad").is_file(),
        "Claude Code installed the platform binary with the plugin"
    );

    let first = claude.prompt("SCRIPT:plan make a plan", None);
    assert_eq!(first["result"], "PLAN-SAVED", "the tool call succeeded: {first}");
    let session = first["session_id"].as_str().unwrap().to_owned();
    claude.prompt("SCRIPT:next continue", Some(&session));
    assert!(claude::text_of(&model.turn_requests().pop().unwrap()).contains("NPM-PLAN-7"), "injected on turn 2");
    let compacted = claude.run("/compact", Some(&session));
    assert!(compacted.status.success(), "{}", String::from_utf8_lossy(&compacted.stderr));
    claude.prompt("SCRIPT:after what next?", Some(&session));
    let last = model.turn_requests().pop().unwrap();
    assert!(claude::text_of(&last).contains("SUMMARY: a plan was made."), "the history was compacted");
    assert!(claude::text_of(&last).contains("NPM-PLAN-7"), "the plan is injected after /compact");
}

/// `npx @scratchpad-dev/cli setup codex`, with nothing else installed, merges the integration
/// into a configuration that has settings of its own (they stay), and the real Codex then
/// offers the tool and injects the plan.
#[test]
fn npx_setup_codex_keeps_the_configuration_and_codex_injects_the_plan() {
    let registry = NpmRegistry::start();
    publish(&registry, &[PLATFORM_PACKAGE, "scratchpad-dev-cli"]);
    let user = User::new(&registry);
    let script = json!({ "rules": [
        { "when": "SCRIPT:plan", "reply": [{ "tool_use": { "namespace": codex::NAMESPACE, "name": "session_scratchpad",
            "input": { "action": "set_plan", "content": "1. NPX-CODEX-PLAN" } } }] },
        { "when": "Plan set.", "reply": [{ "text": "PLAN-SAVED" }] },
    ] });
    let model = Model::start("responses", user.dir.path(), &script);
    let codex = codex::Codex::set_up(user.dir.path(), &model, "", |codex_home| {
        let out = run(
            user.command("npx", user.dir.path())
                .args(["--yes", "@scratchpad-dev/cli", "setup", "codex"])
                .env("CODEX_HOME", codex_home),
            "npx @scratchpad-dev/cli setup codex",
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(said.contains("updated"), "{said}");
        let copy = user.home().join(format!(".local/share/scratchpad/bin/{VERSION}/scratchpad"));
        assert!(copy.is_file(), "setup put the binary in the data directory: {said}");
        let config = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
        assert!(config.contains(&format!("command = \"{}\"", copy.display())), "{config}");
    });
    let (thread, reply) = codex.exec("SCRIPT:plan make a plan", None);
    assert_eq!(reply, "PLAN-SAVED");
    codex.exec("SCRIPT:next continue", Some(&thread));
    let last = model.turn_requests().pop().unwrap().to_string();
    assert!(last.contains("NPX-CODEX-PLAN"), "the plan is injected on the next turn");
    let _: Value = serde_json::from_str(&codex.show(&thread)).unwrap();
}
