//! Builds wasm crates of this workspace with a nested `cargo build`: components for
//! `wasm32-wasip2`, and plain modules for other wasm targets.
//!
//! Two kinds of callers:
//! - build scripts ([`build`], [`build_for`]): `tests/build.rs` for the test components and
//!   `bench/build.rs` for the Extism peer (a `wasm32-unknown-unknown` module). Cargo cannot
//!   express "this crate needs that crate built for another target" as a dependency, so, like
//!   wasmtime's `crates/test-programs/artifacts/build.rs`, they run a nested `cargo build`;
//! - `cargo xtask components` ([`cargo_build`]), which builds the first-party components whose
//!   bytes `components/` (crate `scratchpad-components`) ships, and checks that the committed
//!   bytes are what the sources build.
//!
//! Why each step is there:
//! - The nested build uses its own target directory (`<target>/components`): the outer cargo
//!   holds the lock on the normal one for as long as a build script runs, so sharing it
//!   would deadlock. The directory is shared by every profile and by the xtask, so `cargo
//!   test`, `cargo clippy` and `cargo xtask components` reuse one warm component build.
//! - Environment that the outer cargo sets for *its* compilation (rustflags, clippy's
//!   wrapper, a target override) is removed, and the flags are set in full, so the components
//!   build the same way every time, whatever the caller's configuration.
//! - The builds are reproducible: the toolchain is pinned (`rust-toolchain.toml`), and the two
//!   machine-dependent paths that reach the output (panic locations name source files) are
//!   remapped: this workspace to `/scratchpad`, cargo's home (the registry's sources) to
//!   `/cargo`. Nothing else in the output depends on the time or the machine, so a clone
//!   anywhere builds the committed bytes exactly.
//! - Components are compiled with wasm SIMD (`+simd128`): `memchr` and `regex`, which the
//!   observations plugin runs over whole offloaded entries, then use vector code instead of a
//!   byte at a time. Every runtime the components are run on (wasmtime, V8 under jco,
//!   wasmtime-py) supports it.
//! - Components keep a 128 KiB stack in their linear memory instead of Rust's default 1 MiB.
//!   The host copies a used instance's memory back from the image before the next call gets its
//!   slot, the stack included, so the stack's size is paid on every call (docs/benchmarks.md:
//!   1 MiB made recycling an instance twice as dear). Every test passes with 32 KiB; a parse
//!   nested to serde_json's limit of 128 levels is the deepest the suite goes.
//! - A build script's caller reruns only when the component sources, the WIT contract or the
//!   lock file change (`rerun-if-changed`), so an unchanged tree costs nothing.
//! - A missing wasm target is the one setup step a fresh machine lacks
//!   (`RUSTUP_AUTO_INSTALL=0` keeps rustup from adding it), so it gets a one-line error with
//!   the exact command instead of a page of linker noise.

use std::env;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target components are built for.
pub const TARGET: &str = "wasm32-wasip2";
/// The cargo profile every wasm crate is built with (small and fast; see the workspace manifest).
pub const PROFILE: &str = "component";
/// Codegen flags of every wasm crate built here (see the module docs).
const SIMD: &str = "-Ctarget-feature=+simd128";
/// The stack each component keeps at the bottom of its linear memory: 128 KiB instead of
/// Rust's 1 MiB (see the module's documentation).
const STACK: &str = "-Clink-arg=-zstack-size=131072";
/// What this workspace's path becomes in the built bytes.
const WORKSPACE_REMAPPED: &str = "/scratchpad";
/// What cargo's home (the registry's unpacked sources) becomes in the built bytes.
const CARGO_HOME_REMAPPED: &str = "/cargo";

/// A wasm crate to build from a build script (a component, or a plain module for
/// [`build_for`]): its cargo package and the constant naming it in generated code.
pub struct Component {
    /// Prefix of the generated constants, e.g. `PROBE` → `PROBE_PATH`.
    pub constant: &'static str,
    /// The cargo package name.
    pub package: &'static str,
}

/// Builds `components` for [`TARGET`] from a build script (paths in `watch` are relative to
/// the workspace root) and returns the path of each `.wasm`, in order. Exits the build script
/// with a clear message on failure.
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
    // OUT_DIR is `<target-root>[/<triple>]/<profile>/build/<pkg>-<hash>/out`.
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let target_dir = out_dir.ancestors().nth(4).unwrap().join("components");
    let packages: Vec<&str> = components.iter().map(|c| c.package).collect();
    match cargo_build(&workspace, &target_dir, target, &packages) {
        Ok(paths) => paths,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(1);
        }
    }
}

/// Builds `packages` of `workspace` for the wasm `target` with the [`PROFILE`] profile into
/// `target_dir` (its `<target>/<profile>/` folder), reproducibly (see the module docs), and
/// returns the path of each `.wasm`, in order; or what went wrong, in one line (cargo's own
/// output has gone to stderr).
pub fn cargo_build(
    workspace: &Path,
    target_dir: &Path,
    target: &str,
    packages: &[&str],
) -> Result<Vec<PathBuf>, String> {
    ensure_target_installed(target)?;
    let mut cargo = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .current_dir(workspace)
        .args(["build", "--locked", "--target", target, "--profile", PROFILE, "--target-dir"])
        .arg(target_dir);
    for package in packages {
        cargo.args(["-p", package]);
    }
    for var in [
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CLIPPY_ARGS",
    ] {
        cargo.env_remove(var);
    }
    // Highest in cargo's order of rustflags sources, so no configuration adds to these.
    cargo.env("CARGO_ENCODED_RUSTFLAGS", encoded_rustflags(workspace));
    let status = cargo.status().map_err(|e| format!("could not run cargo for the {target} build: {e}"))?;
    if !status.success() {
        return Err(format!("building {} for {target} failed (see above)", packages.join(", ")));
    }
    packages
        .iter()
        .map(|package| {
            let wasm = target_dir.join(target).join(PROFILE).join(format!("{}.wasm", package.replace('-', "_")));
            if wasm.exists() { Ok(wasm) } else { Err(format!("{package} did not produce {}", wasm.display())) }
        })
        .collect()
}

/// The rustflags of every wasm build, in `CARGO_ENCODED_RUSTFLAGS` form (separated by 0x1f,
/// so paths with spaces survive).
fn encoded_rustflags(workspace: &Path) -> OsString {
    let mut flags = vec![OsString::from(SIMD), OsString::from(STACK), remap(workspace, WORKSPACE_REMAPPED)];
    if let Some(home) = cargo_home() {
        flags.push(remap(&home, CARGO_HOME_REMAPPED));
    }
    flags.join(std::ffi::OsStr::new("\x1f"))
}

fn remap(from: &Path, to: &str) -> OsString {
    let mut flag = OsString::from("--remap-path-prefix=");
    flag.push(from.as_os_str());
    flag.push("=");
    flag.push(to);
    flag
}

/// Cargo's home, where the registry's sources are unpacked: `$CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| Path::new(&home).join(".cargo")))
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

/// The workspace root: the nearest ancestor of `start` whose manifest has `[workspace]`.
pub fn find_workspace(start: &Path) -> PathBuf {
    start
        .ancestors()
        .find(|dir| std::fs::read_to_string(dir.join("Cargo.toml")).map(|t| t.contains("[workspace]")).unwrap_or(false))
        .expect("the crate lives in the scratchpad workspace")
        .to_path_buf()
}

/// One line naming the command when the wasm `target` is missing.
fn ensure_target_installed(target: &str) -> Result<(), String> {
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    let installed = sysroot.map(|root| Path::new(&root).join("lib/rustlib").join(target).exists()).unwrap_or(false);
    if installed {
        Ok(())
    } else {
        Err(format!("the {target} target is not installed; run: rustup target add {target}"))
    }
}
