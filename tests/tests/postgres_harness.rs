//! The PostgreSQL harness of the integration tests (`tests/src/postgres.rs`) does what the
//! PostgreSQL backend's tests rely on: fresh databases that are empty and apart, a login role
//! whose password is checked, and a server that never outlives its test process.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scratchpad_tests::postgres::{PostgresServer, server};

/// The parts of a `postgres://scratchpad:<password>@127.0.0.1:<port>/<dbname>` URL; panics on
/// any other shape.
fn parse_url(url: &str) -> (String, u16, String) {
    let rest = url.strip_prefix("postgres://scratchpad:").unwrap_or_else(|| panic!("unexpected URL {url}"));
    let (password, rest) = rest.split_once("@127.0.0.1:").unwrap_or_else(|| panic!("unexpected URL {url}"));
    let (port, database) = rest.split_once('/').unwrap_or_else(|| panic!("unexpected URL {url}"));
    (password.to_owned(), port.parse().expect("a port"), database.to_owned())
}

/// psql as the role `scratchpad` over TCP to 127.0.0.1 with `PGPASSWORD` = `password`, never
/// prompting: its exit status, stdout and stderr.
fn psql_as_role(pg: &PostgresServer, database: &str, password: &str, sql: &str) -> (bool, String, String) {
    let output = pg
        .psql_command()
        .args(["-w", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-U", "scratchpad"])
        .args(["-p", &pg.port().to_string(), "-d", database, "-c", sql])
        .env("PGPASSWORD", password)
        .output()
        .expect("running psql");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim_end().to_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

/// Relations outside the system schemas, plus any schema but `public`: 0 in a fresh database.
const USER_OBJECTS: &str = "SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
     WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%') \
     + (SELECT count(*) FROM pg_namespace WHERE nspname NOT IN ('public', 'pg_catalog', 'information_schema') \
     AND nspname NOT LIKE 'pg_toast%' AND nspname NOT LIKE 'pg_temp%')";

#[test]
fn fresh_databases_are_distinct_empty_and_owned_by_the_test_role() {
    let pg = server();
    let (first, second) = (pg.fresh_database(), pg.fresh_database());
    assert_ne!(first, second);
    let (password, port, first_db) = parse_url(&first);
    let (second_password, second_port, second_db) = parse_url(&second);
    assert_ne!(first_db, second_db);
    assert_eq!((second_password.as_str(), second_port), (password.as_str(), port), "one server, one role");
    assert_eq!(port, pg.port());
    assert!(password.len() >= 32, "a random password: {password}");

    for database in [&first_db, &second_db] {
        assert_eq!(pg.psql(database, USER_OBJECTS), "0", "{database} is empty");
        let owner = pg
            .psql("postgres", &format!("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '{database}'"));
        assert_eq!(owner, "scratchpad", "{database}'s owner");
    }

    // The role creates a table in the first database: there, and only there.
    let (ok, _, stderr) =
        psql_as_role(pg, &first_db, &password, "CREATE TABLE notes (body text); INSERT INTO notes VALUES ('x')");
    assert!(ok, "the owner can create tables in its database: {stderr}");
    assert_eq!(pg.psql(&first_db, "SELECT body FROM notes"), "x");
    assert_eq!(pg.psql(&first_db, USER_OBJECTS), "1");
    assert_eq!(pg.psql(&second_db, USER_OBJECTS), "0", "the second database does not see the first's table");
}

#[test]
fn the_right_password_connects_and_a_wrong_one_is_refused() {
    let pg = server();
    let url = pg.fresh_database();
    let (password, _, database) = parse_url(&url);

    let (ok, stdout, stderr) =
        psql_as_role(pg, &database, &password, "SELECT current_user || ' ' || current_database()");
    assert!(ok, "{stderr}");
    assert_eq!(stdout, format!("scratchpad {database}"));

    let (ok, stdout, stderr) = psql_as_role(pg, &database, "not-the-password", "SELECT 1");
    assert!(!ok, "a wrong password must be refused: {stdout}");
    assert!(stderr.contains("password authentication failed for user \"scratchpad\""), "{stderr}");

    // The URLs themselves, as a client takes them (psql reads a URL as its database argument).
    let run_url =
        |url: &str| pg.psql_command().args(["-w", "-A", "-t", "-c", "SELECT 1", url]).output().expect("running psql");
    let right = run_url(&url);
    assert!(right.status.success(), "{}", String::from_utf8_lossy(&right.stderr));
    assert_eq!(String::from_utf8_lossy(&right.stdout).trim(), "1");
    let wrong_url = pg.url_with_password(&database, "wrong password/@:");
    assert_eq!(
        wrong_url,
        format!("postgres://scratchpad:wrong%20password%2F%40%3A@127.0.0.1:{}/{database}", pg.port())
    );
    let wrong = run_url(&wrong_url);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("password authentication failed"));
}

#[test]
fn the_server_is_set_up_for_the_tests() {
    let pg = server();
    let settings = pg.psql(
        "postgres",
        "SELECT current_setting('max_connections'), current_setting('fsync'), current_setting('track_counts'), \
         current_setting('listen_addresses'), current_setting('password_encryption')",
    );
    assert_eq!(settings, "300|on|on|127.0.0.1|scram-sha-256");
    // The superuser has no password, so it cannot come in over TCP: only through the socket.
    let output = pg
        .psql_command()
        .args([
            "-w",
            "-h",
            "127.0.0.1",
            "-p",
            &pg.port().to_string(),
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            "SELECT 1",
        ])
        .output()
        .expect("running psql");
    assert!(!output.status.success(), "the superuser over TCP without a password must be refused");
    // Statistics are collected for the tests to read: a session's commits reach
    // pg_stat_database (flushed when its backend exits, so shortly after psql returns).
    let (_, _, database) = parse_url(&pg.fresh_database());
    let commits =
        || pg.psql("postgres", &format!("SELECT xact_commit FROM pg_stat_database WHERE datname = '{database}'"));
    let before: u64 = commits().parse().unwrap();
    pg.psql(&database, "CREATE TABLE counted (n int); INSERT INTO counted VALUES (1); INSERT INTO counted VALUES (2)");
    let deadline = Instant::now() + Duration::from_secs(10);
    while commits().parse::<u64>().unwrap() < before + 3 {
        assert!(Instant::now() < deadline, "pg_stat_database never counted the 3 commits: {}", commits());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How the child test process ends, in [`the_server_stops_when_its_test_process_exits_or_is_killed`].
const CHILD_MODE: &str = "SCRATCHPAD_PG_HARNESS_CHILD";

/// In the child process (started by this same test with [`CHILD_MODE`] set) it starts the
/// server, prints its PID and data dir, then returns (`exit`) or hangs until killed (`kill`).
/// In the parent it runs both children and checks their server is gone soon after each ends,
/// its temp dir removed, while its own server (a different one) is unaffected.
#[test]
fn the_server_stops_when_its_test_process_exits_or_is_killed() {
    if let Ok(mode) = std::env::var(CHILD_MODE) {
        let pg = server();
        let data_dir = pg.psql("postgres", "SHOW data_directory");
        let pid_file = pg.psql("postgres", "SELECT pg_read_file('postmaster.pid')");
        assert_eq!(pid_file.lines().next(), Some(pg.pid().to_string().as_str()), "pid() is the postmaster's");
        println!("postmaster {}", pg.pid());
        println!("data_directory {data_dir}");
        if mode == "kill" {
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        return;
    }

    let own = server();
    let own_dir = own.psql("postgres", "SHOW data_directory");
    for mode in ["exit", "kill"] {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &scratchpad_tests::test_name(
                    module_path!(),
                    "the_server_stops_when_its_test_process_exits_or_is_killed",
                ),
                "--nocapture",
            ])
            .env(CHILD_MODE, mode)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut pid, mut data_dir) = (None, None);
        while pid.is_none() || data_dir.is_none() {
            let Some(Ok(line)) = lines.next() else {
                let output = child.wait_with_output().unwrap();
                panic!("the {mode} child printed no server: {}", String::from_utf8_lossy(&output.stderr));
            };
            if let Some(value) = line.strip_prefix("postmaster ") {
                pid = Some(value.parse::<u32>().unwrap());
            } else if let Some(value) = line.strip_prefix("data_directory ") {
                data_dir = Some(value.to_owned());
            }
        }
        let (pid, data_dir) = (pid.unwrap(), data_dir.unwrap());
        assert_ne!(data_dir, own_dir, "each test process has its own server");
        assert!(postmaster_running(pid, &data_dir), "the {mode} child's server runs while the child does");
        assert!(own.psql("postgres", "SELECT 1") == "1", "and this process's server still answers");

        if mode == "kill" {
            child.kill().unwrap();
            let status = child.wait().unwrap();
            assert!(!status.success(), "the child was killed: {status}");
        } else {
            let rest: Vec<String> = lines.map_while(Result::ok).collect();
            let status = child.wait().unwrap();
            assert!(status.success(), "the exit child passed: {status}\n{}", rest.join("\n"));
            assert!(rest.iter().any(|line| line.contains("1 passed")), "the child test ran: {rest:?}");
        }

        let deadline = Instant::now() + Duration::from_secs(30);
        let ended = Instant::now();
        while postmaster_running(pid, &data_dir) || std::path::Path::new(&data_dir).exists() {
            assert!(
                Instant::now() < deadline,
                "the {mode} child's server ({pid}, {data_dir}) is still there after 30 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{mode}: the child's server and its temp dir were gone {:?} after the child", ended.elapsed());
        assert!(!std::path::Path::new(&data_dir).parent().unwrap().exists(), "the whole temp dir is removed");
    }
    assert_eq!(own.psql("postgres", "SHOW data_directory"), own_dir, "this process's server is still up");
}

/// Whether `pid` is a running (not zombie) postmaster of the cluster in `data_dir`: a PID
/// reused by another process after the postmaster ended does not count.
fn postmaster_running(pid: u32, data_dir: &str) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let zombie = state.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
    !zombie && String::from_utf8_lossy(&cmdline).split('\0').any(|arg| arg == data_dir)
}
