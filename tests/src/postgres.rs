//! A real PostgreSQL server for the integration tests: one per test process, started on first
//! use from the machine's Debian packages (`/usr/lib/postgresql/<version>/bin`, the newest
//! version; the harness installs the `postgresql` package when they are missing, see
//! [`crate::setup::POSTGRES`]),
//! stopped when the process ends.
//!
//! - **Its own everything.** Each test process gets a fresh cluster in its own temp dir, its own
//!   free port on 127.0.0.1 and its own unix socket (in that dir), so test binaries can run at
//!   the same time and the distro's cluster, if any, is never touched.
//! - **Runs as `postgres`.** `initdb` and the server refuse to run as root, so the temp dir is
//!   chowned to the `postgres` user and they are started with its uid and gid (std's
//!   `CommandExt::uid`/`gid`, which also drop root's supplementary groups).
//! - **Two ways in.** The role `scratchpad` (LOGIN, CREATEDB, a random password) over TCP with
//!   scram-sha-256: what the host under test uses. The superuser `postgres` over the unix socket
//!   with `trust`: for the harness and the tests' assertions ([`PostgresServer::psql`]).
//! - **Never outlives the test process.** The postmaster is started by a supervising shell
//!   (`SUPERVISOR`) whose stdin is a pipe only the test process holds (std opens pipes
//!   close-on-exec, so no other child inherits it). However the test process ends (returns,
//!   panics, is killed), the kernel closes that pipe; the shell reads end of file, stops the
//!   postmaster by its PID (fast shutdown, escalating), reaps it and removes the temp dir. No
//!   PID polling of the test process, no `pdeathsig` (which follows the spawning *thread*, not
//!   the process), nothing killed by name.

use std::fs::{self, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::process::{ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::process::free_port;

/// Where Debian installs each PostgreSQL version, as `<version>/bin`.
const INSTALL_ROOT: &str = "/usr/lib/postgresql";
/// The operating-system user that runs the server, and the superuser role `initdb` creates.
const SUPERUSER: &str = "postgres";
/// The login role of the tests' connection URLs.
const ROLE: &str = "scratchpad";
/// How long the server may take to accept connections: generous, the CI machine has 2 cores
/// and builds run beside the tests.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// Starts tried before giving up when the chosen port was taken in between (see [`free_port`]).
const PORT_ATTEMPTS: u32 = 5;

/// The supervising shell, run as `postgres` with `$1` = the temp dir and `$2` = the `postgres`
/// binary. It starts the postmaster and prints its PID on stdout, then reads commands on its
/// stdin: `stop` stops the postmaster and prints `stopped`, `start` starts it again and prints
/// the new PID ([`PostgresServer::stop`], [`PostgresServer::start_again`]). At end of file (the
/// test process is gone, or dropped a private server) it stops the postmaster — `SIGINT` (fast
/// shutdown), after 20 s `SIGQUIT` (immediate), after 30 s `SIGKILL` — and removes the temp
/// dir. The postmaster is its child, so its PID cannot be reused before the `wait`, and the
/// kills always reach the right process. `SIGPIPE` is ignored: an answer nobody reads any
/// more must not kill the shell before it stops the server.
const SUPERVISOR: &str = r#"
dir=$1
postgres=$2
exec 2>>"$dir/server.log"
trap '' PIPE
alive() { read -r _ _ state _ <"/proc/$pm/stat" && [ "$state" != Z ]; } 2>/dev/null
start_server() {
  "$postgres" -D "$dir/data" </dev/null >>"$dir/server.log" 2>&1 &
  pm=$!
  echo "$pm"
}
stop_server() {
  kill -INT "$pm"
  n=0
  while alive; do
    n=$((n + 1))
    if [ "$n" = 200 ]; then kill -QUIT "$pm"; fi
    if [ "$n" = 300 ]; then kill -KILL "$pm"; fi
    sleep 0.1
  done
  wait "$pm"
}
start_server
while read -r command; do
  case $command in
    stop) stop_server; echo stopped ;;
    start) start_server ;;
  esac
done
echo "supervisor: the test process is gone, stopping the postmaster ($pm)" >>"$dir/server.log"
stop_server
rm -rf "$dir"
"#;

/// One PostgreSQL server per test process, started on first use, stopped (by PID) when the
/// process exits.
pub fn server() -> &'static PostgresServer {
    static SERVER: OnceLock<PostgresServer> = OnceLock::new();
    SERVER.get_or_init(PostgresServer::start)
}

/// A running server of this test process (see the module's documentation).
pub struct PostgresServer {
    /// The directory of the installed version's binaries.
    bin: PathBuf,
    /// The temp dir: `data/` (the cluster), `server.log`, and the unix socket.
    dir: PathBuf,
    port: u16,
    /// The password of the role [`ROLE`].
    password: String,
    /// The postmaster's PID (a new one after [`PostgresServer::start_again`]).
    pid: AtomicU32,
    /// Numbers the databases of [`PostgresServer::fresh_database`].
    databases: AtomicU64,
    /// The supervising shell. Its stdin is the pipe whose closing stops the server: held for
    /// the life of the process by the shared server (a static, never dropped), until the drop
    /// of a private one.
    supervisor: Mutex<Supervisor>,
}

/// The supervising shell and the pipes to it.
struct Supervisor {
    child: Child,
    /// `None` once closed (the server stops).
    commands: Option<ChildStdin>,
    answers: BufReader<ChildStdout>,
}

impl Supervisor {
    /// Sends `command`, and reads its answer's line.
    fn ask(&mut self, command: &str) -> String {
        let commands = self.commands.as_mut().expect("the supervisor is running");
        writeln!(commands, "{command}").expect("writing to the PostgreSQL supervisor");
        let mut line = String::new();
        self.answers.read_line(&mut line).expect("reading the PostgreSQL supervisor's answer");
        line.trim().to_owned()
    }

    /// Closes the supervisor's stdin, which stops the server and removes its temp dir, and
    /// waits until it has.
    fn close(&mut self) {
        drop(self.commands.take());
        let _ = self.child.wait();
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        self.supervisor.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner()).close();
    }
}

impl PostgresServer {
    /// A fresh, empty database on the server (unique name), owned by the role `scratchpad`, as
    /// a URL with its password: `postgres://scratchpad:<password>@127.0.0.1:<port>/<dbname>`.
    pub fn fresh_database(&self) -> String {
        let name = format!("scratchpad_{}", self.databases.fetch_add(1, Ordering::Relaxed) + 1);
        self.psql("postgres", &format!("CREATE DATABASE {name} OWNER {ROLE}"));
        self.url_with_password(&name, &self.password)
    }

    /// The same server's URL for database `database` as the role `scratchpad` with `password`
    /// (a wrong one, to test that errors never echo passwords). Both are percent-encoded.
    pub fn url_with_password(&self, database: &str, password: &str) -> String {
        format!("postgres://{ROLE}:{}@127.0.0.1:{}/{}", percent_encode(password), self.port, percent_encode(database))
    }

    /// The TCP port the server listens on (127.0.0.1 only).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The postmaster's PID.
    pub fn pid(&self) -> u32 {
        self.pid.load(Ordering::Relaxed)
    }

    /// A server of the caller's own (the shared one is [`server`]), stopped and removed when
    /// dropped: for tests that stop or restart it under a host.
    pub fn private() -> PostgresServer {
        PostgresServer::start()
    }

    /// Stops the server as `pg_ctl stop -m fast` does (SIGINT: every session is ended, a
    /// statement in flight fails, its transaction rolls back) and waits until it is gone.
    pub fn stop(&self) {
        let answer = self.supervisor.lock().unwrap().ask("stop");
        assert_eq!(answer, "stopped", "the PostgreSQL supervisor's answer to stop");
    }

    /// Starts the server again after [`PostgresServer::stop`], on the same port and data, and
    /// waits until it accepts connections.
    pub fn start_again(&self) {
        let mut supervisor = self.supervisor.lock().unwrap();
        let answer = supervisor.ask("start");
        let pid = answer.parse::<u32>().unwrap_or_else(|_| panic!("the supervisor printed no PID: {answer:?}"));
        self.pid.store(pid, Ordering::Relaxed);
        if let Err(log) = wait_ready(&self.bin, &self.dir, self.port, pid) {
            panic!("the test PostgreSQL server did not start again:\n{log}");
        }
    }

    /// [`PostgresServer::stop`], then [`PostgresServer::start_again`]: what `pg_ctl restart`
    /// does.
    pub fn restart(&self) {
        self.stop();
        self.start_again();
    }

    /// Runs `sql` (one or more statements, as a script: each its own transaction unless it
    /// says otherwise) as the superuser on `database` via psql over the unix socket, and
    /// returns its stdout: rows unaligned (`|` between columns), no headers, no trailing
    /// newline. Panics, with psql's stderr, when a statement fails.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let mut child = self
            .psql_command()
            .args(["-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-f", "-", "-h"])
            .arg(&self.dir)
            .args(["-p", &self.port.to_string(), "-U", SUPERUSER, "-d", database])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting psql: {e}"));
        // Written from a thread: a script with much output would otherwise fill stdout's pipe
        // while psql waits for the rest of its input.
        let mut stdin = child.stdin.take().expect("psql's stdin is piped");
        let script = sql.to_owned();
        let writer = std::thread::spawn(move || stdin.write_all(script.as_bytes()));
        let output = child.wait_with_output().unwrap_or_else(|e| panic!("running psql: {e}"));
        let written = writer.join().expect("the psql writer thread");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "psql on {database} failed ({}):\n{sql}\n{}{stdout}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        written.unwrap_or_else(|e| panic!("writing to psql: {e}"));
        stdout.trim_end_matches('\n').to_owned()
    }

    /// A `psql` connected as the superuser to `database` over the unix socket, stopping at the
    /// first failing statement: for a test that keeps a session open (e.g. one holding a lock
    /// while the host works) and writes its statements to psql's stdin as it goes.
    pub fn psql_connected(&self, database: &str) -> Command {
        let mut command = self.psql_command();
        command.args(["-q", "-v", "ON_ERROR_STOP=1", "-h"]).arg(&self.dir).args([
            "-p",
            &self.port.to_string(),
            "-U",
            SUPERUSER,
            "-d",
            database,
        ]);
        command
    }

    /// A `psql` command of the server's version with no connection arguments and no `PG*`
    /// variables from the environment, for tests that connect their own way (e.g. as the role
    /// `scratchpad` over TCP with `PGPASSWORD`). `-X` (no `.psqlrc`) is set.
    pub fn psql_command(&self) -> Command {
        let mut command = Command::new(self.bin.join("psql"));
        clean_env(&mut command).arg("-X");
        command
    }

    /// Starts the server; panics with the reason (and the server's log) when it cannot.
    fn start() -> PostgresServer {
        let bin = binaries();
        let user = OsUser::lookup(SUPERUSER);
        let password = hex::encode(random_bytes::<16>());
        for attempt in 1..=PORT_ATTEMPTS {
            let port = free_port();
            let dir = new_cluster(&bin, &user, port);
            match launch(&bin, &user, &dir, port) {
                Ok((supervisor, pid)) => {
                    let pid = AtomicU32::new(pid);
                    let server = PostgresServer {
                        bin,
                        dir,
                        port,
                        password,
                        pid,
                        databases: AtomicU64::new(0),
                        supervisor: Mutex::new(supervisor),
                    };
                    server
                        .psql("postgres", &format!("CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{}'", server.password));
                    return server;
                }
                Err(log) if attempt < PORT_ATTEMPTS && port_taken(&log) => continue,
                Err(log) => panic!("the test PostgreSQL server (port {port}, {}) did not start:\n{log}", dir.display()),
            }
        }
        unreachable!("the last attempt returns or panics")
    }
}

/// The newest installed version's `bin` directory, installing the package with
/// its Debian package ([`crate::setup::POSTGRES`]) when there is none.
fn binaries() -> PathBuf {
    let what = format!("PostgreSQL (initdb, postgres, psql, pg_isready under {INSTALL_ROOT}/<version>/bin)");
    crate::setup::ensure(&crate::setup::POSTGRES, &what, || newest_binaries().is_some());
    newest_binaries().expect("ensured above")
}

/// The newest installed version's `bin` directory holding every binary the harness runs.
fn newest_binaries() -> Option<PathBuf> {
    let needed = ["initdb", "postgres", "psql", "pg_isready"];
    fs::read_dir(INSTALL_ROOT)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version: Vec<u32> =
                entry.file_name().to_str()?.split('.').map(|n| n.parse().ok()).collect::<Option<_>>()?;
            let bin = entry.path().join("bin");
            needed.iter().all(|name| bin.join(name).is_file()).then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

/// An operating-system user's uid and gid.
struct OsUser {
    uid: u32,
    gid: u32,
}

impl OsUser {
    fn lookup(name: &str) -> OsUser {
        let id = |flag: &str| -> u32 {
            let output = Command::new("id").args([flag, name]).output().unwrap_or_else(|e| panic!("running id: {e}"));
            assert!(
                output.status.success(),
                "there is no `{name}` user to run the test PostgreSQL server as (the postgresql package \
                 creates it: `apt-get install postgresql`): {}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8_lossy(&output.stdout).trim().parse().expect("id prints a number")
        };
        OsUser { uid: id("-u"), gid: id("-g") }
    }
}

/// Whether the server's log says its port was taken.
fn port_taken(log: &str) -> bool {
    log.contains("could not bind") || log.contains("Address already in use")
}

/// A new cluster in a new temp dir owned by `user`, configured for the tests on `port`.
///
/// The dir is under `/tmp`, not `$TMPDIR`: `postgres` must be able to reach it, and the unix
/// socket's path (`<dir>/.s.PGSQL.<port>`) must fit in 107 bytes.
fn new_cluster(bin: &Path, user: &OsUser, port: u16) -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix("scratchpad-pg-")
        .tempdir_in("/tmp")
        .expect("creating the PostgreSQL temp dir")
        .keep();
    std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid)).expect("chowning the temp dir to postgres");
    let data = dir.join("data");
    let output = as_user(Command::new(bin.join("initdb")), user, &dir)
        .arg("-D")
        .arg(&data)
        .args(["-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--no-locale"])
        // Test clusters are thrown away: no need to wait for initdb's files to reach the disk.
        // The server itself keeps fsync on (the durability tests kill processes).
        .arg("--no-sync")
        .output()
        .unwrap_or_else(|e| panic!("starting initdb: {e}"));
    if !output.status.success() {
        let _ = fs::remove_dir_all(&dir);
        panic!(
            "initdb failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // Written into the files initdb created, so they stay owned by `postgres`.
    fs::write(
        data.join("pg_hba.conf"),
        format!(
            "# tests/src/postgres.rs: the superuser over this cluster's own unix socket, every role over\n\
             # TCP on 127.0.0.1 with its password (the superuser has none).\n\
             local all {SUPERUSER} trust\n\
             host all all 127.0.0.1/32 scram-sha-256\n"
        ),
    )
    .expect("writing pg_hba.conf");
    let mut conf = OpenOptions::new().append(true).open(data.join("postgresql.conf")).expect("opening postgresql.conf");
    write!(
        conf,
        "\n# tests/src/postgres.rs\n\
         listen_addresses = '127.0.0.1'\n\
         port = {port}\n\
         unix_socket_directories = '{}'\n\
         password_encryption = 'scram-sha-256'\n\
         # Several host processes with their pools, and the tests' own connections.\n\
         max_connections = 300\n\
         shared_buffers = 128MB\n\
         fsync = on\n\
         track_counts = on\n\
         logging_collector = off\n",
        dir.display()
    )
    .expect("writing postgresql.conf");
    dir
}

/// Starts the supervisor and the postmaster of the cluster in `dir`, and waits until it accepts
/// connections: the supervisor and the postmaster's PID, or the server's log when it died or
/// did not become ready in time (the supervisor is then stopped, which removes `dir`).
fn launch(bin: &Path, user: &OsUser, dir: &Path, port: u16) -> Result<(Supervisor, u32), String> {
    let mut child = as_user(Command::new("/bin/sh"), user, dir)
        .args(["-c", SUPERVISOR, "scratchpad-pg-supervisor"])
        .arg(dir)
        .arg(bin.join("postgres"))
        // Out of the terminal's process group: a Ctrl-C stops the test process, and the
        // supervisor, left running, then shuts the server down and cleans up.
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting the PostgreSQL supervisor: {e}"));
    let commands = child.stdin.take();
    let answers = BufReader::new(child.stdout.take().expect("the supervisor's stdout is piped"));
    let mut supervisor = Supervisor { child, commands, answers };
    let mut line = String::new();
    let _ = supervisor.answers.read_line(&mut line);
    let Ok(pid) = line.trim().parse::<u32>() else {
        supervisor.close();
        return Err(format!("the supervisor printed no postmaster PID ({line:?})\n{}", server_log(dir)));
    };
    match wait_ready(bin, dir, port, pid) {
        Ok(()) => Ok((supervisor, pid)),
        Err(reason) => {
            supervisor.close();
            Err(reason)
        }
    }
}

/// Waits until the postmaster `pid` of the cluster in `dir` accepts connections; the reason
/// and the server's log when it exited or did not become ready in time.
fn wait_ready(bin: &Path, dir: &Path, port: u16, pid: u32) -> Result<(), String> {
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let ready = clean_env(&mut Command::new(bin.join("pg_isready")))
            .args(["-q", "-t", "5", "-d", "postgres", "-U", SUPERUSER, "-h"])
            .arg(dir)
            .args(["-p", &port.to_string()])
            .status()
            .is_ok_and(|status| status.success());
        if ready {
            return Ok(());
        }
        if !process_alive(pid) {
            return Err(format!("the postmaster ({pid}) exited\n{}", server_log(dir)));
        }
        if Instant::now() > deadline {
            return Err(format!("not accepting connections after {START_TIMEOUT:?}\n{}", server_log(dir)));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The server's log, for a failure's message.
fn server_log(dir: &Path) -> String {
    fs::read_to_string(dir.join("server.log")).unwrap_or_else(|e| format!("(no server log: {e})"))
}

/// Whether process `pid` exists and is not a zombie.
fn process_alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

/// `command` run as `user` in `dir`, with a minimal environment.
fn as_user(mut command: Command, user: &OsUser, dir: &Path) -> Command {
    clean_env(&mut command).uid(user.uid).gid(user.gid).current_dir(dir);
    command
}

/// No inherited environment (no stray `PG*` variable, no locale the server would need to
/// have): `PATH` and the C locale only.
fn clean_env(command: &mut Command) -> &mut Command {
    command.env_clear().env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").env("LC_ALL", "C")
}

/// `N` random bytes from the kernel.
fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0; N];
    let mut urandom = fs::File::open("/dev/urandom").expect("opening /dev/urandom");
    std::io::Read::read_exact(&mut urandom, &mut bytes).expect("reading /dev/urandom");
    bytes
}

/// `text` with every byte but the URL-unreserved ones percent-encoded, for a URL's userinfo or
/// path.
fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
