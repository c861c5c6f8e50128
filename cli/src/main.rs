//! `scratchpad`: the command-line face of the host. Every run is a fresh host process on the
//! same database, so what survives a restart is what a user sees.
//!
//! Exit status: 0 on success, 1 when a tool refused the call or anything else failed, 2 for
//! bad command-line usage, 3 when a plugin failed (trap, timeout, limit) or was refused at load.

mod args;
mod commands;
mod demo;
mod doctor;
mod hook;
mod http_server;
mod mcp;
mod output;
mod plugin_version;
mod recall;
mod serve;
mod sessions;
mod setup;
mod shell;
mod shutdown;
mod ui;

use std::process::ExitCode;

use args::{Cli, Command};
use clap::Parser;

/// A one-shot command whose reader goes away (`scratchpad show s | head`) ends quietly, as Unix
/// tools do, instead of panicking on the broken pipe: SIGPIPE gets its default action back
/// (Rust ignores it). The servers keep Rust's choice, so a client that disconnects is an error
/// they handle, not the end of the process.
fn quiet_on_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called once at start-up, before any other thread exists; setting a signal's
    // disposition to its default has no other precondition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return output::report_usage(error),
    };
    match cli.command {
        Command::Mcp(_) => mcp::logging::init_tracing(cli.global.verbose),
        _ => output::init_tracing(cli.global.verbose),
    }
    if !matches!(cli.command, Command::Serve(_) | Command::Mcp(_) | Command::Ui(_)) {
        quiet_on_broken_pipe();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: starting the async runtime: {error}");
            return ExitCode::from(1);
        }
    };
    let json = cli.global.json;
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => output::report_error(&error, json),
    }
}
