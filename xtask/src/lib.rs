//! The repository's own tasks behind `cargo xtask` (see `main.rs`), as a library so the test
//! suite runs them too.

use std::path::PathBuf;

pub mod components;
pub mod dist;
pub mod publish;
pub mod release;

/// Every command `cargo xtask` accepts, as a workflow writes it (`publish` with each of its
/// subcommands, and `dist assemble`): the release workflow's test checks each `cargo xtask …`
/// it runs against this.
pub fn commands() -> Vec<String> {
    let mut commands =
        vec!["components".to_owned(), "dist".to_owned(), "dist assemble".to_owned(), "release".to_owned()];
    commands.extend(publish::SUBCOMMANDS.iter().map(|sub| format!("publish {sub}")));
    commands
}

/// The workspace's root (this crate lives at `<root>/xtask`).
pub fn workspace() -> PathBuf {
    scratchpad_build_support::find_workspace(env!("CARGO_MANIFEST_DIR").as_ref())
}

/// The workspace's target directory: `$CARGO_TARGET_DIR`, else `<root>/target`.
pub fn target_dir(workspace: &std::path::Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"))
}
