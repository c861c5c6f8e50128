//! A host on a PostgreSQL server that restarts under an operation in flight (a server of the
//! test's own, [`PostgresServer::private`]): the operation fails as retryable
//! ([`Error::Unavailable`]) having kept nothing, what was committed before stays, and the same
//! host — no restart, no new `Host` — serves the retry on new connections, which lands once.
//! (The CLI's servers on a stopped and restarted server: the CLI's `postgres_outage` tests.)

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use scratchpad_host::{Error, Host, HostConfig, Location, Origin};
use scratchpad_tests::postgres::PostgresServer;
use scratchpad_tests::{scratchpad, shared_cache, turn};
use serde_json::json;

async fn append(host: &Host, turn_id: &str, line: &str) -> scratchpad_host::Result<String> {
    let args = json!({"action": "append_notes", "content": line}).to_string();
    host.call_tool(&turn("s", turn_id), "session.scratchpad", &args).await.map(|out| out.content)
}

/// Everything the session's plugins hold, as text.
async fn state(host: &Host) -> String {
    let entries = host.state("s").await.expect("reading the session's state");
    entries.iter().map(|entry| String::from_utf8_lossy(&entry.value).into_owned()).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_fails_the_operation_in_flight_as_retryable_keeping_nothing_and_the_same_host_serves_its_retry() {
    let server = PostgresServer::private();
    let url = server.fresh_database();
    let database = url.rsplit('/').next().expect("the URL names its database").to_owned();
    let config = HostConfig {
        database: Location::Postgres(url),
        cache_dir: Some(shared_cache()),
        plugins: vec![scratchpad(json!({}))],
        ..HostConfig::default()
    };
    let host = Host::open(config).await.expect("opening the host");
    host.create_session("s", Origin::New).await.unwrap();
    append(&host, "t1", "NOTE-BEFORE").await.unwrap();

    // Nothing of the host's is still at work (the event log of the call before), so the
    // statement seen waiting below is the next operation's.
    let busy = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'scratchpad' AND state <> 'idle'";
    wait_for(|| server.psql(&database, busy) == "0", "the host's connections idle");
    // Another session holds the session's row, so the next operation's statement on it waits
    // — in flight — when the server restarts.
    let mut holder = server.psql_connected(&database).stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut statements = holder.stdin.take().unwrap();
    statements.write_all(b"BEGIN;\nSELECT 1 FROM sessions WHERE id = 's' FOR UPDATE;\n").unwrap();
    statements.flush().unwrap();
    let held = "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) \
                WHERE a.application_name = 'psql' AND l.mode = 'RowShareLock' AND l.granted";
    wait_for(|| server.psql(&database, held) != "0", "psql holding the session's row");

    let in_flight = tokio::spawn({
        let host = host.clone();
        async move { append(&host, "t2", "NOTE-IN-FLIGHT").await }
    });
    let waiting =
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'scratchpad' AND wait_event_type = 'Lock'";
    wait_for(|| server.psql(&database, waiting) == "1", "the host's statement waiting for the row");
    tokio::task::block_in_place(|| server.restart());

    let error = in_flight.await.unwrap().expect_err("the operation in flight cannot have completed");
    assert!(matches!(error, Error::Unavailable { .. }), "{error:?}");
    assert!(error.is_retryable() && error.code() == "unavailable", "{error}");
    assert!(error.to_string().contains("database server is unavailable"), "{error}");
    drop(statements);
    let _ = holder.wait();

    // Nothing of it was kept; what was committed before was.
    let kept = state(&host).await;
    assert!(kept.contains("NOTE-BEFORE") && !kept.contains("NOTE-IN-FLIGHT"), "{kept}");
    // The same host serves the retry, which lands once.
    append(&host, "t2", "NOTE-IN-FLIGHT").await.expect("the retry, on the same host");
    let kept = state(&host).await;
    assert_eq!(kept.matches("NOTE-IN-FLIGHT").count(), 1, "{kept}");
    assert!(kept.contains("NOTE-BEFORE\nNOTE-IN-FLIGHT"), "{kept}");
}

/// Polls `done` every 20 ms for up to a minute.
fn wait_for(mut done: impl FnMut() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
