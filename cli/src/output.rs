//! How the CLI prints: human text by default, JSON with `--json`, errors included.

use std::process::ExitCode;

use scratchpad_host::Error;
use serde_json::json;

pub(crate) fn init_tracing(verbose: u8) {
    tracing_subscriber::fmt()
        .with_env_filter(log_filter(verbose))
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

/// What the CLI logs to stderr: `SCRATCHPAD_LOG` when set, else warnings, or more with `-v`.
pub(crate) fn log_filter(verbose: u8) -> tracing_subscriber::EnvFilter {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    tracing_subscriber::EnvFilter::try_from_env("SCRATCHPAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default))
}

/// Prints `value` as pretty JSON.
pub(crate) fn print_json(value: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("JSON values serialize"));
}

/// Prints an error (JSON on stdout with `--json`, text on stderr otherwise) and picks the
/// exit status.
/// Reports a command line clap refused: as JSON on stdout when `--json` is among the
/// arguments (so a machine reader gets JSON even for a usage error), else clap's own text.
/// Help and version requests are not errors. Exit status 2, as for every usage error.
pub(crate) fn report_usage(error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let json = std::env::args_os().skip(1).take_while(|a| a != "--").any(|a| a == "--json");
    if json && !matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let message = error.render().to_string();
        let message = message.trim().strip_prefix("error: ").unwrap_or(message.trim()).to_owned();
        print_json(&json!({ "ok": false, "error": { "code": "usage", "message": message } }));
        return ExitCode::from(2);
    }
    error.exit()
}

pub(crate) fn report_error(error: &anyhow::Error, json: bool) -> ExitCode {
    let (code, status) = match error.downcast_ref::<Error>() {
        Some(e @ (Error::Plugin { .. } | Error::Load { .. })) => (e.code(), 3),
        Some(e) => (e.code(), 1),
        None => ("error", 1),
    };
    if json {
        let mut body = json!({ "code": code, "message": format!("{error:#}") });
        if let Some(Error::Tool { plugin, tool, error }) = error.downcast_ref::<Error>() {
            body["plugin"] = json!(plugin);
            body["tool"] = json!(tool);
            body["kind"] = json!(error.kind);
            body["message"] = json!(error.message);
        }
        if let Some(Error::Plugin { plugin, hook, failure }) = error.downcast_ref::<Error>() {
            body["plugin"] = json!(plugin);
            body["hook"] = json!(hook);
            body["failure"] = json!(failure.to_string());
        }
        print_json(&json!({ "ok": false, "error": body }));
    } else {
        // One line: plugin-supplied text in the message cannot start a line of its own.
        let hint = match error.downcast_ref::<Error>() {
            Some(Error::UnknownTool(_)) => " (`scratchpad plugins` lists the tools)",
            Some(Error::SessionNotFound(id)) if !id.is_empty() => " (`scratchpad session create ID` creates one)",
            Some(Error::Conflict { .. }) => " (run the command again)",
            _ => "",
        };
        eprintln!("error: {}{hint}", scratchpad_host::terminal::line(&format!("{error:#}")));
    }
    ExitCode::from(status)
}
