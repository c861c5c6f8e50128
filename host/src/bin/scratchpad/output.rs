//! How the CLI prints: human text by default, JSON with `--json`, errors included.

use std::process::ExitCode;

use scratchpad_host::Error;
use serde_json::json;

pub(crate) fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SCRATCHPAD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}

/// Prints `value` as pretty JSON.
pub(crate) fn print_json(value: &serde_json::Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("JSON values serialize"));
}

/// Prints an error (JSON on stdout with `--json`, text on stderr otherwise) and picks the
/// exit status.
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
        eprintln!("error: {error:#}");
    }
    ExitCode::from(status)
}
