//! The fleet test: four `scratchpad serve` processes ("nodes") on one PostgreSQL
//! database, 200 sessions, every node appending to the same sessions at once, nodes killed with
//! SIGKILL at random moments and restarted. Afterwards, read through a fresh node and straight
//! from the database:
//!
//! - every acknowledged `append_notes` token is in its session's notes exactly once, no rejected
//!   one is, and no line is anything but a token sent to that session;
//! - the notes equal a serial replay: each acknowledged append reported the notes length of the
//!   stored notes up to and including its token, each rejection the length of a stored prefix
//!   that its token did not fit after, and one client's acknowledged tokens are in its order;
//! - no notes over their budget, no refs over 50 (and none of a session's acknowledged refs lost
//!   while it never reached the cap);
//! - no half-stored observation: every listed offloaded observation is one that was sent, its
//!   chunks add up to its size and hash to its sha256, and `scratchpad_read` returns it whole;
//!   every acknowledged offload is listed.
//!
//! A write is acknowledged when its JSON-RPC response arrives with success. Requests in flight
//! on a killed node are unacknowledged: they may or may not have been committed, and both are
//! accepted. Any other failure (an error response that is not a budget rejection, a node that
//! exits on its own or fails to start, a response that never comes) fails the test.
//!
//! The kill moments, the killed nodes and every client's calls come from one seeded xorshift
//! generator; the seed is printed and `SCRATCHPAD_FLEET_SEED=<n>` replays a schedule (the
//! timing of the processes still varies).
//!
//! Needs the `scratchpad` binary (`cargo build -p scratchpad-cli`, which `cargo test
//! --workspace` does).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use scratchpad_tests::scratchpad_binary;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Host processes appending at once.
const NODES: usize = 4;
/// Client threads per node, each with one request in flight at a time on its node's stdin.
const CLIENTS_PER_NODE: usize = 6;
/// Sessions created up front; every client writes to all of them.
const SESSIONS: usize = 200;
/// A quarter of the appends go to the first this-many sessions, so their notes reach the
/// budget; the others go to any session.
const HOT_SESSIONS: usize = 10;
/// Most refs go to the first this-many sessions, so they pass the refs cap; the others go to
/// any session.
const REF_SESSIONS: usize = 2;
/// The scratchpad's notes budget in chars (`notesMaxChars`): hot sessions reach it (a token
/// and its newline take 9).
const NOTES_MAX: usize = 240;
/// The scratchpad's refs capacity (`refsMaxItems`, its default).
const REFS_MAX: usize = 50;
/// SIGKILLs during the run (at least 10 are required).
const KILLS: usize = 12;
/// Size of an offloaded observation.
const OBSERVATION_BYTES: usize = 200 * 1024;
/// Offloads per client at most (each sends ~200 KB through the node's stdin).
const OFFLOADS_PER_CLIENT: usize = 2;
/// Calls per client at most, bounding the run on a fast machine.
const MAX_CALLS_PER_CLIENT: usize = 900;
/// How long a request may wait for its response before the test fails.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a client may wait for its node to come back before the test fails.
const RESTART_TIMEOUT: Duration = Duration::from_secs(120);
/// The seed when `SCRATCHPAD_FLEET_SEED` is not set.
const DEFAULT_SEED: u64 = 0x5eed_f1ee_7015;

/// xorshift64*, seeded through splitmix64.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `low..high` milliseconds.
    fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(low + self.next() % (high - low))
    }
}

/// The host config every node reads: the embedded default plugins, the scratchpad with the
/// test's notes budget, a 5 s call deadline (wall-clock time on a loaded 2-core machine), and
/// the test run's shared cache of compiled components.
fn write_config(dir: &Path) -> PathBuf {
    let cache = scratchpad_tests::shared_cache();
    let text = format!(
        "cache_dir = {cache}\n\
         [limits]\n\
         call_timeout_ms = 5000\n\
         [[plugin]]\n\
         name = \"scratchpad\"\n\
         [plugin.config]\n\
         notesMaxChars = {NOTES_MAX}\n\
         refsMaxItems = {REFS_MAX}\n\
         [[plugin]]\n\
         name = \"observations\"\n",
        cache = json!(cache.to_str().expect("a UTF-8 cache path")),
    );
    let path = dir.join("fleet.toml");
    std::fs::write(&path, text).expect("writing the config");
    path
}

/// Requests waiting for their response, by id; `None` once the process's stdout closed (a
/// request added then could never be answered).
type Pending = Arc<Mutex<Option<HashMap<u64, Sender<Value>>>>>;

/// What became of a request.
enum Reply {
    /// The response arrived.
    Answer(Value),
    /// The node was killed (or died) before answering: unacknowledged.
    Lost,
}

/// One running `scratchpad serve` process.
struct Running {
    child: Child,
    stdin: ChildStdin,
    pending: Pending,
    /// Set before the test kills or closes the process: its end is then expected.
    expected_end: Arc<AtomicBool>,
    reader: JoinHandle<()>,
    log: PathBuf,
}

struct NodeState {
    running: Option<Running>,
    /// Processes started so far.
    generation: u64,
}

/// A node: one `scratchpad serve` process at a time, restarted after each kill.
struct Node {
    name: String,
    binary: PathBuf,
    url: String,
    config: PathBuf,
    logs: PathBuf,
    state: Mutex<NodeState>,
    restarted: Condvar,
    /// Unexpected events anywhere in the run (shared by every node).
    failures: Arc<Mutex<Vec<String>>>,
}

/// Request ids, unique across every node.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Node {
    fn new(
        name: &str,
        binary: &Path,
        url: &str,
        config: &Path,
        logs: &Path,
        failures: &Arc<Mutex<Vec<String>>>,
    ) -> Node {
        let node = Node {
            name: name.to_owned(),
            binary: binary.to_owned(),
            url: url.to_owned(),
            config: config.to_owned(),
            logs: logs.to_owned(),
            state: Mutex::new(NodeState { running: None, generation: 0 }),
            restarted: Condvar::new(),
            failures: failures.clone(),
        };
        node.start();
        node
    }

    /// Starts a new process (the node must be down).
    fn start(&self) {
        let mut state = self.state.lock().unwrap();
        assert!(state.running.is_none(), "{} is already running", self.name);
        state.generation += 1;
        let log = self.logs.join(format!("{}-{}.log", self.name, state.generation));
        let mut child = Command::new(&self.binary)
            .arg("--db")
            .arg(&self.url)
            .arg("--config")
            .arg(&self.config)
            .arg("serve")
            .env_remove("SCRATCHPAD_DATABASE_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&log).expect("creating a node's log"))
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", self.binary.display()));
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let expected_end = Arc::new(AtomicBool::new(false));
        let stdout = child.stdout.take().expect("stdout is piped");
        let reader = {
            let (pending, expected_end, failures) = (pending.clone(), expected_end.clone(), self.failures.clone());
            let (who, log) = (format!("{} (pid {})", self.name, child.id()), log.clone());
            thread::spawn(move || read_responses(stdout, &who, &log, &pending, &expected_end, &failures))
        };
        let stdin = child.stdin.take().expect("stdin is piped");
        state.running = Some(Running { child, stdin, pending, expected_end, reader, log });
        self.restarted.notify_all();
    }

    /// SIGKILLs the running process (by its PID) and reaps it: its unanswered requests are
    /// lost. Returns the PID.
    fn kill(&self) -> u32 {
        let mut state = self.state.lock().unwrap();
        let mut running = state.running.take().unwrap_or_else(|| panic!("{} is not running", self.name));
        let pid = running.child.id();
        running.expected_end.store(true, Ordering::SeqCst);
        running.child.kill().unwrap_or_else(|e| panic!("SIGKILL to {} (pid {pid}): {e}", self.name));
        running.child.wait().unwrap_or_else(|e| panic!("reaping {} (pid {pid}): {e}", self.name));
        drop(running.stdin);
        running.reader.join().expect("a node's reader thread");
        pid
    }

    /// Closes the running process's stdin and waits for it to answer what it started and exit;
    /// panics unless it exits with status 0.
    fn shut_down(&self) {
        let mut state = self.state.lock().unwrap();
        let Running { mut child, stdin, expected_end, reader, log, .. } =
            state.running.take().unwrap_or_else(|| panic!("{} is not running", self.name));
        expected_end.store(true, Ordering::SeqCst);
        drop(stdin);
        let status = child.wait().expect("waiting for a node");
        reader.join().expect("a node's reader thread");
        assert!(status.success(), "{} exited with {status} when its stdin closed:\n{}", self.name, read_log(&log));
    }

    /// Sends one request and waits for its fate. Waits for the node to be restarted when it is
    /// down.
    fn call(&self, method: &str, params: Value) -> Reply {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let mut line = serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .expect("requests serialize");
        line.push(b'\n');
        let (tx, rx) = mpsc::channel();
        {
            let waited = Instant::now();
            let mut state = self.state.lock().unwrap();
            while state.running.is_none() {
                let (next, _) = self.restarted.wait_timeout(state, Duration::from_secs(1)).unwrap();
                state = next;
                assert!(waited.elapsed() < RESTART_TIMEOUT, "{} was not restarted in {RESTART_TIMEOUT:?}", self.name);
            }
            let running = state.running.as_mut().expect("running");
            match running.pending.lock().unwrap().as_mut() {
                Some(pending) => pending.insert(id, tx),
                None => return Reply::Lost, // its stdout closed: it died
            };
            if running.stdin.write_all(&line).and_then(|()| running.stdin.flush()).is_err() {
                running.pending.lock().unwrap().as_mut().map(|pending| pending.remove(&id));
                return Reply::Lost;
            }
        }
        match rx.recv_timeout(RESPONSE_TIMEOUT) {
            Ok(response) => Reply::Answer(response),
            Err(RecvTimeoutError::Disconnected) => Reply::Lost,
            Err(RecvTimeoutError::Timeout) => {
                panic!("{} did not answer `{method}` (request {id}) within {RESPONSE_TIMEOUT:?}", self.name)
            }
        }
    }

    /// `call` for the verification: the result, or a panic naming the error.
    fn result(&self, method: &str, params: Value) -> Value {
        match self.call(method, params.clone()) {
            Reply::Answer(response) => match response.get("result") {
                Some(result) => result.clone(),
                None => panic!("{} answered `{method}` {params} with an error: {response}", self.name),
            },
            Reply::Lost => panic!("{} died during `{method}`", self.name),
        }
    }
}

/// A node's stdout: each response goes to the request waiting for it. At end of file the
/// requests still waiting are lost, and an end the test did not cause is a failure.
fn read_responses(
    stdout: std::process::ChildStdout,
    who: &str,
    log: &Path,
    pending: &Pending,
    expected_end: &AtomicBool,
    failures: &Mutex<Vec<String>>,
) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let response: Value = match serde_json::from_str(&line) {
            Ok(value) => value,
            Err(e) => {
                failures.lock().unwrap().push(format!("{who} wrote a line that is not JSON ({e}): {line:.300}"));
                continue;
            }
        };
        let waiting = response["id"].as_u64().and_then(|id| pending.lock().unwrap().as_mut()?.remove(&id));
        match waiting {
            Some(tx) => {
                let _ = tx.send(response);
            }
            None => failures.lock().unwrap().push(format!("{who} sent a response nobody asked for: {line:.300}")),
        }
    }
    // Dropping the senders tells their requests they are lost.
    let lost = pending.lock().unwrap().take().map_or(0, |pending| pending.len());
    if !expected_end.load(Ordering::SeqCst) {
        failures
            .lock()
            .unwrap()
            .push(format!("{who} exited on its own ({lost} request(s) unanswered); its stderr:\n{}", read_log(log)));
    }
}

fn read_log(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| format!("(unreadable: {e})"));
    let start = text.len().saturating_sub(4000);
    text[text.floor_char_boundary(start)..].to_owned()
}

fn session_id(index: usize) -> String {
    format!("s{index:03}")
}

/// The ~200 KB text observation offloaded under `token`.
fn observation(token: &str) -> String {
    let mut text = String::with_capacity(OBSERVATION_BYTES + 100);
    let mut line = 0;
    while text.len() < OBSERVATION_BYTES {
        line += 1;
        text.push_str(&format!("{token} line {line:05}: INFO the quick brown fox jumps over the lazy dog\n"));
    }
    text
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What a client asked for.
#[derive(Debug, Clone)]
enum Call {
    Append { session: usize, token: String },
    AddRef { session: usize, token: String },
    Offload { session: usize, token: String },
}

/// What became of it.
#[derive(Debug, Clone)]
enum Outcome {
    /// Acknowledged; for appends and refs the `Usage:` line's notes chars and refs count.
    Acked { notes: usize, refs: usize, scratchpad_id: Option<String> },
    /// `append_notes` rejected for the budget, with the notes length it said it saw.
    Rejected { current: usize },
    /// In flight when its node was killed.
    Lost,
    /// Anything else: a failure of the test.
    Failed(String),
}

/// The numbers after `label` in a `Usage:` line, e.g. `notes 812/4000 chars` → 812.
fn usage_count(content: &str, label: &str) -> Option<usize> {
    let usage = content.rsplit_once("\nUsage: ")?.1;
    let after = usage.split(&format!("{label} ")).nth(1)?;
    after.split('/').next()?.parse().ok()
}

/// One client: calls on its node until `stop`, one at a time.
fn client(node: &Node, tag: &str, seed: u64, stop: &AtomicBool) -> Vec<(Call, Outcome)> {
    let mut rng = Rng::new(seed);
    let mut log = Vec::new();
    let mut offloads = 0;
    for i in 0..MAX_CALLS_PER_CLIENT {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let token = format!("{tag}o{i:03}");
        let roll = rng.below(100);
        let call = if roll < 3 && offloads < OFFLOADS_PER_CLIENT {
            offloads += 1;
            Call::Offload { session: rng.below(SESSIONS), token }
        } else if roll < 15 {
            let session = if rng.below(10) < 7 { rng.below(REF_SESSIONS) } else { rng.below(SESSIONS) };
            Call::AddRef { session, token: format!("r-{token}") }
        } else {
            let session = if rng.below(4) == 0 { rng.below(HOT_SESSIONS) } else { rng.below(SESSIONS) };
            Call::Append { session, token }
        };
        let outcome = perform(node, &call);
        log.push((call, outcome));
    }
    log
}

/// Sends `call` to `node`, each in a turn of its own (the token is the turn's id).
fn perform(node: &Node, call: &Call) -> Outcome {
    let (method, params) = match call {
        Call::Append { session, token } => (
            "tools.call",
            json!({ "turn": { "session_id": session_id(*session), "turn_id": token }, "name": "session.scratchpad",
                    "arguments": { "action": "append_notes", "content": token } }),
        ),
        Call::AddRef { session, token } => (
            "tools.call",
            json!({ "turn": { "session_id": session_id(*session), "turn_id": token }, "name": "session.scratchpad",
                    "arguments": { "action": "refs.add", "ref": token } }),
        ),
        Call::Offload { session, token } => (
            "after_tool_result",
            json!({ "turn": { "session_id": session_id(*session), "turn_id": token },
                    "call": { "name": "fleet_fetch", "arguments": "{}", "step": 1 },
                    "text": observation(token), "metadata": { "token": token } }),
        ),
    };
    let response = match node.call(method, params) {
        Reply::Lost => return Outcome::Lost,
        Reply::Answer(response) => response,
    };
    if let Some(result) = response.get("result") {
        return match call {
            Call::Offload { .. } => {
                let replacement: Option<Value> =
                    result["replacement"].as_str().and_then(|text| serde_json::from_str(text).ok());
                match replacement.as_ref().and_then(|r| r["scratchpad_id"].as_str()) {
                    Some(id) if result["replaced_by"] == "observations" => {
                        Outcome::Acked { notes: 0, refs: 0, scratchpad_id: Some(id.to_owned()) }
                    }
                    _ => Outcome::Failed(format!("the offload was not stored: {result}")),
                }
            }
            _ => {
                let content = result["content"].as_str().unwrap_or_default();
                match (usage_count(content, "notes"), usage_count(content, "refs")) {
                    (Some(notes), Some(refs)) => Outcome::Acked { notes, refs, scratchpad_id: None },
                    _ => Outcome::Failed(format!("no usage line in {result}")),
                }
            }
        };
    }
    let error = &response["error"];
    let message = error["data"]["message"].as_str().unwrap_or_default();
    if let Call::Append { .. } = call
        && error["code"] == -32001
        && error["data"]["kind"] == "rejected"
        && message.starts_with("append_notes rejected, notes unchanged")
    {
        let current = message.split("(current: ").nth(1).and_then(|rest| rest.split(',').next());
        if let Some(current) = current.and_then(|n| n.parse().ok()) {
            return Outcome::Rejected { current };
        }
    }
    Outcome::Failed(format!("{response}"))
}

/// Every client's calls in order, with their outcomes, by client tag (`n<node>c<client>`).
type Logs = BTreeMap<String, Vec<(Call, Outcome)>>;

/// Starts the clients and the killer; returns the clients' logs, the kills (node, moment,
/// PID), and the run's duration.
fn run_workload(nodes: &[Arc<Node>], seed: u64) -> (Logs, Vec<String>, Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut clients = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        for c in 0..CLIENTS_PER_NODE {
            let (node, stop, tag) = (node.clone(), stop.clone(), format!("n{n}c{c}"));
            let client_seed = seed ^ ((n * CLIENTS_PER_NODE + c + 1) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            clients.push(thread::spawn(move || {
                let log = client(&node, &tag, client_seed, &stop);
                (tag, log)
            }));
        }
    }
    let killer = {
        let (nodes, stop) = (nodes.to_vec(), stop.clone());
        thread::spawn(move || {
            let mut rng = Rng::new(seed ^ 0x6b69_6c6c);
            let mut kills = Vec::new();
            for _ in 0..KILLS {
                thread::sleep(rng.millis(300, 1500));
                let n = rng.below(NODES);
                let pid = nodes[n].kill();
                kills.push(format!("{}@{:.1}s:pid{pid}", nodes[n].name, started.elapsed().as_secs_f64()));
                thread::sleep(rng.millis(0, 400));
                nodes[n].start();
            }
            // The restarted nodes serve a while before the clients stop.
            thread::sleep(Duration::from_millis(1500));
            stop.store(true, Ordering::SeqCst);
            kills
        })
    };
    let kills = killer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let mut logs = BTreeMap::new();
    for client in clients {
        let (tag, log) = client.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        logs.insert(tag, log);
    }
    (logs, kills, started.elapsed())
}

/// Collects violations; fails with all of them at once.
#[derive(Default)]
struct Violations(Vec<String>);

impl Violations {
    fn check(&mut self, ok: bool, message: impl FnOnce() -> String) {
        if !ok {
            self.0.push(message());
        }
    }

    fn assert_none(&self, what: &str) {
        let shown: Vec<&str> = self.0.iter().take(30).map(String::as_str).collect();
        assert!(
            self.0.is_empty(),
            "{what}: {} violation(s), the first {}:\n{}",
            self.0.len(),
            shown.len(),
            shown.join("\n")
        );
    }
}

/// What was sent to one session, and what became of it, by token.
#[derive(Default)]
struct Expected {
    appends: HashMap<String, Outcome>,
    refs: HashMap<String, Outcome>,
    offloads: HashMap<String, Outcome>,
}

/// Every session's [`Expected`], by session index.
fn expectations(logs: &Logs) -> Vec<Expected> {
    let mut expected: Vec<Expected> = (0..SESSIONS).map(|_| Expected::default()).collect();
    for (call, outcome) in logs.values().flatten() {
        let (map, token) = match call {
            Call::Append { session, token } => (&mut expected[*session].appends, token),
            Call::AddRef { session, token } => (&mut expected[*session].refs, token),
            Call::Offload { session, token } => (&mut expected[*session].offloads, token),
        };
        map.insert(token.clone(), outcome.clone());
    }
    expected
}

/// Counts of what the stored state shows, for the report.
#[derive(Default)]
struct Tally {
    /// Sessions whose refs are at the cap.
    refs_capped: usize,
    /// Sessions whose notes have no room for another token.
    notes_full: usize,
    /// Unacknowledged appends (in flight at a kill) that were committed.
    lost_but_stored: usize,
}

/// The `value` of the scratchpad's `key` in a `session.show` result.
fn stored_value(show: &Value, key: &str) -> Option<String> {
    let state = show["state"].as_array().expect("`state` is an array");
    let entry = state.iter().find(|e| e["plugin"] == "scratchpad" && e["key"] == key)?;
    Some(entry["value"].as_str().expect("a text value").to_owned())
}

/// The client tag and call number of a token (`n1c2o034` → (`n1c2`, 34)).
fn client_and_number(token: &str) -> (&str, usize) {
    let (client, number) = token.split_once('o').expect("a token is <client>o<number>");
    (client, number.parse().expect("a token's number"))
}

/// The notes of session `sid` against what was sent to it: tokens sent here, each once, every
/// acknowledged one at the length it reported, no rejected one, within the budget.
fn check_notes(sid: &str, notes: &str, exp: &Expected, v: &mut Violations, tally: &mut Tally) {
    let chars_stored = notes.chars().count();
    v.check(chars_stored <= NOTES_MAX, || format!("{sid}: the notes have {chars_stored} chars, over {NOTES_MAX}"));
    if chars_stored + 9 > NOTES_MAX {
        tally.notes_full += 1;
    }
    let lines: Vec<&str> = if notes.is_empty() { Vec::new() } else { notes.split('\n').collect() };
    // token → chars of the notes up to and including it; every length a prefix of lines has.
    let mut through: HashMap<&str, usize> = HashMap::new();
    let mut prefixes = BTreeSet::from([0]);
    let mut chars = 0;
    for line in &lines {
        chars += line.chars().count() + usize::from(chars > 0);
        prefixes.insert(chars);
        v.check(through.insert(line, chars).is_none(), || format!("{sid}: `{line}` is stored twice in the notes"));
        match exp.appends.get(*line) {
            None => v.check(false, || format!("{sid}: the notes hold `{line}`, which was never sent to {sid}")),
            Some(Outcome::Rejected { .. }) => {
                v.check(false, || format!("{sid}: the rejected append `{line}` is stored"))
            }
            Some(Outcome::Lost) => tally.lost_but_stored += 1,
            Some(_) => {}
        }
    }
    let mut acked_at = Vec::new();
    for (token, outcome) in &exp.appends {
        match outcome {
            Outcome::Acked { notes: reported, .. } => match through.get(token.as_str()) {
                None => v.check(false, || format!("{sid}: the acknowledged append `{token}` is lost")),
                Some(at) => {
                    v.check(at == reported, || {
                        format!(
                            "{sid}: `{token}` was acknowledged with the notes at {reported} chars, but the stored \
                             notes are {at} chars up to it: not a serial replay"
                        )
                    });
                    acked_at.push((client_and_number(token), *at));
                }
            },
            Outcome::Rejected { current } => {
                v.check(prefixes.contains(current), || {
                    format!(
                        "{sid}: `{token}` was rejected with the notes at {current} chars, which no stored prefix has"
                    )
                });
                v.check(current + usize::from(*current > 0) + token.chars().count() > NOTES_MAX, || {
                    format!("{sid}: `{token}` was rejected with the notes at {current} chars, but it fits {NOTES_MAX}")
                });
            }
            _ => {}
        }
    }
    // A client sends its next call after the previous one's answer: its acknowledged appends
    // are stored in its order.
    acked_at.sort();
    for pair in acked_at.windows(2) {
        let (((a, i), at_i), ((b, j), at_j)) = (pair[0], pair[1]);
        v.check(a != b || at_i < at_j, || {
            format!("{sid}: {a}'s acknowledged call {i} is stored after its later call {j}")
        });
    }
}

/// The refs of session `sid`: at most the cap, each sent here, once; none of the acknowledged
/// ones lost while fewer than the cap were ever sent.
fn check_refs(sid: &str, refs: &[String], exp: &Expected, v: &mut Violations, tally: &mut Tally) {
    v.check(refs.len() <= REFS_MAX, || format!("{sid}: {} refs, over the cap of {REFS_MAX}", refs.len()));
    let distinct: HashSet<&String> = refs.iter().collect();
    v.check(distinct.len() == refs.len(), || format!("{sid}: a ref is stored twice: {refs:?}"));
    for r in refs {
        v.check(exp.refs.contains_key(r), || format!("{sid}: the ref `{r}` was never sent to {sid}"));
    }
    let acked: Vec<&String> =
        exp.refs.iter().filter(|(_, o)| matches!(o, Outcome::Acked { .. })).map(|(t, _)| t).collect();
    if exp.refs.len() <= REFS_MAX {
        for r in &acked {
            v.check(distinct.contains(r), || {
                format!("{sid}: the acknowledged ref `{r}` is lost (only {} refs were ever sent)", exp.refs.len())
            });
        }
    }
    v.check(refs.len() >= acked.len().min(REFS_MAX), || {
        format!("{sid}: {} refs stored, but {} were acknowledged", refs.len(), acked.len())
    });
    if refs.len() == REFS_MAX {
        tally.refs_capped += 1;
    }
}

/// The observations `session.show` lists for `sid`: each one sent here, with the size and hash
/// of what was sent; every acknowledged offload listed under its id. Returns (id, turn) of each.
fn check_listed_observations(sid: &str, show: &Value, exp: &Expected, v: &mut Violations) -> Vec<(String, String)> {
    let mut listed = Vec::new();
    for entry in show["observations"].as_array().expect("`observations` is an array") {
        let (id, turn) = (entry["id"].as_str().expect("an id"), entry["turn_id"].as_str().expect("a turn"));
        match exp.offloads.get(turn) {
            None => v.check(false, || format!("{sid}: observation {id} of turn `{turn}` was never sent to {sid}")),
            Some(outcome) => {
                let text = observation(turn);
                v.check(entry["size_bytes"] == text.len() && entry["sha256"] == sha256_hex(text.as_bytes()), || {
                    format!("{sid}: observation {id} of `{turn}` is listed with another size or hash: {entry}")
                });
                if let Outcome::Acked { scratchpad_id: Some(acked_id), .. } = outcome {
                    v.check(acked_id == id, || {
                        format!("{sid}: `{turn}` was acknowledged as {acked_id}, stored as {id}")
                    });
                }
            }
        }
        listed.push((id.to_owned(), turn.to_owned()));
    }
    for (token, outcome) in &exp.offloads {
        if let Outcome::Acked { scratchpad_id: Some(id), .. } = outcome {
            v.check(listed.iter().any(|(listed_id, _)| listed_id == id), || {
                format!("{sid}: the acknowledged offload `{token}` ({id}) is not listed")
            });
        }
    }
    listed
}

/// Every observation row in the database, with what its chunks hold: whole, or a violation.
fn check_stored_chunks(database: &str, listed: usize, v: &mut Violations) {
    let rows = scratchpad_tests::postgres::server().psql(
        database,
        "SELECT o.id, o.size_bytes, o.sha256, COALESCE(SUM(length(c.data)), 0), COUNT(c.seq),
                COALESCE(MAX(c.seq) + 1, 0),
                encode(sha256(COALESCE(string_agg(c.data, ''::bytea ORDER BY c.seq), ''::bytea)), 'hex')
           FROM observations o LEFT JOIN observation_chunks c ON c.id = o.id
          GROUP BY o.id, o.size_bytes, o.sha256 ORDER BY o.id",
    );
    let rows: Vec<Vec<&str>> = rows.lines().map(|row| row.split('|').collect()).collect();
    v.check(rows.len() == listed, || {
        format!("the database holds {} observations, the sessions list {listed}", rows.len())
    });
    for row in &rows {
        let [id, size, sha, chunk_bytes, chunks, seq_end, chunk_sha] = row[..] else {
            panic!("a row of 7 columns: {row:?}")
        };
        v.check(size == chunk_bytes && sha == chunk_sha && chunks == seq_end, || {
            format!(
                "observation {id} is half-stored: size {size}, its chunks hold {chunk_bytes} bytes in {chunks} \
                 chunks (seq up to {seq_end}), sha256 {sha} but the chunks hash to {chunk_sha}"
            )
        });
    }
}

#[test]
fn four_nodes_on_one_postgres_killed_at_random_keep_every_acknowledged_write() {
    let seed = std::env::var("SCRATCHPAD_FLEET_SEED").ok().map_or(DEFAULT_SEED, |s| {
        s.parse().unwrap_or_else(|e| panic!("SCRATCHPAD_FLEET_SEED={s:?} is not a u64: {e}"))
    });
    eprintln!("fleet: seed {seed} (replay with SCRATCHPAD_FLEET_SEED={seed})");
    let binary = scratchpad_binary();
    let pg = scratchpad_tests::postgres::server();
    let url = pg.fresh_database();
    let database = url.rsplit('/').next().expect("a database name").to_owned();
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = write_config(dir.path());
    let failures = Arc::new(Mutex::new(Vec::new()));
    let began = Instant::now();

    // Four nodes start at the same moment on the empty database (the schema is created once).
    let nodes: Vec<Arc<Node>> = (0..NODES)
        .map(|n| Arc::new(Node::new(&format!("node{n}"), &binary, &url, &config, dir.path(), &failures)))
        .collect();
    let creates: Vec<_> = (0..SESSIONS)
        .map(|s| {
            let node = nodes[0].clone();
            thread::spawn(move || node.result("session.create", json!({ "session": session_id(s) })))
        })
        .collect();
    creates.into_iter().for_each(|create| drop(create.join().unwrap_or_else(|p| std::panic::resume_unwind(p))));
    // Every node is up before the clock of the kills starts.
    for node in &nodes {
        node.result("plugins", json!({}));
    }
    eprintln!("fleet: {NODES} nodes up, {SESSIONS} sessions created in {:.1?}", began.elapsed());

    let (logs, kills, workload) = run_workload(&nodes, seed);
    for node in &nodes {
        node.shut_down();
    }
    let outcomes = || logs.values().flatten();
    let count = |f: fn(&(Call, Outcome)) -> bool| outcomes().filter(|c| f(c)).count();
    let sent = outcomes().count();
    let acked = count(|(_, o)| matches!(o, Outcome::Acked { .. }));
    let rejected = count(|(_, o)| matches!(o, Outcome::Rejected { .. }));
    let lost = count(|(_, o)| matches!(o, Outcome::Lost));
    let offloads_acked = count(|c| matches!(c, (Call::Offload { .. }, Outcome::Acked { .. })));
    let refs_acked = count(|c| matches!(c, (Call::AddRef { .. }, Outcome::Acked { .. })));
    eprintln!(
        "fleet: {} kills ({}); {sent} calls in {workload:.1?} ({:.0}/s): {acked} acknowledged ({refs_acked} refs.add, \
         {offloads_acked} offloads), {rejected} appends rejected for the budget, {lost} lost in kills",
        kills.len(),
        kills.join(" "),
        sent as f64 / workload.as_secs_f64(),
    );
    let misbehaved = std::mem::take(&mut *failures.lock().unwrap());
    assert!(misbehaved.is_empty(), "the nodes misbehaved:\n{}", misbehaved.join("\n"));
    let failed: Vec<String> = logs
        .iter()
        .flat_map(|(tag, log)| log.iter().map(move |(call, outcome)| (tag, call, outcome)))
        .filter_map(|(tag, call, outcome)| match outcome {
            Outcome::Failed(why) => Some(format!("{tag} {call:?}: {why}")),
            _ => None,
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} call(s) failed:\n{}",
        failed.len(),
        failed.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );

    let mut violations = Violations::default();
    for (tag, log) in &logs {
        for (call, outcome) in log {
            if let Outcome::Acked { notes, refs, .. } = outcome {
                violations.check(*notes <= NOTES_MAX && *refs <= REFS_MAX, || {
                    format!("{tag} {call:?} was answered with notes {notes}, refs {refs}: over the budget")
                });
            }
        }
    }

    // Read everything back through a fresh node.
    let verifier = Node::new("verifier", &binary, &url, &config, dir.path(), &failures);
    let expected = expectations(&logs);
    let mut tally = Tally::default();
    let mut listed = Vec::new();
    for (s, exp) in expected.iter().enumerate() {
        let sid = session_id(s);
        let show = verifier.result("session.show", json!({ "session": sid }));
        check_notes(&sid, &stored_value(&show, "notes").unwrap_or_default(), exp, &mut violations, &mut tally);
        let refs: Vec<String> = stored_value(&show, "refs")
            .map(|text| serde_json::from_str(&text).expect("refs are a JSON array"))
            .unwrap_or_default();
        check_refs(&sid, &refs, exp, &mut violations, &mut tally);
        let observations = check_listed_observations(&sid, &show, exp, &mut violations);
        listed.extend(observations.into_iter().map(|(id, turn)| (sid.clone(), id, turn)));
    }
    violations.assert_none("the stored notes, refs and observations");

    // No half-stored observation: straight from the database, and through `scratchpad_read` in
    // the observation's turn.
    check_stored_chunks(&database, listed.len(), &mut violations);
    for (sid, id, turn) in &listed {
        let read = verifier.result(
            "tools.call",
            json!({ "turn": { "session_id": sid, "turn_id": turn }, "name": "scratchpad_read",
                    "arguments": { "scratchpad_id": id, "mode": "full" } }),
        );
        let output: Value = serde_json::from_str(read["content"].as_str().expect("content")).expect("a JSON result");
        violations.check(output["content"].as_str() == Some(observation(turn).as_str()), || {
            format!("{sid}: scratchpad_read of {id} did not return the observation whole: {:.300}", output.to_string())
        });
    }
    violations.assert_none("the stored observations");
    assert_eq!(pg.psql(&database, "SELECT count(*) FROM sessions"), SESSIONS.to_string(), "sessions in the database");
    verifier.shut_down();
    let misbehaved = std::mem::take(&mut *failures.lock().unwrap());
    assert!(misbehaved.is_empty(), "the verifying node misbehaved:\n{}", misbehaved.join("\n"));

    eprintln!(
        "fleet: verified; {} of the lost appends were committed; {} observations stored; {} sessions at the refs \
         cap, {} with full notes; total {:.1?}",
        tally.lost_but_stored,
        listed.len(),
        tally.refs_capped,
        tally.notes_full,
        began.elapsed()
    );
    assert_eq!(kills.len(), KILLS);
    assert!(rejected > 0, "no append was rejected: the budget was never reached, so it was not tested");
    assert!(tally.refs_capped > 0, "no session reached the refs cap, so it was not tested");
    assert!(offloads_acked > 0, "no offload was acknowledged");
}
