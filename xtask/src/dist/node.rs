//! The Node packages of the host (`bindings/node`), in the shape napi-rs projects ship (swc,
//! rspack, lightningcss): one package per platform with the addon (`os`, `cpu`, `libc`), and
//! `@scratchpad-dev/host`, the JavaScript API, depending on all of them as optional
//! dependencies at the exact same version; its `native.js` loads the one npm installed.
//!
//! The addon builds with the environment maturin gave cargo for the CLI's wheel
//! ([`cargo_env`]), so it reuses that build and, on Linux, links glibc 2.17 through zig as the
//! CLI does.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::assemble::Staging;
use super::npm::{self, Packed};
use super::targets::Linker;
use super::{Build, Target, VERSION, cargo_env, run};

/// The main package; the platform packages are named after it.
pub const HOST: &str = "@scratchpad-dev/host";

/// The package's sources, relative to the workspace.
const SOURCE: &str = "bindings/node";

/// Builds the addon for `target` and packs its platform package into `out`.
pub fn addon_package(build: &Build, target: &Target, precompiled: Option<&Path>, out: &Path) -> Result<Packed, String> {
    let addon = addon(build, target)?;
    let platform = target.node_platform();
    let name = format!("{HOST}-{platform}");
    let file = format!("scratchpad.{platform}.node");
    let dir = build.scratch(&format!("npm/{name}"))?;
    let description = format!("The scratchpad host's Node addon for {} ({HOST})", target.triple);
    let mut manifest = npm::platform_manifest(&name, &description, target);
    manifest.insert("main".into(), json!(file));
    manifest.insert("files".into(), if precompiled.is_some() { json!([file, "precompiled"]) } else { json!([file]) });
    npm::write_json(&dir.join("package.json"), &Value::Object(manifest))?;
    npm::write(
        &dir.join("README.md"),
        &format!(
            "# {name}\n\nThe scratchpad host's Node addon for `{}`. Install [`{HOST}`](https://www.npmjs.com/package/{HOST}), which loads it.\n",
            target.triple
        ),
    )?;
    npm::copy(&addon, &dir.join(&file))?;
    super::precompiled::copy_into(precompiled, &dir)?;
    npm::pack(&dir, out)
}

/// `cargo build` of the addon for `target` in maturin's environment: the library's path.
fn addon(build: &Build, target: &Target) -> Result<PathBuf, String> {
    let mut cargo = cargo_env::replay(build, target)?;
    if target.linker == Linker::Mingw {
        cargo.env("LIBNODE_PATH", libnode_stub(build)?);
    }
    cargo.args([
        "build",
        "--locked",
        "--lib",
        "-p",
        "scratchpad-node",
        "--profile",
        build.profile,
        "--target",
        target.triple,
    ]);
    run(&mut cargo, &format!("building the Node addon for {}", target.triple))?;
    let library = build.artifacts(target).join(target.cdylib("scratchpad_node"));
    if library.is_file() { Ok(library) } else { Err(format!("cargo left no addon at {}", library.display())) }
}

/// napi-rs links a `*-windows-gnu` addon with `-lnode`, and napi-build wants a `libnode.dll`
/// (in `LIBNODE_PATH`) for that, which Node for Windows does not ship: `node.exe` itself exports
/// the functions. The addon looks every `napi_*` function up in the process when it loads
/// (napi's `dyn-symbols`, bindings/node/Cargo.toml), so the link takes no symbol from the
/// library: an empty archive under that name satisfies it (the linker reads a library by its
/// contents, not its name). The directory holding it.
fn libnode_stub(build: &Build) -> Result<PathBuf, String> {
    let dir = build.target_dir().join("libnode-stub");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let stub = dir.join("libnode.dll");
    std::fs::write(&stub, b"!<arch>\n").map_err(|e| format!("writing {}: {e}", stub.display()))?;
    Ok(dir)
}

/// `@scratchpad-dev/host`, depending on `platforms`, packed into `out`.
pub fn host_package(staging: &Staging, platforms: &[(Target, Packed)], out: &Path) -> Result<Packed, String> {
    let source = staging.workspace.join(SOURCE);
    let Value::Object(mut manifest) = npm::read_json(&source.join("package.json"))? else {
        return Err(format!("{SOURCE}/package.json is not an object"));
    };
    if manifest.get("version") != Some(&json!(VERSION)) {
        return Err(format!("{SOURCE}/package.json is version {:?}, not {VERSION}", manifest.get("version")));
    }
    let dir = staging.scratch(&format!("npm/{HOST}"))?;
    let files: Vec<String> = manifest
        .get("files")
        .and_then(Value::as_array)
        .map(|files| files.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .ok_or_else(|| format!("{SOURCE}/package.json lists no files"))?;
    for file in files.iter().chain([&"README.md".to_owned()]) {
        npm::copy(&source.join(file), &dir.join(file))?;
    }
    manifest.insert("optionalDependencies".into(), npm::optional_dependencies(platforms));
    npm::write_json(&dir.join("package.json"), &Value::Object(manifest))?;
    npm::pack(&dir, out)
}
