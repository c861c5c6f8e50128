//! The child process of the durability tests: performs tool calls on one session of a real
//! host and prints one line per *acknowledged* call (the host API returned `Ok`) on stdout,
//! flushed per line, so a parent that kills it knows exactly what was acknowledged.
//!
//! ```text
//! crash_child DB SESSION crash            # forever: call i in turn "t{i}"; even i: refs.add
//!                                         # "r{i}", odd i: append_notes "n{i}"; prints "{i}"
//! crash_child DB SESSION append TAG COUNT # COUNT append_notes "TAG-{i}" in one turn; prints
//!                                         # "ok {i}" or "rejected {i}", then "lost {n}": how
//!                                         # many commits lost a race; any other error exits 1
//! ```
//!
//! The session is created when missing. The scratchpad is configured with `notesMaxChars` = [`NOTES_MAX`].

use std::io::Write;

use scratchpad_host::{Error, Host, Origin, ToolErrorKind, TurnContext};
use scratchpad_tests::{scratchpad, shared_cache};

/// The notes budget of the child's scratchpad, in chars.
const NOTES_MAX: u64 = 1_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let code = runtime.block_on(run(&args[1..]));
    std::process::exit(code);
}

async fn run(args: &[String]) -> i32 {
    let [db, session, mode, rest @ ..] = args else {
        eprintln!("usage: crash_child DB SESSION crash | crash_child DB SESSION append TAG COUNT");
        return 2;
    };
    let config = scratchpad_host::HostConfig {
        database: scratchpad_host::Location::parse(db),
        cache_dir: Some(shared_cache()),
        plugins: vec![scratchpad(serde_json::json!({ "notesMaxChars": NOTES_MAX }))],
        ..Default::default()
    };
    let host = match Host::open(config).await {
        Ok(host) => host,
        Err(error) => {
            eprintln!("opening the host: {error}");
            return 1;
        }
    };
    if let Err(Error::SessionNotFound(_)) = host.session(session).await
        && let Err(error) = host.create_session(session, Origin::New).await
    {
        eprintln!("creating the session: {error}");
        return 1;
    }
    let mut out = std::io::stdout().lock();
    match (mode.as_str(), rest) {
        ("crash", []) => {
            for i in 0u64.. {
                let turn = TurnContext::new(session.as_str(), format!("t{i}"));
                let arguments = if i % 2 == 0 {
                    format!(r#"{{"action":"refs.add","ref":"r{i}"}}"#)
                } else {
                    format!(r#"{{"action":"append_notes","content":"n{i}"}}"#)
                };
                if let Err(error) = host.call_tool(&turn, "session.scratchpad", &arguments).await {
                    eprintln!("call {i}: {error}");
                    return 1;
                }
                writeln!(out, "{i}").and_then(|()| out.flush()).expect("writing to stdout");
            }
            0
        }
        ("append", [tag, count]) => {
            let count: u64 = count.parse().expect("COUNT is a number");
            let turn = TurnContext::new(session.as_str(), format!("append-{tag}"));
            for i in 0..count {
                let arguments = format!(r#"{{"action":"append_notes","content":"{tag}-{i}"}}"#);
                let verdict = match host.call_tool(&turn, "session.scratchpad", &arguments).await {
                    Ok(_) => "ok",
                    Err(Error::Tool { error, .. }) if error.kind == ToolErrorKind::Rejected => "rejected",
                    Err(error) => {
                        eprintln!("append {i}: {error}");
                        return 1;
                    }
                };
                writeln!(out, "{verdict} {i}").and_then(|()| out.flush()).expect("writing to stdout");
            }
            writeln!(out, "lost {}", lost_commits(&host.metrics().render())).expect("writing to stdout");
            0
        }
        _ => {
            eprintln!("unknown mode {mode:?}");
            2
        }
    }
}

/// Commits that lost a race to another process, from the host's metrics.
fn lost_commits(metrics: &str) -> u64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix("scratchpad_storage_commits_total{outcome=\"conflict\"} "))
        .map_or(0, |n| n.trim().parse().expect("a count"))
}
