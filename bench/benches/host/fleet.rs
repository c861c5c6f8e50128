//! Fleet mode's figures: the same host on PostgreSQL beside SQLite, in the same run.
//!
//! - **The server.** A private PostgreSQL started by the integration tests' harness
//!   (`scratchpad_tests::postgres`: a fresh cluster from the machine's Debian packages, run as
//!   the `postgres` user, on 127.0.0.1 over TCP, `fsync` on, stopped when this process exits),
//!   one fresh database per use.
//! - **Host processes.** [`processes`] runs the throughput workload (`throughput.rs`) in N real
//!   processes at once: this benchmark binary re-executed with [`CHILD`] set, each child opening
//!   its own `Host` on the same database and calling for the same window after a common start
//!   signal. Calls per second are the sum of the children's.
//! - **Round trips.** [`Proxy`] is a TCP relay between a host and the server that counts trips
//!   on the wire: a trip is the client sending after the server last spoke (or first), so a
//!   statement's Bind/Execute/Sync and its response is one, a COPY is two (the client waits for
//!   the server's go-ahead, then streams). [`xact_commit`] reads the server's own count of
//!   committed transactions (`pg_stat_database`), the check on the other side.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use scratchpad_host::{Host, HostConfig, Location, PluginSpec};
use scratchpad_tests::postgres::server;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::record;
use crate::throughput::{self, Contender, SESSIONS, TASKS};

/// Set (to the database's location) in the environment of a throughput child process.
pub const CHILD: &str = "SCRATCHPAD_BENCH_CHILD_DATABASE";
/// The child's compiled-component cache (the parent's, already filled).
const CHILD_CACHE: &str = "SCRATCHPAD_BENCH_CHILD_CACHE";
/// The child's window, in milliseconds.
const CHILD_WINDOW: &str = "SCRATCHPAD_BENCH_CHILD_WINDOW_MS";

/// A fresh database on the run's server, as a URL (the server starts on first use).
pub fn database() -> String {
    server().fresh_database()
}

/// The database name at the end of a URL from [`database`].
pub fn name(url: &str) -> &str {
    let path = url.rsplit_once('/').map_or(url, |(_, name)| name);
    path.split_once('?').map_or(path, |(name, _)| name)
}

/// Runs `sql` as the superuser on the database of `url`.
pub fn psql(url: &str, sql: &str) -> String {
    server().psql(name(url), sql)
}

/// Makes every commit on the database of `url` wait for nothing (`synchronous_commit = off`,
/// for connections made from now on): what the WAL flush at commit costs, by difference.
pub fn without_commit_flush(url: &str) {
    server().psql("postgres", &format!("ALTER DATABASE {} SET synchronous_commit = off", name(url)));
}

/// Writes `SESSIONS` sessions (`tp-0` …) with a filled scratchpad into the database of `url`
/// (whose schema a host has created), for `plugin`: the same rows `throughput::seed` writes
/// into a SQLite file.
pub fn seed(url: &str, plugin: &str) {
    let last = SESSIONS - 1;
    psql(
        url,
        &format!(
            "BEGIN;
             INSERT INTO sessions (id, origin, created_at, updated_at, turn_id, turn_index)
               SELECT 'tp-' || i, 'new', 0, 0, 't', 0 FROM generate_series(0, {last}) i;
             INSERT INTO plugin_state (session, plugin, key, value)
               SELECT 'tp-' || i, '{plugin}', 'notes', convert_to('Finding ' || i || ': the token expires in UTC', 'UTF8')
                 FROM generate_series(0, {last}) i;
             INSERT INTO plugin_state (session, plugin, key, value)
               SELECT 'tp-' || i, '{plugin}', 'plan', convert_to(E'1. a\\n2. b', 'UTF8') FROM generate_series(0, {last}) i;
             COMMIT;
             ANALYZE;"
        ),
    );
}

/// The child side of [`processes`]: when [`CHILD`] is set, opens a host with the scratchpad
/// plugin on that database, warms it (half a second of the workload, so every pooled
/// connection is open before the window), says `ready`, waits for a line on stdin, runs the
/// throughput workload for the window, prints `<calls> <seconds> <CPU ticks it used>`, and
/// exits at the next line (so its connections stay open until the parent has read the
/// server's CPU time). Returns whether this process was a child (and so has done its work).
pub fn child() -> bool {
    let Some(database) = std::env::var_os(CHILD) else { return false };
    let database = Location::parse(database.to_str().expect("a UTF-8 location"));
    let cache = std::env::var_os(CHILD_CACHE).expect("the child's cache dir");
    let window: u64 = std::env::var(CHILD_WINDOW).expect("the child's window").parse().expect("milliseconds");
    let rt = crate::runtime();
    let config = HostConfig {
        database,
        cache_dir: Some(cache.into()),
        plugins: vec![PluginSpec::embedded("scratchpad")],
        ..HostConfig::default()
    };
    let host = rt.block_on(Host::open(config)).expect("opening the child's host");
    let contender = Contender::Component(host);
    throughput::count(&rt, contender.clone(), Duration::from_millis(500));
    let mut stdout = std::io::stdout();
    writeln!(stdout, "ready").unwrap();
    stdout.flush().unwrap();
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    let ticks = cpu_ticks(std::process::id());
    let (calls, elapsed) = throughput::count(&rt, contender, Duration::from_millis(window));
    let ticks = cpu_ticks(std::process::id()) - ticks;
    writeln!(stdout, "{calls} {} {ticks}", elapsed.as_secs_f64()).unwrap();
    stdout.flush().unwrap();
    std::io::stdin().read_line(&mut line).unwrap();
    true
}

/// Clock ticks (1/100 s on Linux: `USER_HZ`) of CPU time process `pid` has used, user and
/// system, all threads.
fn cpu_ticks(pid: u32) -> u64 {
    stat(pid).map_or(0, |(_, ticks)| ticks)
}

/// The machine's CPU ticks so far, all cores: busy (user, nice, system, irq, softirq), idle
/// (with iowait) and steal, from `/proc/stat`.
fn machine_ticks() -> [u64; 3] {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu: Vec<u64> =
        stat.lines().next().unwrap_or_default().split_whitespace().skip(1).map(|f| f.parse().unwrap_or(0)).collect();
    let at = |i: usize| cpu.get(i).copied().unwrap_or(0);
    [at(0) + at(1) + at(2) + at(5) + at(6), at(3) + at(4), at(7)]
}

/// A process's parent and its CPU ticks, from `/proc/<pid>/stat`.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's `)`: state, ppid, pgrp, session, tty, tpgid, flags, minflt,
    // cminflt, majflt, cmajflt, utime, stime.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let parent = fields.get(1)?.parse().ok()?;
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some((parent, ticks))
}

/// CPU ticks used so far by the run's PostgreSQL server: the postmaster, every process it
/// started that is still running (backends, checkpointer, WAL writer, …), and those it has
/// reaped (autovacuum workers, backends of closed connections: their time is added to the
/// postmaster's `cutime` and `cstime`).
fn server_ticks() -> u64 {
    let postmaster = server().pid();
    let processes = std::fs::read_dir("/proc").into_iter().flatten().flatten();
    let children = processes
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat)
        .filter(|(parent, _)| *parent == postmaster)
        .map(|(_, ticks)| ticks);
    cpu_ticks(postmaster) + reaped_ticks(postmaster) + children.sum::<u64>()
}

/// The CPU ticks of the reaped children of process `pid` (`cutime` + `cstime`).
fn reaped_ticks(pid: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0 };
    let Some((_, rest)) = stat.rsplit_once(')') else { return 0 };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    fields.get(13..15).unwrap_or_default().iter().filter_map(|f| f.parse::<u64>().ok()).sum()
}

/// Runs the throughput workload in `n` processes at once on `database` for `window`, and
/// writes the summed calls per second as `throughput/<name>`.
pub fn processes(name: &str, database: &str, cache: &Path, n: usize, window: Duration) -> f64 {
    let exe = std::env::current_exe().expect("this benchmark's executable");
    let mut children: Vec<_> = (0..n)
        .map(|_| {
            Command::new(&exe)
                .env(CHILD, database)
                .env(CHILD_CACHE, cache)
                .env(CHILD_WINDOW, window.as_millis().to_string())
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("starting a throughput child")
        })
        .collect();
    let mut outputs: Vec<_> = children.iter_mut().map(|c| BufReader::new(c.stdout.take().unwrap())).collect();
    for output in &mut outputs {
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "a throughput child failed to start");
    }
    // Every child is open and warm: start them together.
    let postgres = Location::parse(database).is_postgres();
    let server_before = if postgres { server_ticks() } else { 0 };
    let machine_before = machine_ticks();
    for child in &mut children {
        child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    }
    let (mut rates, mut seconds, mut calls, mut host_ticks) = (Vec::new(), 0f64, 0f64, 0u64);
    for output in &mut outputs {
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        let figures: Vec<&str> = line.split_whitespace().collect();
        let [made, took, ticks] = figures[..] else { panic!("`<calls> <seconds> <ticks>` from a child: {line:?}") };
        let (made, took): (f64, f64) = (made.parse().unwrap(), took.parse().unwrap());
        rates.push(made / took);
        calls += made;
        seconds = seconds.max(took);
        host_ticks += ticks.parse::<u64>().unwrap();
    }
    // Every child has finished its window and still holds its connections.
    let server_ticks = if postgres { server_ticks().saturating_sub(server_before) } else { 0 };
    let machine: Vec<u64> = machine_ticks().iter().zip(machine_before).map(|(after, before)| after - before).collect();
    let cores = |ticks: u64| ticks as f64 / 100.0 / seconds;
    for child in &mut children {
        child.stdin.as_mut().unwrap().write_all(b"exit\n").unwrap();
        assert!(child.wait().unwrap().success(), "a throughput child failed");
    }
    let per_second: f64 = rates.iter().sum();
    // Ticks are hundredths of a second; per call, in microseconds.
    let per_call = |ticks: u64| ticks as f64 * 10_000.0 / calls;
    let figures = serde_json::json!({
        "calls_per_second": per_second,
        "processes": n,
        "per_process": rates,
        "tasks": TASKS,
        "sessions": SESSIONS,
        "seconds": seconds,
        "host_cpu_us_per_call": per_call(host_ticks),
        "server_cpu_us_per_call": per_call(server_ticks),
        "cpu_seconds": (host_ticks + server_ticks) as f64 / 100.0,
        // The whole machine over the same time (`/proc/stat`), in cores: busy (any process),
        // idle, and stolen by the hypervisor.
        "machine_busy_cores": cores(machine[0]),
        "machine_idle_cores": cores(machine[1]),
        "machine_steal_cores": cores(machine[2]),
    });
    record::write("throughput", name, "throughput.json", &figures);
    per_second
}

/// A TCP relay to the server that counts round trips (see the module docs).
pub struct Proxy {
    port: u16,
    trips: Arc<AtomicU64>,
    connections: Arc<AtomicU64>,
}

impl Proxy {
    /// Starts relaying a free port on 127.0.0.1 to the run's server, on `rt`.
    pub fn start(rt: &tokio::runtime::Runtime) -> Proxy {
        let target = server().port();
        let listener = rt.block_on(TcpListener::bind(("127.0.0.1", 0))).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (trips, connections) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let (counter, connected) = (trips.clone(), connections.clone());
        rt.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { return };
                let Ok(upstream) = TcpStream::connect(("127.0.0.1", target)).await else { continue };
                connected.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(relay(client, upstream, counter.clone()));
            }
        });
        Proxy { port, trips, connections }
    }

    /// `url` (a database on the run's server) through this relay.
    pub fn url(&self, url: &str) -> String {
        let port = format!(":{}/", server().port());
        assert!(url.contains(&port), "{url} is not on the run's server");
        url.replacen(&port, &format!(":{}/", self.port), 1)
    }

    /// Round trips so far, over every connection.
    pub fn trips(&self) -> u64 {
        self.trips.load(Ordering::SeqCst)
    }

    /// Connections relayed so far.
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Relays one connection both ways, counting a trip each time the client sends after the
/// server has spoken (the flag is cleared before the server's bytes are passed on, so the
/// client cannot answer them before it is).
async fn relay(client: TcpStream, server: TcpStream, trips: Arc<AtomicU64>) {
    let sent = Arc::new(AtomicBool::new(false));
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let flag = sent.clone();
    let up = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if !flag.swap(true, Ordering::SeqCst) {
                        trips.fetch_add(1, Ordering::SeqCst);
                    }
                    if server_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = server_write.shutdown().await;
    };
    let down = async move {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match server_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    sent.store(false, Ordering::SeqCst);
                    if client_write.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            }
        }
        let _ = client_write.shutdown().await;
    };
    tokio::join!(up, down);
}

/// The server's count of committed transactions in the database of `url`, once every
/// backend's pending statistics have reached it. A backend reports its counts when it goes
/// idle, at most once a second, and otherwise after ten idle seconds (PostgreSQL 15+:
/// `PGSTAT_IDLE_INTERVAL`); `pg_stat_force_next_flush()` only flushes the backend calling
/// it. So this waits out that interval after the last activity (a host's pooled connections
/// stay open and idle), then reads.
pub fn xact_commit(url: &str) -> i64 {
    std::thread::sleep(Duration::from_millis(11_500));
    let sql = format!("SELECT xact_commit FROM pg_stat_database WHERE datname = '{}'", name(url));
    server().psql("postgres", &sql).trim().parse().expect("a transaction count")
}

/// Logs the duration of every statement run on the database of `url` (connections made from
/// now on): parse, bind and execute of each extended-protocol statement, and each simple query.
pub fn log_durations(url: &str) {
    server().psql("postgres", &format!("ALTER DATABASE {} SET log_min_duration_statement = 0", name(url)));
}

/// The server's log file (the harness sends the server's stderr to `server.log` beside the
/// cluster's data directory).
fn server_log() -> std::path::PathBuf {
    let data = server().psql("postgres", "SHOW data_directory");
    Path::new(data.trim()).parent().expect("the data directory's parent").join("server.log")
}

/// The server log's length now, to read what is logged after it.
pub fn log_length() -> u64 {
    std::fs::metadata(server_log()).map_or(0, |m| m.len())
}

/// Statement durations the server logged (see [`log_durations`]).
#[derive(Default)]
pub struct Durations {
    /// Statements executed (extended-protocol executes and simple queries).
    pub statements: u64,
    pub parse_ms: f64,
    pub bind_ms: f64,
    /// Executes and simple queries.
    pub execute_ms: f64,
}

impl Durations {
    pub fn total_ms(&self) -> f64 {
        self.parse_ms + self.bind_ms + self.execute_ms
    }
}

/// The durations logged after byte `offset` of the server's log (a moment is left for the
/// backends' last lines to be written).
pub fn durations_since(offset: u64) -> Durations {
    std::thread::sleep(Duration::from_millis(200));
    let log = std::fs::read(server_log()).expect("reading the server's log");
    let log = String::from_utf8_lossy(&log[(offset as usize).min(log.len())..]);
    let mut spent = Durations::default();
    for line in log.lines() {
        // `<time> [<pid>] LOG:  duration: 0.123 ms  execute s3: SELECT …`
        let Some((_, rest)) = line.split_once("LOG:  duration: ") else { continue };
        let Some((ms, rest)) = rest.split_once(" ms  ") else { continue };
        let Ok(ms) = ms.parse::<f64>() else { continue };
        match rest.split([' ', ':']).next() {
            Some("parse") => spent.parse_ms += ms,
            Some("bind") => spent.bind_ms += ms,
            Some("execute" | "statement") => {
                spent.statements += 1;
                spent.execute_ms += ms;
            }
            _ => {}
        }
    }
    spent
}

/// Turns off autovacuum on every table of the database of `url`, so that no background
/// transaction lands in its counts while trips are counted.
pub fn quiet(url: &str) {
    let tables = psql(url, "SELECT string_agg(tablename, ' ') FROM pg_tables WHERE schemaname = 'public'");
    let sql: String =
        tables.split_whitespace().map(|t| format!("ALTER TABLE {t} SET (autovacuum_enabled = false);\n")).collect();
    psql(url, &sql);
}
