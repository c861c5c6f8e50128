//! The build profiles' per-package overrides name real packages and mean what their comments
//! say. `[profile.dev.package]` optimises every dependency but unoptimises, by name, code that
//! runs only while compiling (proc macros and what they use, build scripts' generators): were
//! one of those to become a dependency of code that runs, the tests would run it unoptimised
//! and nothing else would say so. And a name matching no package (a version moved on) would be
//! an override that silently does nothing.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use serde_json::Value;

/// `cargo metadata` of the workspace.
fn metadata() -> Value {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(xtask::workspace())
        .output()
        .expect("running cargo metadata");
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON")
}

/// Every package of the lock file as `(name, version, runs)`: `runs` when the package is
/// reachable from a workspace member through normal or dev dependencies without passing
/// through a proc macro (its code is part of something that runs, on any platform).
fn packages() -> Vec<(String, String, bool)> {
    let metadata = metadata();
    let by_id: HashMap<&str, &Value> =
        metadata["packages"].as_array().unwrap().iter().map(|p| (p["id"].as_str().unwrap(), p)).collect();
    let is_proc_macro = |id: &str| {
        by_id[id]["targets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|target| target["kind"].as_array().unwrap().iter().any(|kind| kind == "proc-macro"))
    };
    let nodes: HashMap<&str, &Value> = metadata["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| (node["id"].as_str().unwrap(), node))
        .collect();
    let mut runs = BTreeSet::new();
    let mut pending: Vec<&str> =
        metadata["workspace_members"].as_array().unwrap().iter().map(|id| id.as_str().unwrap()).collect();
    while let Some(id) = pending.pop() {
        if !runs.insert(id) {
            continue;
        }
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let at_run_time =
                dep["dep_kinds"].as_array().unwrap().iter().any(|kind| kind["kind"].is_null() || kind["kind"] == "dev");
            let dep_id = dep["pkg"].as_str().unwrap();
            if at_run_time && !is_proc_macro(dep_id) {
                pending.push(dep_id);
            }
        }
    }
    nodes
        .keys()
        .map(|id| {
            let package = by_id[id];
            (
                package["name"].as_str().unwrap().to_owned(),
                package["version"].as_str().unwrap().to_owned(),
                runs.contains(id),
            )
        })
        .collect()
}

/// The overrides of `[profile.<profile>.package]` setting `opt-level` to `level`: their specs
/// (`name` or `name@version`).
fn overrides(profile: &str, level: i64) -> Vec<String> {
    let manifest: toml::Table =
        std::fs::read_to_string(xtask::workspace().join("Cargo.toml")).unwrap().parse().unwrap();
    let table =
        manifest["profile"][profile]["package"].as_table().unwrap_or_else(|| panic!("[profile.{profile}.package]"));
    table
        .iter()
        .filter(|(spec, settings)| {
            *spec != "*" && settings.get("opt-level").and_then(toml::Value::as_integer) == Some(level)
        })
        .map(|(spec, _)| spec.clone())
        .collect()
}

/// The packages `spec` names.
fn matching<'a>(packages: &'a [(String, String, bool)], spec: &str) -> Vec<&'a (String, String, bool)> {
    let (name, version) = spec.split_once('@').map_or((spec, None), |(name, version)| (name, Some(version)));
    packages.iter().filter(|(n, v, _)| n == name && version.is_none_or(|version| version == v)).collect()
}

#[test]
fn the_unoptimised_packages_of_the_dev_profile_run_only_while_compiling() {
    let packages = packages();
    let build_time = overrides("dev", 0);
    assert!(build_time.len() > 10, "the dev profile names the build-time packages: {build_time:?}");
    for spec in &build_time {
        let matched = matching(&packages, spec);
        assert!(!matched.is_empty(), "[profile.dev.package] names `{spec}`, which no package in Cargo.lock is");
        for (name, version, runs) in matched {
            assert!(
                !runs,
                "{name} {version} is unoptimised in the dev profile as build-time code, but code that runs depends on \
                 it: take `{spec}` out of [profile.dev.package]"
            );
        }
    }
}

#[test]
fn the_optimised_packages_of_the_dist_test_profile_exist_and_run() {
    let packages = packages();
    let optimised = overrides("dist-test", 2);
    assert!(optimised.iter().any(|spec| spec == "cranelift-codegen"), "Cranelift stays optimised: {optimised:?}");
    for spec in &optimised {
        let matched = matching(&packages, spec);
        assert!(!matched.is_empty(), "[profile.dist-test.package] names `{spec}`, which no package in Cargo.lock is");
        assert!(
            matched.iter().all(|(_, _, runs)| *runs),
            "`{spec}` is optimised for the code that runs, but some of it runs only while compiling"
        );
    }
}
