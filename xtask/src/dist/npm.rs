//! The npm packages, in the shape Codex, Claude Code, esbuild and biome ship native binaries:
//! one package per platform carrying the binary (`os`, `cpu`, `libc`, so npm installs only the
//! one that matches), and packages that depend on all of them as optional dependencies at the
//! exact same version. Nothing is downloaded at install or at run time.
//!
//! - `@scratchpad-dev/cli-<os>-<cpu>`: `bin/scratchpad[.exe]` (and `bin/precompiled/`).
//! - `@scratchpad-dev/cli`: the launcher (`packaging/npm/cli/bin/scratchpad.js`, `bin:
//!   scratchpad`), so `npx @scratchpad-dev/cli demo` works.
//! - `@scratchpad-dev/claude-code`: the Claude Code plugin (`integrations/claude-code`), for a
//!   marketplace's `{"source": "npm"}` entry. Claude Code installs an npm plugin's dependencies
//!   only from a lock file it ships, so the package carries an `npm-shrinkwrap.json` naming each
//!   platform package with its `integrity`; its `bin/scratchpad` runs the one npm installed.
//!
//! Tarballs come from `npm pack`, which fixes file times and order, so they are reproducible.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value, json};

use super::assemble::Staging;
use super::{Build, Target, VERSION};

/// The launcher package; the platform packages are named after it.
pub const CLI: &str = "@scratchpad-dev/cli";
/// The Claude Code plugin package.
pub const CLAUDE_CODE: &str = "@scratchpad-dev/claude-code";
/// The registry the lock file of the plugin names; npm rewrites it to the registry the user
/// configured (its `replace-registry-host` default), so a mirror works as well.
const REGISTRY: &str = "https://registry.npmjs.org";
/// The plugin's files, relative to `integrations/claude-code`.
const PLUGIN_FILES: &[&str] = &[".claude-plugin/plugin.json", "hooks/hooks.json", ".mcp.json", "bin/scratchpad"];

/// A packed package.
#[derive(Debug, Clone)]
pub struct Packed {
    /// Its name.
    pub name: String,
    /// The tarball.
    pub file: PathBuf,
    /// npm's `integrity` of the tarball (`sha512-…`).
    pub integrity: String,
}

/// The package carrying `target`'s `binary`, packed into `out`.
pub fn platform_package(
    build: &Build,
    target: &Target,
    binary: &Path,
    precompiled: Option<&Path>,
    out: &Path,
) -> Result<Packed, String> {
    let name = target.npm_package();
    let dir = build.scratch(&format!("npm/{name}"))?;
    let mut manifest =
        platform_manifest(&name, &format!("The scratchpad binary for {} ({})", target.triple, CLI), target);
    manifest.insert("files".into(), json!(["bin"]));
    write_json(&dir.join("package.json"), &Value::Object(manifest))?;
    write(
        &dir.join("README.md"),
        &format!(
            "# {name}\n\nThe `scratchpad` binary for `{}`. Install [`{CLI}`](https://www.npmjs.com/package/{CLI}), which picks it.\n",
            target.triple
        ),
    )?;
    copy_executable(binary, &dir.join("bin").join(target.exe))?;
    super::precompiled::copy_into(precompiled, &dir.join("bin"))?;
    pack(&dir, out)
}

/// The launcher `@scratchpad-dev/cli`, depending on `platforms`, packed into `out`.
pub fn launcher(staging: &Staging, platforms: &[(Target, Packed)], out: &Path) -> Result<Packed, String> {
    let dir = staging.scratch(&format!("npm/{CLI}"))?;
    let source = staging.workspace.join("packaging/npm/cli");
    let mut manifest =
        manifest(CLI, "Agent working memory that survives context compaction: the scratchpad CLI, prebuilt");
    manifest.insert("bin".into(), json!({ "scratchpad": "bin/scratchpad.js" }));
    manifest.insert("files".into(), json!(["bin"]));
    manifest.insert("engines".into(), json!({ "node": ">=18" }));
    manifest.insert("optionalDependencies".into(), optional_dependencies(platforms));
    write_json(&dir.join("package.json"), &Value::Object(manifest))?;
    copy(&source.join("README.md"), &dir.join("README.md"))?;
    copy_executable(&source.join("bin/scratchpad.js"), &dir.join("bin/scratchpad.js"))?;
    pack(&dir, out)
}

/// The Claude Code plugin `@scratchpad-dev/claude-code`, depending on `platforms` through its
/// shrinkwrap, packed into `out`.
pub fn claude_code_plugin(staging: &Staging, platforms: &[(Target, Packed)], out: &Path) -> Result<Packed, String> {
    let dir = staging.scratch(&format!("npm/{CLAUDE_CODE}"))?;
    let source = staging.workspace.join("integrations/claude-code");
    for file in PLUGIN_FILES {
        copy(&source.join(file), &dir.join(file))?;
    }
    copy(&source.join("README.md"), &dir.join("README.md"))?;
    let plugin: Value = read_json(&source.join(".claude-plugin/plugin.json"))?;
    if plugin["version"] != VERSION {
        return Err(format!(
            "integrations/claude-code/.claude-plugin/plugin.json is version {}, not {VERSION}",
            plugin["version"]
        ));
    }
    let description = plugin["description"].as_str().unwrap_or_default();
    let mut manifest = manifest(CLAUDE_CODE, description);
    let mut files: Vec<&str> = PLUGIN_FILES.to_vec();
    files.push("npm-shrinkwrap.json");
    manifest.insert("files".into(), json!(files));
    manifest.insert("optionalDependencies".into(), optional_dependencies(platforms));
    write_json(&dir.join("package.json"), &Value::Object(manifest.clone()))?;
    write_json(&dir.join("npm-shrinkwrap.json"), &shrinkwrap(&manifest, platforms))?;
    pack(&dir, out)
}

/// The fields every package shares: name, version, licence, repository.
pub(super) fn manifest(name: &str, description: &str) -> Map<String, Value> {
    let mut manifest = Map::new();
    manifest.insert("name".into(), json!(name));
    manifest.insert("version".into(), json!(VERSION));
    manifest.insert("description".into(), json!(description));
    manifest.insert("license".into(), json!("Apache-2.0 WITH LLVM-exception"));
    manifest.insert("homepage".into(), json!("https://github.com/scratchpad-dev/scratchpad"));
    manifest.insert(
        "repository".into(),
        json!({ "type": "git", "url": "git+https://github.com/scratchpad-dev/scratchpad.git" }),
    );
    manifest
}

/// [`manifest`] with `target`'s `os`, `cpu` and `libc`, so npm installs the package only there.
pub(super) fn platform_manifest(name: &str, description: &str, target: &Target) -> Map<String, Value> {
    let mut manifest = manifest(name, description);
    manifest.insert("os".into(), json!([target.npm_os]));
    manifest.insert("cpu".into(), json!([target.npm_cpu]));
    if let Some(libc) = target.npm_libc {
        manifest.insert("libc".into(), json!([libc]));
    }
    manifest
}

pub(super) fn optional_dependencies(platforms: &[(Target, Packed)]) -> Value {
    Value::Object(platforms.iter().map(|(_, packed)| (packed.name.clone(), json!(VERSION))).collect())
}

/// An `npm-shrinkwrap.json` (lock file version 3) for a package whose only dependencies are the
/// optional `platforms`: each with its registry URL, integrity and platform fields, which npm
/// (and Claude Code before it) keeps, so only the matching one is installed.
fn shrinkwrap(manifest: &Map<String, Value>, platforms: &[(Target, Packed)]) -> Value {
    let mut packages = Map::new();
    let root: Map<String, Value> = ["name", "version", "license", "optionalDependencies"]
        .iter()
        .filter_map(|key| manifest.get(*key).map(|value| (key.to_string(), value.clone())))
        .collect();
    packages.insert(String::new(), Value::Object(root));
    for (target, packed) in platforms {
        let basename = packed.name.rsplit('/').next().unwrap();
        let mut entry = json!({
            "version": VERSION,
            "resolved": format!("{REGISTRY}/{}/-/{basename}-{VERSION}.tgz", packed.name),
            "integrity": packed.integrity,
            "license": "Apache-2.0 WITH LLVM-exception",
            "optional": true,
            "os": [target.npm_os],
            "cpu": [target.npm_cpu],
        });
        if let Some(libc) = target.npm_libc {
            entry["libc"] = json!([libc]);
        }
        packages.insert(format!("node_modules/{}", packed.name), entry);
    }
    json!({
        "name": manifest["name"],
        "version": VERSION,
        "lockfileVersion": 3,
        "requires": true,
        "packages": packages,
    })
}

/// `npm pack` of `dir` into `out`.
pub(super) fn pack(dir: &Path, out: &Path) -> Result<Packed, String> {
    let output = Command::new("npm")
        .args(["pack", "--json", "--pack-destination"])
        .arg(out)
        .arg(dir)
        .output()
        .map_err(|e| format!("running npm (npm is needed to pack the npm packages): {e}"))?;
    if !output.status.success() {
        return Err(format!("npm pack {} failed: {}", dir.display(), String::from_utf8_lossy(&output.stderr)));
    }
    let report: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("npm pack's report: {e}"))?;
    let packed = &report[0];
    let field =
        |key: &str| packed[key].as_str().map(str::to_owned).ok_or_else(|| format!("npm pack reported no {key}"));
    Ok(Packed { name: field("name")?, file: out.join(field("filename")?), integrity: field("integrity")? })
}

pub(super) fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub(super) fn write_json(path: &Path, value: &Value) -> Result<(), String> {
    write(path, &(serde_json::to_string_pretty(value).unwrap() + "\n"))
}

pub(super) fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| format!("creating {}: {e}", path.display()))?;
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

pub(super) fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to.parent().unwrap()).map_err(|e| format!("creating {}: {e}", to.display()))?;
    std::fs::copy(from, to).map(|_| ()).map_err(|e| format!("copying {}: {e}", from.display()))
}

fn copy_executable(from: &Path, to: &Path) -> Result<(), String> {
    copy(from, to)?;
    super::set_executable(to)
}
