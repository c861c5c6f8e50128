//! The real coding agents the end-to-end tests drive, one module each: installed from their
//! pinned packages, every directory they write in a temp dir, talking to a scripted model
//! ([`crate::scripted::Model`], one per provider API) and loading this repository's
//! integration. The process, port and wait helpers they share are [`crate::process`].
//!
//! - [`claude_code`]: `claude -p` with `integrations/claude-code`, on `anthropic.py`;
//! - [`codex`]: `codex exec` set up by `scratchpad setup codex`, on `responses.py`;
//! - [`gemini`]: `gemini -p` set up by `scratchpad setup gemini`, on `gemini.py`;
//! - [`openclaw`]: OpenClaw gateways loading `integrations/openclaw`, on `chat.py`;
//! - [`opencode`]: `opencode run` with `integrations/opencode`, on `chat.py`;
//! - [`workspace`]: a git checkout to work in, and a `scratchpad` that logs where it ran.

use std::path::PathBuf;

pub mod claude_code;
pub mod codex;
pub mod gemini;
pub mod openclaw;
pub mod opencode;
pub mod workspace;

/// `XDG_CACHE_HOME` of the agents' `scratchpad` processes: one compile cache for the whole
/// run, `scratchpad-cache` in cargo's temp dir of the tests (`CARGO_TARGET_TMPDIR`,
/// `<target>/tmp`), found from the test binary's path (`<target>/<profile>/deps/`).
pub fn cache_home() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe.ancestors().nth(3).expect("<target>/<profile>/deps/<binary>");
    target.join("tmp/scratchpad-cache")
}
