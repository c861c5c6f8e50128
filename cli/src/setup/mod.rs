//! `scratchpad setup <agent>`: connects an agent to this binary in one command, editing the
//! agent's own configuration the way a person would and keeping everything already there.
//!
//! - The agent runs the binary by an absolute path. Unless `--binary` names one, that path is
//!   a copy of the running binary in the data directory (`<data>/bin/<version>/scratchpad`):
//!   `npx @scratchpad-dev/cli setup codex` runs from npm's cache, which is no place to run
//!   from later, and a copy per version keeps an upgrade from changing a running agent's binary.
//! - A file that cannot be read or parsed is refused with its path (and the line), and nothing
//!   is written; `--dry-run` prints the diff and writes nothing.
//! - A changed file is written whole (a temporary file renamed over it), after its previous
//!   text is kept as `<file>.bak`.

mod codex;
mod gemini;
mod jsonc;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::json;

use crate::output::print_json;

/// `scratchpad setup`'s agents.
#[derive(clap::Subcommand)]
pub(crate) enum SetupCommand {
    /// Add the hooks and the MCP server to Codex's config.toml ($CODEX_HOME/config.toml, else
    /// ~/.codex/config.toml), keeping what is there
    Codex {
        /// The file to edit instead
        #[arg(long, value_name = "FILE")]
        config_file: Option<PathBuf>,
        #[command(flatten)]
        options: SetupArgs,
    },
    /// Add the hooks and the MCP server to Gemini CLI's settings.json
    /// ($GEMINI_CLI_HOME/.gemini/settings.json, else ~/.gemini/settings.json), keeping what is there
    Gemini {
        /// The file to edit instead
        #[arg(long, value_name = "FILE")]
        settings_file: Option<PathBuf>,
        #[command(flatten)]
        options: SetupArgs,
    },
}

/// A merged configuration's text, and a warning for the user, if any.
type Merge = (String, Option<String>);

/// One agent's setup: its file, how the fragment merges into it, what to tell the user.
struct Agent {
    /// The agent's name as the user knows it.
    name: &'static str,
    /// The file to edit.
    file: PathBuf,
    /// The merged text, and a warning for the user, if any.
    merge: fn(&str, &Path) -> Result<Merge, String>,
    /// What to tell the user after a change.
    after_change: Option<&'static str>,
}

/// What every agent's setup takes.
#[derive(clap::Args)]
pub(crate) struct SetupArgs {
    /// Print what would change, as a diff, and write nothing
    #[arg(long)]
    dry_run: bool,
    /// Have the agent run this binary instead of a copy of this one in the data directory
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
}

pub(crate) fn run(command: SetupCommand, json: bool) -> anyhow::Result<()> {
    let (agent, options) = match command {
        SetupCommand::Codex { config_file, options } => {
            let agent = Agent {
                name: "Codex",
                file: config_file.unwrap_or_else(codex_config),
                merge: |existing, binary| Ok((codex::merge(existing, binary)?, None)),
                after_change: Some(
                    "Codex asks once to trust new hooks: open /hooks in the Codex TUI (codex exec runs trusted hooks only)",
                ),
            };
            (agent, options)
        }
        SetupCommand::Gemini { settings_file, options } => {
            let agent = Agent {
                name: "Gemini CLI",
                file: settings_file.unwrap_or_else(gemini_settings),
                merge: |existing, binary| {
                    let merged = gemini::merge(existing, binary)?;
                    let warning = merged.dropped_comments.then(|| {
                        "the settings' comments are not kept in the new file (the previous one, comments and all, is \
                         settings.json.bak)"
                            .to_owned()
                    });
                    Ok((merged.text, warning))
                },
                after_change: None,
            };
            (agent, options)
        }
    };
    set_up(&agent, &options, json)
}

/// Merges `agent`'s fragment into its file, as `options` say.
fn set_up(agent: &Agent, options: &SetupArgs, json: bool) -> anyhow::Result<()> {
    let file = &agent.file;
    let binary = binary(options)?;
    let existing = read(file)?;
    let (merged, warning) =
        (agent.merge)(&existing, &binary).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let changed = merged != existing;
    if let Some(warning) = warning.as_deref().filter(|_| changed) {
        eprintln!("{}: {warning}", file.display());
    }
    if options.dry_run {
        print_dry_run(file, &existing, &merged, options, &binary, json);
        return Ok(());
    }
    if options.binary.is_none() {
        install_copy(&binary)?;
    }
    if changed {
        write(file, &existing, &merged)?;
    }
    if json {
        print_json(&json!({ "ok": true, "file": file, "changed": changed, "binary": binary }));
    } else {
        let what = if changed { "updated" } else { "already set up" };
        println!("{}: {} {what}; its hooks and MCP server run {}", agent.name, file.display(), binary.display());
        if let Some(after) = agent.after_change.filter(|_| changed) {
            println!("{after}");
        }
    }
    Ok(())
}

/// Gemini CLI's user settings: `$GEMINI_CLI_HOME/.gemini/settings.json` (the home Gemini CLI
/// takes instead of the user's when set), else `~/.gemini/settings.json`.
fn gemini_settings() -> PathBuf {
    let home = std::env::var_os("GEMINI_CLI_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::home_dir().unwrap_or_default());
    home.join(".gemini").join("settings.json")
}

/// Codex's configuration file: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
fn codex_config() -> PathBuf {
    let home = std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::home_dir().unwrap_or_default().join(".codex"));
    home.join("config.toml")
}

/// The binary the agent will run: `--binary` (which must exist), else where this one's copy goes.
fn binary(options: &SetupArgs) -> anyhow::Result<PathBuf> {
    match &options.binary {
        Some(path) => {
            let path = std::path::absolute(path).with_context(|| format!("--binary {}", path.display()))?;
            if !path.is_file() {
                bail!("--binary {}: no such file", path.display());
            }
            Ok(path)
        }
        None => {
            let name = if cfg!(windows) { "scratchpad.exe" } else { "scratchpad" };
            Ok(scratchpad_host::data_dir().join("bin").join(env!("CARGO_PKG_VERSION")).join(name))
        }
    }
}

/// Copies the running binary to `to` (a temporary file renamed into place), unless the same
/// bytes are there already.
fn install_copy(to: &Path) -> anyhow::Result<()> {
    let me = std::env::current_exe().context("finding the running binary")?;
    let bytes = std::fs::read(&me).with_context(|| format!("reading {}", me.display()))?;
    if std::fs::read(to).is_ok_and(|there| there == bytes) {
        return Ok(());
    }
    let dir = to.parent().expect("the copy lives in a directory");
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = dir.join(format!(".scratchpad.tmp{}", std::process::id()));
    std::fs::write(&tmp, &bytes).with_context(|| format!("writing {}", tmp.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", tmp.display()))?;
    }
    std::fs::rename(&tmp, to).with_context(|| format!("renaming into {}", to.display()))
}

/// The text of `file`, empty when it does not exist.
fn read(file: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(file) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", file.display())),
    }
}

/// Writes `text` to `file`, keeping `previous` (if the file existed) as `<file>.bak`.
fn write(file: &Path, previous: &str, text: &str) -> anyhow::Result<()> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if file.exists() {
        let backup = PathBuf::from(format!("{}.bak", file.display()));
        std::fs::write(&backup, previous).with_context(|| format!("writing {}", backup.display()))?;
    }
    let tmp =
        dir.join(format!(".{}.tmp{}", file.file_name().unwrap_or_default().to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("renaming into {}", file.display()))
}

fn print_dry_run(file: &Path, existing: &str, merged: &str, options: &SetupArgs, binary: &Path, json: bool) {
    let diff = similar::TextDiff::from_lines(existing, merged)
        .unified_diff()
        .header(&file.display().to_string(), &file.display().to_string())
        .to_string();
    if json {
        print_json(&json!({ "ok": true, "file": file, "changed": existing != merged, "binary": binary, "diff": diff }));
        return;
    }
    if options.binary.is_none() {
        println!("would copy {} to {}", std::env::current_exe().unwrap_or_default().display(), binary.display());
    }
    if diff.is_empty() {
        println!("{}: already set up, nothing would change", file.display());
    } else {
        print!("{diff}");
    }
}
