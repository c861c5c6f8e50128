//! Fleet mode as an operator meets it, through the real binary and a real PostgreSQL server:
//! choosing the database by URL or environment, connection errors that name the server but
//! never the password, and `scratchpad migrate` moving an embedded store up — after which the
//! PostgreSQL host shows the same state and builds the same prompts.

use crate::support;

use std::process::Output;

use scratchpad_tests::postgres;
use support::text;

/// Runs the CLI with `--db db` (a path or a URL) and `args`.
fn scratchpad(db: &str, args: &[&str]) -> Output {
    scratchpad_with(db, args, &[])
}

fn scratchpad_with(db: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = support::command();
    if !db.is_empty() {
        command.arg("--db").arg(db);
    }
    command.args(args).envs(env.iter().copied()).output().expect("running scratchpad")
}

/// Runs and requires success; returns stdout.
fn ok(db: &str, args: &[&str]) -> String {
    let out = scratchpad(db, args);
    assert!(out.status.success(), "scratchpad {args:?} failed: {}", text(&out.stderr));
    text(&out.stdout)
}

/// The password in `url` (between `user:` and `@`).
fn password_of(url: &str) -> &str {
    let userinfo = &url[url.find("://").unwrap() + 3..url.rfind('@').unwrap()];
    userinfo.split_once(':').unwrap().1
}

#[test]
fn an_embedded_store_migrated_to_postgresql_shows_the_same_state_and_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("embedded.db");
    let sqlite = file.to_str().unwrap();
    ok(sqlite, &["session", "create", "s1"]);
    ok(sqlite, &["call", "s1", "session.scratchpad", r#"{"action":"set_plan","content":"1. migrate\n2. verify"}"#]);
    ok(sqlite, &["call", "s1", "session.scratchpad", r#"{"action":"append_notes","content":"found: the bug"}"#]);
    ok(sqlite, &["call", "s1", "session.scratchpad", r#"{"action":"refs.add","ref":"src/main.rs"}"#]);
    ok(sqlite, &["session", "create", "s2", "--fork", "s1"]);
    let log: String = (0..4000).map(|i| format!("INFO line {i}\n")).collect();
    let log_file = dir.path().join("big.log");
    std::fs::write(&log_file, &log).unwrap();
    let seen = ok(sqlite, &["observe", "s1", "fs_read", log_file.to_str().unwrap(), "--turn", "t9"]);
    assert!(seen.contains("scratchpad_id"), "the observation is offloaded: {seen}");

    let url = postgres::server().fresh_database();
    let first = ok("", &["migrate", "--from", sqlite, "--to", &url]);
    assert!(first.contains("sessions: 2 (2 copied now, 0 already there, 0 of them changed"), "{first}");
    assert!(first.contains("observations: 1"), "{first}");
    assert!(!first.contains(password_of(&url)), "the password is never printed: {first}");

    // Safe to re-run: nothing is copied twice, and the copy still verifies.
    let again = ok("", &["migrate", "--from", sqlite, "--to", &url]);
    assert!(again.contains("sessions: 2 (0 copied now, 2 already there, 0 of them changed"), "{again}");
    let checksum = |out: &str| out.split("sha256 ").nth(1).map(str::to_owned);
    assert_eq!(checksum(&again), checksum(&first));

    for args in [&["show", "s1"][..], &["show", "s2"], &["--json", "show", "s1"], &["session", "list"]] {
        assert_eq!(ok(&url, args), ok(sqlite, args), "`{}` differs after the migration", args.join(" "));
    }
    let query = ["query", "s1", "what next?", "--system", "You are an agent.", "--turn", "t10"];
    let prompt = ok(&url, &query);
    assert!(prompt.contains("1. migrate") && prompt.contains("found: the bug"), "{prompt}");
    assert_eq!(prompt, ok(sqlite, &query), "the same prompt from both stores");
    let id = seen.split("\"scratchpad_id\":\"").nth(1).unwrap().split('"').next().unwrap();
    let args = format!(r#"{{"scratchpad_id":"{id}","mode":"range","start":20000,"end":20040}}"#);
    let from_postgres = ok(&url, &["call", "s1", "scratchpad_read", &args, "--turn", "t9"]);
    assert!(from_postgres.contains(&log[20000..20040].replace('\n', "\\n")), "{from_postgres}");

    // Once the fleet has used a session, a later run keeps the target's and says so.
    let later = ok("", &["migrate", "--from", sqlite, "--to", &url]);
    assert!(later.contains("sessions: 2 (0 copied now, 2 already there, 1 of them changed"), "{later}");
}

#[test]
fn the_database_comes_from_the_environment_when_no_flag_names_one() {
    let url = postgres::server().fresh_database();
    let env = [(scratchpad_host::DATABASE_URL_ENV, url.as_str())];
    let created = scratchpad_with("", &["session", "create", "from-env"], &env);
    assert!(created.status.success(), "{}", text(&created.stderr));
    assert!(ok(&url, &["session", "list"]).contains("from-env"), "the session is on the server");
    // --db wins over the environment.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("local.db");
    let listed = scratchpad_with(file.to_str().unwrap(), &["session", "list"], &env);
    assert!(listed.status.success() && !text(&listed.stdout).contains("from-env"), "{}", text(&listed.stdout));
}

#[test]
fn connection_errors_name_the_server_and_never_the_password() {
    let server = postgres::server();
    let url = server.fresh_database();
    let database = url.rsplit('/').next().unwrap();
    let wrong = server.url_with_password(database, "not-the-password-4711");
    let out = scratchpad(&wrong, &["session", "list"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{}", server.port())), "names the server: {stderr}");
    assert!(stderr.contains("password authentication failed"), "says what failed: {stderr}");
    assert!(stderr.contains("Check that"), "says what to check: {stderr}");
    assert!(!stderr.contains("not-the-password-4711") && !stderr.contains(password_of(&url)), "{stderr}");

    // Nothing listens on a port just released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let nowhere = format!("postgres://scratchpad:s3cret-pw@127.0.0.1:{port}/none");
    let out = scratchpad(&nowhere, &["session", "list"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("postgres://scratchpad:***@127.0.0.1:{port}/none")), "{stderr}");
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
}

#[test]
fn a_migration_with_nothing_to_copy_from_is_a_clear_error_that_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (missing, target) = (dir.path().join("missing.db"), dir.path().join("target.db"));
    let out = scratchpad("", &["migrate", "--from", missing.to_str().unwrap(), "--to", target.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("there is no database at") && stderr.contains("missing.db"), "{stderr}");
    assert!(!missing.exists() && !target.exists(), "neither database was created");

    let url = postgres::server().fresh_database();
    let out = scratchpad("", &["migrate", "--from", &url, "--to", &url]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the source and the target are the same database"), "{stderr}");
    assert!(!stderr.contains(password_of(&url)), "{stderr}");
    let tables = postgres::server()
        .psql(url.rsplit('/').next().unwrap(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'");
    assert_eq!(tables, "0", "the schema was not even created");
}
