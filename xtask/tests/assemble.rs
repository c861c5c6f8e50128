//! `cargo xtask dist assemble`: the targets' own artifacts, built on several machines (Linux and
//! Windows on Linux, each macOS target on macOS), put together with the packages that choose
//! among them and `SHA256SUMS`. The per-target artifacts here are small stand-ins (an npm
//! tarball holding only its `package.json`, empty archives and wheels named as `dist` names
//! them); the launcher, the host's API and the Claude Code plugin are packed for real, by `npm
//! pack` from this workspace's sources, into a temporary directory.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::npm_tarball;

use serde_json::{Value, json};
use xtask::dist::assemble::{self, Options};
use xtask::dist::targets::{self, Target};
use xtask::dist::{VERSION, node, npm};
use xtask::publish::{lockstep, npm as publish_npm};

/// The file name `npm pack` gives `name` at this version.
fn tarball_name(name: &str) -> String {
    format!("{}-{VERSION}.tgz", name.trim_start_matches('@').replace('/', "-"))
}

/// Stand-ins for what `dist --target <triple> --no-assemble` leaves for each of `triples` in a
/// new directory under `root` named `machine`: the CLI's and the addon's npm packages, the
/// archive and the CLI wheel.
fn built_on(root: &Path, machine: &str, triples: &[&str]) -> PathBuf {
    let dir = root.join(machine);
    std::fs::create_dir_all(&dir).unwrap();
    for triple in triples {
        let target = Target::named(triple).unwrap();
        let platform =
            |name: &str| json!({ "name": name, "version": VERSION, "os": [target.npm_os], "cpu": [target.npm_cpu] });
        let cli = target.npm_package();
        npm_tarball(&dir, &tarball_name(&cli), platform(&cli));
        let addon = format!("{}-{}", node::HOST, target.node_platform());
        npm_tarball(&dir, &tarball_name(&addon), platform(&addon));
        std::fs::write(dir.join(format!("scratchpad-{VERSION}-{triple}.tar.gz")), triple).unwrap();
        let wheel = format!("scratchpad_cli-{}-py3-none-{}.whl", lockstep::pep440(VERSION), triple.replace('-', "_"));
        std::fs::write(dir.join(wheel), triple).unwrap();
    }
    dir
}

/// The release's three build machines: Linux (Linux x64 and aarch64, Windows x64) and one
/// macOS runner per architecture.
fn release_machines(root: &Path) -> Vec<PathBuf> {
    vec![
        built_on(root, "linux", &["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "x86_64-pc-windows-gnu"]),
        built_on(root, "macos-x64", &["x86_64-apple-darwin"]),
        built_on(root, "macos-arm64", &["aarch64-apple-darwin"]),
    ]
}

fn options(from: Vec<PathBuf>, out: &Path, staging: &Path, complete: bool) -> Options {
    Options { from, out: out.to_owned(), complete, staging: staging.to_owned() }
}

fn manifest(dir: &Path, name: &str) -> Value {
    publish_npm::manifest_of(&dir.join(tarball_name(name))).unwrap()
}

/// `npm pack`'s tarball holds `package/<path>`; its text.
fn file_in(tarball: &Path, path: &str) -> String {
    let output = Command::new("tar").arg("-xzOf").arg(tarball).arg(format!("package/{path}")).output().unwrap();
    assert!(output.status.success(), "{path} in {}", tarball.display());
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_outputs_of_three_machines_make_a_launcher_host_and_plugin_naming_all_five_platforms() {
    let scratch = tempfile::tempdir().unwrap();
    let from = release_machines(&scratch.path().join("targets"));
    let out = scratch.path().join("dist");
    let files = assemble::assemble(&xtask::workspace(), &options(from, &out, &scratch.path().join("staging"), true))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(files.last().unwrap(), &out.join("SHA256SUMS"));

    let every_cli: Vec<String> = targets::ALL.iter().map(Target::npm_package).collect();
    let every_addon: Vec<String> =
        targets::ALL.iter().map(|t| format!("{}-{}", node::HOST, t.node_platform())).collect();
    assert!(every_cli.contains(&"@scratchpad-dev/cli-darwin-arm64".to_owned()), "{every_cli:?}");
    assert!(every_addon.contains(&"@scratchpad-dev/host-darwin-x64".to_owned()), "{every_addon:?}");
    let names = |deps: &Value| {
        let deps = deps.as_object().unwrap();
        assert!(deps.values().all(|v| v == VERSION), "{deps:?}");
        deps.keys().cloned().collect::<Vec<_>>()
    };
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    let launcher = manifest(&out, npm::CLI);
    assert_eq!(sorted(names(&launcher["optionalDependencies"])), sorted(every_cli.clone()));
    let host = manifest(&out, node::HOST);
    assert_eq!(sorted(names(&host["optionalDependencies"])), sorted(every_addon));

    // The plugin's lock file names each platform package with the integrity of the very file
    // assembled, and its `os` and `cpu`.
    let plugin = out.join(tarball_name(npm::CLAUDE_CODE));
    let shrinkwrap: Value = serde_json::from_str(&file_in(&plugin, "npm-shrinkwrap.json")).unwrap();
    for target in targets::ALL {
        let name = target.npm_package();
        let entry = &shrinkwrap["packages"][format!("node_modules/{name}")];
        let integrity = publish_npm::integrity(&out.join(tarball_name(&name))).unwrap();
        assert_eq!(entry["integrity"], integrity.as_str(), "{name}");
        assert_eq!(entry["os"], json!([target.npm_os]), "{name}");
        assert_eq!(entry["cpu"], json!([target.npm_cpu]), "{name}");
    }
    // The launcher it packs maps every platform to its package.
    let script = file_in(&out.join(tarball_name(npm::CLI)), "bin/scratchpad.js");
    for target in targets::ALL {
        assert!(script.contains(&format!("\"{}-{}\": \"{}\"", target.npm_os, target.npm_cpu, target.npm_package())));
    }

    // What the release checks and publishes next accepts the whole set: one version, and
    // every platform package before the packages that name it.
    let checked = lockstep::artifacts(&out, VERSION).unwrap_or_else(|e| panic!("{e}"));
    assert!(checked.ends_with(&format!("13 npm packages, 5 wheels and 5 archives at {VERSION}")), "{checked}");
    let order: Vec<String> = publish_npm::publish_order(&out).unwrap().into_iter().map(|p| p.name).collect();
    let at = |name: &str| order.iter().position(|n| n == name).unwrap_or_else(|| panic!("{name} in {order:?}"));
    for platform in &every_cli {
        assert!(at(platform) < at(npm::CLI) && at(platform) < at(npm::CLAUDE_CODE), "{order:?}");
    }

    // SHA256SUMS lists every other file, by the digest of its bytes.
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), files.len() - 1, "{sums}");
    let windows_archive = format!("scratchpad-{VERSION}-x86_64-pc-windows-gnu.tar.gz");
    assert!(sums.lines().any(|line| line.ends_with(&format!("  {windows_archive}"))), "{sums}");
}

#[test]
fn a_target_built_twice_or_a_whole_dist_is_refused_and_out_is_left_as_it_was() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("targets");
    let mut from = release_machines(&root);
    from.push(built_on(&root, "macos-arm64-again", &["aarch64-apple-darwin"]));
    let whole = built_on(&root, "whole", &[]);
    std::fs::write(whole.join("SHA256SUMS"), "").unwrap();
    std::fs::write(whole.join("notes.txt"), "").unwrap();
    from.push(whole);
    let out = scratch.path().join("dist");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("earlier"), "kept").unwrap();

    let error = assemble::assemble(&xtask::workspace(), &options(from, &out, &scratch.path().join("staging"), true))
        .unwrap_err();
    let addon = tarball_name("@scratchpad-dev/host-darwin-arm64");
    for expected in [
        format!(
            "{addon} is in both {} and {}",
            root.join("macos-arm64").display(),
            root.join("macos-arm64-again").display()
        ),
        format!("{} holds a SHA256SUMS", root.join("whole").display()),
        "nothing was assembled".to_owned(),
    ] {
        assert!(error.contains(&expected), "`{expected}` in: {error}");
    }
    assert_eq!(std::fs::read_to_string(out.join("earlier")).unwrap(), "kept");

    // --out inside a --from directory's path (it is emptied first) is refused too.
    let error = assemble::assemble(
        &xtask::workspace(),
        &options(vec![out.join("sub")], &out, &scratch.path().join("staging"), false),
    )
    .unwrap_err();
    assert!(error.contains("is --out or inside it"), "{error}");
}

#[test]
fn a_target_missing_a_package_or_its_archive_and_a_missing_target_are_named() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("targets");
    let linux =
        built_on(&root, "linux", &["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "x86_64-pc-windows-gnu"]);
    let arm = built_on(&root, "macos-arm64", &["aarch64-apple-darwin"]);
    std::fs::remove_file(arm.join(tarball_name("@scratchpad-dev/host-darwin-arm64"))).unwrap();
    std::fs::remove_file(arm.join(format!("scratchpad-{VERSION}-aarch64-apple-darwin.tar.gz"))).unwrap();
    let staging = scratch.path().join("staging");
    let out = scratch.path().join("dist");

    let error =
        assemble::assemble(&xtask::workspace(), &options(vec![linux.clone(), arm], &out, &staging, false)).unwrap_err();
    assert!(error.contains("aarch64-apple-darwin lacks the npm package @scratchpad-dev/host-darwin-arm64"), "{error}");
    assert!(
        error.contains(&format!(
            "aarch64-apple-darwin lacks the archive scratchpad-{VERSION}-aarch64-apple-darwin.tar.gz"
        )),
        "{error}"
    );
    assert!(!error.contains("x86_64-unknown-linux-gnu lacks"), "{error}");

    // The release asks for every target: the Linux machine's alone are not a release.
    let error = assemble::assemble(&xtask::workspace(), &options(vec![linux], &out, &staging, true)).unwrap_err();
    assert!(error.contains("--complete: no artifacts of x86_64-apple-darwin, aarch64-apple-darwin"), "{error}");
}

#[test]
fn a_package_of_no_target_is_refused_since_assembling_makes_the_launcher_itself() {
    let scratch = tempfile::tempdir().unwrap();
    let linux = built_on(&scratch.path().join("targets"), "linux", &["x86_64-unknown-linux-gnu"]);
    npm_tarball(&linux, &tarball_name(npm::CLI), json!({ "name": npm::CLI, "version": VERSION }));
    npm_tarball(&linux, "freebsd.tgz", json!({ "name": "@scratchpad-dev/cli-freebsd-x64", "version": VERSION }));
    let error = assemble::platforms_in(&linux).unwrap_err();
    assert!(
        error.contains(&format!("{} is @scratchpad-dev/cli, which is no target's", tarball_name(npm::CLI))),
        "{error}"
    );
    assert!(error.contains("freebsd.tgz is @scratchpad-dev/cli-freebsd-x64, which is no target's"), "{error}");
}

#[test]
fn assemble_and_dist_parse_their_arguments() {
    let workspace = xtask::workspace();
    let parsed = Options::parse(&workspace, &["--from", "a", "--from", "/b", "--complete", "--out", "o"]).unwrap();
    assert_eq!(parsed.from, [std::path::absolute("a").unwrap(), PathBuf::from("/b")]);
    assert_eq!(parsed.out, std::path::absolute("o").unwrap());
    assert!(parsed.complete);
    assert!(Options::parse(&workspace, &["--out", "o"]).unwrap_err().contains("needs --from DIR"));
    assert!(Options::parse(&workspace, &["--from", "a", "--target", "x"]).unwrap_err().contains("`--target`"));

    let dist = xtask::dist::Options::parse(&workspace, &["--target", "aarch64-apple-darwin", "--no-assemble"]).unwrap();
    assert_eq!(dist.targets, [Target::named("aarch64-apple-darwin").unwrap()]);
    assert!(!dist.assemble);
    let default = xtask::dist::Options::parse(&workspace, &[]).unwrap();
    assert!(default.assemble);
    assert_eq!(default.targets, targets::buildable_here());
}

#[test]
fn dist_refuses_a_target_built_on_another_os_before_it_touches_anything() {
    let workspace = xtask::workspace();
    let elsewhere = *targets::ALL.iter().find(|t| !t.builds_here()).expect("no machine builds every target");
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("dist");
    let options =
        xtask::dist::Options { targets: vec![elsewhere], profile: "dev".into(), out: out.clone(), assemble: false };
    let error = xtask::dist::dist(&workspace, &options).unwrap_err();
    assert!(error.contains(&format!("{} (on {})", elsewhere.triple, elsewhere.build_os())), "{error}");
    assert!(error.contains("dist assemble --from"), "{error}");
    assert!(!out.exists());
}
