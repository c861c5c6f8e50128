//! The command line's shape: the commands, their arguments and the options every command
//! takes ([`Global`]), and how those options make a [`HostConfig`]. `commands.rs` runs them.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use scratchpad_host::{DATABASE_URL_ENV, Grants, HostConfig, Location, PluginSpec, SignaturePolicy};

use crate::{hook, mcp, serve, setup, ui};

/// Agent working memory as sandboxed WebAssembly plugins.
#[derive(Parser)]
#[command(name = "scratchpad", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: Global,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every subcommand takes.
#[derive(Args, Clone)]
pub(crate) struct Global {
    /// The database: a SQLite file, or a postgres:// URL for fleet mode [default:
    /// $SCRATCHPAD_DATABASE_URL, else the config file's, else $XDG_DATA_HOME/scratchpad/scratchpad.db]
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub(crate) db: Option<String>,
    /// Host configuration file (TOML) [default: $SCRATCHPAD_CONFIG]
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Load this component after the configured plugins: a file, or oci://HOST/REPO:TAG or
    /// …@sha256:DIGEST (repeatable). It holds no power until --grant, and needs a publisher's
    /// signature unless --allow-unsigned
    #[arg(long = "plugin", global = true, value_name = "FILE.wasm|oci://REF")]
    pub(crate) plugins: Vec<String>,
    /// Grant plugin NAME these powers, comma-separated, e.g. `redactor=read-tool-traffic,rewrite-tool-calls`
    /// (repeatable; replaces the configuration's grants for NAME; docs/security.md lists them)
    #[arg(long = "grant", global = true, value_name = "NAME=POWERS")]
    pub(crate) grants: Vec<String>,
    /// Load plugin NAME without checking its signature (repeatable)
    #[arg(long = "allow-unsigned", global = true, value_name = "NAME")]
    pub(crate) unsigned: Vec<String>,
    /// Trust signatures by this publisher's OpenSSH public key file (repeatable)
    #[arg(long = "publisher", global = true, value_name = "NAME=KEY.pub")]
    pub(crate) publishers: Vec<String>,
    /// Print machine-readable JSON on stdout (errors too)
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// More logging on stderr (-v: info, -vv: debug, -vvv: trace)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a scripted session that shows the scratchpad at work (uses a temporary database
    /// unless --db is given)
    Demo,
    /// Create, list or fork sessions
    #[command(subcommand)]
    Session(SessionCommand),
    /// List the tools offered to the model in a turn of SESSION
    Tools {
        /// The session
        session: String,
        #[command(flatten)]
        turn: TurnArgs,
    },
    /// Call TOOL with JSON arguments in SESSION, as the model would (before-tool-call runs first)
    Call {
        /// The session
        session: String,
        /// The tool's name, e.g. session.scratchpad
        tool: String,
        /// The arguments as a JSON object
        #[arg(value_name = "JSON")]
        arguments: String,
        /// The call's 1-based step in the turn (what `{{stepN.field}}` references count)
        #[arg(long, value_name = "N", default_value_t = 1)]
        step: u32,
        #[command(flatten)]
        turn: TurnArgs,
    },
    /// Show what the model would receive for MESSAGE: every injection around the untouched message
    Query {
        /// The session
        session: String,
        /// The user's message
        message: String,
        /// The runtime's own system prompt to render the injections around
        #[arg(long, default_value = "")]
        system: String,
        #[command(flatten)]
        turn: TurnArgs,
    },
    /// Hand FILE to the plugins as TOOL's result and print, as JSON, what the model would see
    Observe {
        /// The session
        session: String,
        /// The tool that produced the observation, e.g. fs_read
        tool: String,
        /// The observation's bytes
        file: PathBuf,
        /// The tool's metadata about its result, a JSON object
        #[arg(long, value_name = "JSON", default_value = "{}")]
        metadata: String,
        /// The call's 1-based step in the turn [default: one past the turn's stored observations]
        #[arg(long, value_name = "N")]
        step: Option<u32>,
        #[command(flatten)]
        turn: TurnArgs,
    },
    /// Remove expired offloaded observations now
    Gc,
    /// Copy a store into the configured database (PostgreSQL, usually), verify it, safe to re-run
    Migrate {
        /// The store to copy: a SQLite file (or a postgres:// URL)
        #[arg(long, value_name = "PATH|URL")]
        from: String,
        /// Where to copy it [default: the database --db, $SCRATCHPAD_DATABASE_URL or the config name]
        #[arg(long, value_name = "PATH|URL")]
        to: Option<String>,
    },
    /// Import the scratchpad state of OpenClaw sessions (a session .jsonl, or a sessions directory)
    ImportOpenclaw {
        /// A session JSONL file, a directory of them (with sessions.json), or OpenClaw 2026.9's
        /// SQLite store (openclaw-agent.sqlite, its agent directory, or the state directory)
        path: PathBuf,
    },
    /// Append SESSION's scratchpad to an OpenClaw session JSONL file as custom records
    ExportOpenclaw {
        /// The session
        session: String,
        /// The OpenClaw session file (created if missing)
        file: PathBuf,
    },
    /// Serve the host API as newline-delimited JSON-RPC 2.0 on stdin/stdout (docs/protocol.md)
    Serve(serve::ServeArgs),
    /// Serve a session's tools and scratchpad over MCP on stdio, or over HTTP (docs/mcp.md)
    Mcp(mcp::McpArgs),
    /// Act on one coding-agent hook event read from stdin (Claude Code, Codex) and print the
    /// agent's answer (docs/claude-code.md)
    Hook(hook::HookArgs),
    /// Connect an agent to this binary: edit its configuration, keeping what is there
    #[command(subcommand)]
    Setup(setup::SetupCommand),
    /// What a project's earlier sessions left for the next ones: status, search, preview,
    /// forget, export, import (docs/recall.md)
    #[command(subcommand)]
    Recall(crate::recall::RecallCommand),
    /// Serve a read-only web viewer of the sessions on 127.0.0.1 and print its URL, with an
    /// access token (docs/viewer.md)
    Ui(ui::UiArgs),
    /// Show a session and every plugin's stored state
    Show {
        /// The session
        session: String,
    },
    /// List the loaded plugins with their tools and limits
    Plugins,
    /// Compile the embedded components ahead of time into DIR, for a package to ship as
    /// `precompiled/` beside this binary (or `share/scratchpad/precompiled` under its prefix):
    /// a fresh install then starts without compiling them
    Precompile {
        /// Where to write them (`<sha256>.cwasm` each)
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Compile for this target triple instead of this machine's
        #[arg(long, value_name = "TRIPLE")]
        target: Option<String>,
    },
    /// Check the SQLite database file for damage without changing it, and say how to recover
    /// (docs/cli.md)
    Doctor {
        /// Copy what SQLite can still read of the database into this new file, and check it
        #[arg(long, value_name = "FILE")]
        recover: Option<PathBuf>,
    },
    /// Show a component's identity, the powers it asks for, its signature, imports, exports and tools
    Inspect {
        /// The component: a file, or oci://HOST/REPO:TAG or …@sha256:DIGEST
        #[arg(value_name = "FILE.wasm|oci://REF")]
        source: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum SessionCommand {
    /// Create SESSION (new, or a spawn or fork of a parent)
    Create {
        /// The new session's id
        session: String,
        /// Fork PARENT: plugins copy their state
        #[arg(long, value_name = "PARENT", conflicts_with = "spawn")]
        fork: Option<String>,
        /// Spawn a sub-session of PARENT: state starts empty unless --copy
        #[arg(long, value_name = "PARENT")]
        spawn: Option<String>,
        /// With --spawn: copy the parent's working state
        #[arg(long, requires = "spawn")]
        copy: bool,
        /// The project it belongs to, named by a directory (its git checkout's root, or itself):
        /// what recall keeps its findings under [default: none; a spawn or fork: its parent's]
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
    },
    /// List every session
    List,
}

/// Which turn a command acts in.
#[derive(Args, Clone)]
pub(crate) struct TurnArgs {
    /// Act inside turn T (without it, the command runs in a turn of its own)
    #[arg(long = "turn", value_name = "T")]
    pub(crate) turn: Option<String>,
    /// Tokens the conversation uses now (context pressure)
    #[arg(long, value_name = "N")]
    pub(crate) tokens_used: Option<u64>,
    /// The model's context window in tokens
    #[arg(long, value_name = "N")]
    pub(crate) context_window: Option<u64>,
}

/// The environment variable naming the configuration file when `--config` is not given (what an
/// agent's hook and MCP configuration cannot pass as a flag).
const CONFIG_ENV: &str = "SCRATCHPAD_CONFIG";

impl Global {
    /// The host configuration the global options describe.
    pub(crate) fn host_config(&self) -> anyhow::Result<HostConfig> {
        let file =
            self.config.clone().or_else(|| std::env::var_os(CONFIG_ENV).filter(|v| !v.is_empty()).map(PathBuf::from));
        let mut config = match &file {
            Some(path) => HostConfig::from_toml_file(path)?,
            None => HostConfig::default(),
        };
        if let Some(db) = &self.db {
            config.database = Location::parse(db);
        } else if let Some(url) = std::env::var(DATABASE_URL_ENV).ok().filter(|v| !v.is_empty()) {
            config.database = Location::parse(&url);
        }
        for source in &self.plugins {
            config.plugins.push(PluginSpec::parse_source(source, Path::new(".")).map_err(anyhow::Error::msg)?);
        }
        self.apply_trust(&mut config)?;
        config.precompiled_dir = shipped_precompiled_dir();
        Ok(config)
    }

    /// Applies `--publisher`, `--grant` and `--allow-unsigned` to the configured plugins.
    pub(crate) fn apply_trust(&self, config: &mut HostConfig) -> anyhow::Result<()> {
        for publisher in &self.publishers {
            let (name, file) = split_pair("--publisher", publisher)?;
            let key = std::fs::read_to_string(file).with_context(|| format!("--publisher {name}: reading {file}"))?;
            let publisher = scratchpad_host::supply::signature::Publisher::parse(name, key.trim())
                .map_err(|e| anyhow::anyhow!("--publisher {name}: {e}"))?;
            config.publishers.push(publisher);
        }
        let plugin = |flag: &str, name: &str| -> anyhow::Result<usize> {
            let names: Vec<&str> = config.plugins.iter().map(|p| p.name.as_str()).collect();
            names.iter().position(|n| *n == name).ok_or_else(|| {
                anyhow::anyhow!("{flag} {name}: no plugin is named `{name}` (loaded: {})", names.join(", "))
            })
        };
        let mut grants = Vec::new();
        for grant in &self.grants {
            let (name, powers) = split_pair("--grant", grant)?;
            let granted = Grants::parse(powers.split(',').filter(|p| !p.trim().is_empty()))
                .map_err(|e| anyhow::anyhow!("--grant {name}: {e}"))?;
            grants.push((plugin("--grant", name)?, granted));
        }
        let mut unsigned = Vec::new();
        for name in &self.unsigned {
            unsigned.push(plugin("--allow-unsigned", name)?);
        }
        for (index, granted) in grants {
            config.plugins[index].grants = granted;
        }
        for index in unsigned {
            config.plugins[index].signature = SignaturePolicy::Unsigned;
        }
        Ok(())
    }
}

/// The directory of components compiled ahead of time (`scratchpad precompile`) that this
/// binary's package ships, when there is one: `precompiled/` beside the binary (the archive and
/// the npm package), else `share/scratchpad/precompiled` under its prefix (the wheel installs
/// the binary into `<prefix>/bin`, or `Scripts` on Windows, and its data under `<prefix>`).
fn shipped_precompiled_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?;
    let under_prefix = bin.parent().map(|prefix| prefix.join("share").join("scratchpad").join("precompiled"));
    std::iter::once(bin.join("precompiled")).chain(under_prefix).find(|dir| dir.is_dir())
}

/// `NAME=VALUE` of a flag, or a usage error naming the flag.
fn split_pair<'a>(flag: &str, text: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name, value)),
        _ => anyhow::bail!("{flag} takes NAME=VALUE, not `{text}`"),
    }
}
