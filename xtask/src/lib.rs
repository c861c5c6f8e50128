//! The repository's own tasks behind `cargo xtask` (see `main.rs`), as a library so the test
//! suite runs them too.

use std::path::PathBuf;

pub mod components;
pub mod dist;

/// The workspace's root (this crate lives at `<root>/xtask`).
pub fn workspace() -> PathBuf {
    scratchpad_build_support::find_workspace(env!("CARGO_MANIFEST_DIR").as_ref())
}

/// The workspace's target directory: `$CARGO_TARGET_DIR`, else `<root>/target`.
pub fn target_dir(workspace: &std::path::Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"))
}
