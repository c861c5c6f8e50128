//! Builds wasm crates of this workspace from a build script: components for `wasm32-wasip2`,
//! and plain modules for other wasm targets.
//!
//! Cargo cannot express "this crate needs that crate built for another target" as a
//! dependency, so, like wasmtime's `crates/test-programs/artifacts/build.rs`, build scripts
//! run a nested `cargo build` for the components. `host/build.rs` uses it for the embedded
//! first-party components, `tests/build.rs` for the hostile test components, and
//! `bench/build.rs` for the Extism peer (a `wasm32-unknown-unknown` module, [`build_for`]).
//!
//! Why each step is there:
//! - The nested build uses its own target directory (`<target>/components`): the outer cargo
//!   holds the lock on the normal one for as long as the build script runs, so sharing it
//!   would deadlock. The directory is shared by every profile, so `cargo test`,
//!   `cargo clippy` and `cargo build --release` reuse one warm component build.
//! - Environment that the outer cargo sets for *its* compilation (rustflags, clippy's
//!   wrapper, a target override) is removed so the components build the same way every time.
//! - The caller's script reruns only when the component sources, the WIT contract or the
//!   lock file change (`rerun-if-changed`), so an unchanged tree costs nothing.
//! - Components are compiled with wasm SIMD (`+simd128`): `memchr` and `regex`, which the
//!   observations plugin runs over whole offloaded entries, then use vector code instead of a
//!   byte at a time. Every runtime the components are run on (wasmtime, V8 under jco,
//!   wasmtime-py) supports it.
//! - A missing wasm target is the one setup step a fresh machine lacks
//!   (`RUSTUP_AUTO_INSTALL=0` keeps rustup from adding it), so it gets a one-line error with
//!   the exact command instead of a page of linker noise.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target components are built for.
pub const TARGET: &str = "wasm32-wasip2";
/// Codegen flags of every wasm crate built here (see the module docs).
const SIMD: &str = "-Ctarget-feature=+simd128";
/// The cargo profile every wasm crate is built with (small and fast; see the workspace manifest).
pub const PROFILE: &str = "component";

/// A wasm crate to build (a component, or a plain module for [`build_for`]): its cargo package
/// and the constant naming it in generated code.
pub struct Component {
    /// Prefix of the generated constants, e.g. `SCRATCHPAD` → `SCRATCHPAD_PATH`.
    pub constant: &'static str,
    /// The cargo package name.
    pub package: &'static str,
}

/// Builds `components` for [`TARGET`] (paths in `watch` are relative to the workspace root) and
/// returns the path of each `.wasm`, in order. Exits the build script with a clear message on
/// failure.
pub fn build(components: &[Component], watch: &[&str]) -> Vec<PathBuf> {
    build_for(TARGET, components, watch)
}

/// [`build`] for another wasm `target` (e.g. `wasm32-unknown-unknown` for a core module), with
/// the same profile and the same shared target directory.
pub fn build_for(target: &str, components: &[Component], watch: &[&str]) -> Vec<PathBuf> {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let workspace = find_workspace(&manifest_dir);
    for watched in watch.iter().chain(["wit", "plugins/sdk", "powers", "Cargo.lock", "Cargo.toml"].iter()) {
        println!("cargo:rerun-if-changed={}", workspace.join(watched).display());
    }
    ensure_target_installed(target);

    // OUT_DIR is `<target-root>[/<triple>]/<profile>/build/<pkg>-<hash>/out`.
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let component_target = out_dir.ancestors().nth(4).unwrap().join("components");

    let mut cargo = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(&workspace)
        .args(["build", "--target", target, "--profile", PROFILE, "--target-dir"])
        .arg(&component_target);
    for component in components {
        cargo.args(["-p", component.package]);
    }
    cargo.env(format!("CARGO_TARGET_{}_RUSTFLAGS", target.to_uppercase().replace('-', "_")), SIMD);
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
    ] {
        cargo.env_remove(var);
    }
    let status = cargo.status().expect("running the nested cargo build for the components");
    if !status.success() {
        eprintln!("error: building the plugin components for {target} failed (see above)");
        std::process::exit(1);
    }
    components
        .iter()
        .map(|c| {
            let stem = c.package.replace('-', "_");
            let wasm = component_target.join(target).join(PROFILE).join(format!("{stem}.wasm"));
            assert!(wasm.exists(), "{} did not produce {}", c.package, wasm.display());
            wasm
        })
        .collect()
}

/// Rust source declaring `<CONSTANT>_PATH` for each built component.
pub fn path_constants(components: &[Component], paths: &[PathBuf]) -> String {
    let mut out = String::from("// @generated by scratchpad-build-support.\n");
    for (c, path) in components.iter().zip(paths) {
        out.push_str(&format!(
            "/// Path of the `{}` wasm built for this workspace.\npub const {}_PATH: &str = {:?};\n",
            c.package,
            c.constant,
            path.display().to_string()
        ));
    }
    out
}

fn find_workspace(start: &Path) -> PathBuf {
    start
        .ancestors()
        .find(|dir| std::fs::read_to_string(dir.join("Cargo.toml")).map(|t| t.contains("[workspace]")).unwrap_or(false))
        .expect("the crate lives in the scratchpad workspace")
        .to_path_buf()
}

/// Stops the build with one line naming the command when the wasm `target` is missing.
fn ensure_target_installed(target: &str) {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    let installed = sysroot.map(|root| Path::new(&root).join("lib/rustlib").join(target).exists()).unwrap_or(false);
    if !installed {
        eprintln!("error: the {target} target is not installed; run: rustup target add {target}");
        std::process::exit(1);
    }
}
