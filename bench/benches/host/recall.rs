//! Recall over a large project: 10,000 earlier sessions, each of which left a plan and 20 notes
//! (210,000 documents in the scratchpad's index of one project), on SQLite and on PostgreSQL.
//!
//! Rows: a search of the index (`Host::recall_search`, the backend's full-text query and the
//! snippets), the model's `recall_search` tool through the component, and a new session's
//! first-turn injection (`Host::preview_new_session`: every plugin's `before-query` of a new
//! session of the project — the recall block's searches and its assembly — without the session
//! row's creation). Beside them, a turn that does not search (`before_query` in a later turn of
//! a session of the project), to compare with the same row of a session with no project; and,
//! written to `recall/size/figures.json`, the index's bytes on disk against the text it holds.
//!
//! The documents are loaded with `Host::recall_import` (the operator's import: the same rows a
//! plugin's writes make, scrubbed the same way), in one transaction, so the setup takes seconds
//! instead of 210,000 tool calls. The import runs in a child process (this benchmark binary
//! re-executed with [`IMPORT`] set), as the earlier sessions' hosts were other processes: the
//! host measured opens a project it did not write, and its heap is not one that just held and
//! freed 210,000 documents (which made every `malloc` of the searches dearer).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use criterion::Criterion;
use scratchpad_host::{Host, HostConfig, IndexFilter, IndexedDocument, Limits, Location, Origin, TurnContext};

use crate::record;

/// Earlier sessions in the project.
const SESSIONS: usize = 10_000;
/// Notes each left.
const NOTES: usize = 20;
const PROJECT: &str = "/bench/project";

/// Set in the child that imports the project's documents: the database's location.
const IMPORT: &str = "SCRATCHPAD_BENCH_RECALL_IMPORT";
/// The child's compiled-component cache.
const IMPORT_CACHE: &str = "SCRATCHPAD_BENCH_RECALL_CACHE";

/// Distinct words the notes are drawn from, by a Zipf law (the `n`th most common word comes
/// `1/n` as often as the first), as words come in text: a few very common, most rare.
const VOCABULARY: usize = 5_000;

/// A small deterministic generator (xorshift) of Zipf-distributed words, so every run indexes
/// the same text.
struct Words {
    state: u64,
    /// Cumulative weights of the vocabulary's ranks.
    cumulative: Vec<f64>,
}

impl Words {
    fn new(seed: u64) -> Words {
        let mut total = 0.0;
        let cumulative = (1..=VOCABULARY)
            .map(|rank| {
                total += 1.0 / rank as f64;
                total
            })
            .collect();
        Words { state: seed, cumulative }
    }

    fn random(&mut self) -> f64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        (self.state >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The word of rank `rank` (0: the most common).
    fn word(rank: usize) -> String {
        format!("w{rank}")
    }

    fn next(&mut self) -> String {
        let total = *self.cumulative.last().unwrap();
        let target = self.random() * total;
        Words::word(self.cumulative.partition_point(|&c| c < target))
    }

    fn sentence(&mut self, words: usize) -> String {
        (0..words).map(|_| self.next()).collect::<Vec<_>>().join(" ")
    }
}

/// The project's documents, as the scratchpad component keeps them.
fn documents() -> Vec<IndexedDocument> {
    let mut words = Words::new(0x9E37_79B9_7F4A_7C15);
    let mut documents = Vec::with_capacity(SESSIONS * (NOTES + 1));
    for s in 0..SESSIONS {
        let session = format!("earlier-{s:05}");
        let at = 1_700_000_000_000 + (s as i64) * 60_000;
        let plan = format!("1. {}\n2. {}\n3. {}", words.sentence(6), words.sentence(6), words.sentence(6));
        documents.push(document(&session, &format!("plan:{s}"), "plan", "Plan", &plan, at));
        for n in 0..NOTES {
            let note = format!("note {n} of {session}: {}", words.sentence(12));
            documents.push(document(&session, &format!("note:{s}:{n}"), "note", "Note", &note, at + n as i64));
        }
    }
    documents
}

fn document(session: &str, id: &str, kind: &str, title: &str, text: &str, at_ms: i64) -> IndexedDocument {
    let line = serde_json::json!({
        "project": PROJECT, "plugin": "scratchpad", "id": id, "kind": kind, "title": title, "text": text,
        "at_ms": at_ms, "session": session,
    });
    serde_json::from_value(line).expect("a document")
}

pub fn recall(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    rows(c, "recall", &dir, dir.path().join("recall.db").to_str().expect("a UTF-8 temp dir"));
    rows(c, "recall_postgres", &dir, &crate::fleet::database());
}

/// What the importing child reports: the documents' text bytes (ids, kinds, titles, texts) and
/// the typical query.
#[derive(serde::Serialize, serde::Deserialize)]
struct Imported {
    text_bytes: usize,
    typical: String,
}

/// The child side of [`import`]: when [`IMPORT`] is set, imports the project's documents into
/// that database, prints what it imported as one JSON line, and returns true (the process has
/// done its work).
pub fn child() -> bool {
    let Some(database) = std::env::var_os(IMPORT) else { return false };
    let database = Location::parse(database.to_str().expect("a UTF-8 location"));
    let cache = std::env::var_os(IMPORT_CACHE).expect("the child's cache dir");
    let rt = crate::runtime();
    let mut config = HostConfig { database, cache_dir: Some(cache.into()), ..HostConfig::default() };
    unlimited(&mut config);
    let host = rt.block_on(Host::open(config)).expect("opening the importing host");
    let documents = documents();
    let typical = rarest_words(&documents[5_000 * (NOTES + 1) + 8].text, 4);
    let text_bytes = documents.iter().map(|d| d.id.len() + d.kind.len() + d.title.len() + d.text.len()).sum();
    let started = std::time::Instant::now();
    rt.block_on(host.recall_import(documents)).expect("importing the project");
    eprintln!("imported {} documents in {:.1?}", SESSIONS * (NOTES + 1), started.elapsed());
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{}", serde_json::to_string(&Imported { text_bytes, typical }).unwrap()).unwrap();
    stdout.flush().unwrap();
    true
}

/// Imports the project's documents into `database` in a child process.
fn import(database: &str, cache: &std::path::Path) -> Imported {
    let exe = std::env::current_exe().expect("this benchmark's executable");
    let output = Command::new(exe)
        .env(IMPORT, database)
        .env(IMPORT_CACHE, cache)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("starting the importing child");
    assert!(output.status.success(), "the importing child failed: {}", output.status);
    serde_json::from_slice(&output.stdout).expect("the importing child's figures")
}

/// No index quota: the project is larger than a plugin's default allowance.
fn unlimited(config: &mut HostConfig) {
    for plugin in &mut config.plugins {
        plugin.limits = Limits { index_quota_bytes: u64::MAX, ..plugin.limits };
    }
}

/// The rows of `name` on the database at `location` (a path or a PostgreSQL URL).
fn rows(c: &mut Criterion, name: &str, dir: &tempfile::TempDir, location: &str) {
    let rt = crate::runtime();
    let database = Location::parse(location);
    let sqlite = match &database {
        Location::Sqlite(path) => Some(path.clone()),
        Location::Postgres(_) => None,
    };
    let cache = dir.path().join("cache");
    let Imported { text_bytes: text, typical } = import(location, &cache);
    let mut config = HostConfig { database, ..crate::config(dir.path(), Some(cache)) };
    unlimited(&mut config);
    let host = rt.block_on(Host::open(config)).unwrap();
    rt.block_on(async {
        host.create_session_in("searching", Origin::New, Some(PROJECT)).await.unwrap();
        host.create_session("loose", Origin::New).await.unwrap();
        // Past their first turn: the later turns measured below inject no recall block.
        for session in ["searching", "loose"] {
            host.before_query(&TurnContext::new(session, "first"), "hello").await.unwrap();
        }
    });
    if let Some(path) = sqlite {
        let kept = host_bytes(&path);
        let figures = serde_json::json!({ "documents": SESSIONS * (NOTES + 1), "text_bytes": text, "database_bytes": kept,
                                          "ratio": kept as f64 / text as f64 });
        eprintln!("{name}: {figures}");
        record::write(name, "size", "figures.json", &figures);
    }
    let _ = rt.block_on(host.recall_documents(&IndexFilter::default())).map(|all| assert!(all.len() > SESSIONS));

    let mut group = c.benchmark_group(name);
    group.measurement_time(Duration::from_secs(if crate::quick() { 3 } else { 10 }));
    // A typical query: the four rarest words of one earlier note (as a first message names
    // what it is about); and the worst: the project's three most common words (the first is in
    // about half of its documents).
    let common = format!("{} {} {}", Words::word(0), Words::word(1), Words::word(2));
    record::calls((&mut group, name), &rt, "search", || async {
        assert!(!host.recall_search(PROJECT, &typical, 8).await.unwrap().is_empty());
    });
    record::calls((&mut group, name), &rt, "search_common_words", || async {
        assert!(!host.recall_search(PROJECT, &common, 8).await.unwrap().is_empty());
    });
    // A common word of three characters that starts many others (as "the" starts "then",
    // "there", "these"): here the 11th most common, which starts 110 others. Held whole by
    // enough documents, it is not also searched as a prefix.
    let common_prefix = Words::word(10);
    record::calls((&mut group, name), &rt, "search_common_prefix", || async {
        assert!(!host.recall_search(PROJECT, &common_prefix, 8).await.unwrap().is_empty());
    });
    let turn = TurnContext::new("searching", "later");
    let arguments = serde_json::json!({ "query": typical }).to_string();
    record::calls((&mut group, name), &rt, "search_tool", || async {
        host.call_tool(&turn, "recall_search", &arguments).await.unwrap();
    });
    let message = format!("the {typical} thing is flaky again");
    record::calls((&mut group, name), &rt, "new_session_injection", || async {
        let prompt = host.preview_new_session(PROJECT, &message).await.unwrap();
        assert!(prompt.injections.iter().any(|i| i.text.contains("earlier sessions")));
    });
    record::calls((&mut group, name), &rt, "turn_without_search", || async {
        host.before_query(&turn, "go on").await.unwrap();
    });
    let loose = TurnContext::new("loose", "later");
    record::calls((&mut group, name), &rt, "turn_without_project", || async {
        host.before_query(&loose, "go on").await.unwrap();
    });
    group.finish();
}

/// The `n` rarest distinct words (`w<rank>`) of `text`.
fn rarest_words(text: &str, n: usize) -> String {
    let mut ranks: Vec<usize> = text.split(' ').filter_map(|w| w.strip_prefix('w')?.parse().ok()).collect();
    ranks.sort_unstable_by(|a, b| b.cmp(a));
    ranks.dedup();
    ranks.iter().take(n).map(|&rank| Words::word(rank)).collect::<Vec<_>>().join(" ")
}

/// The database file's bytes with its write-ahead log checkpointed into it.
fn host_bytes(path: &std::path::Path) -> u64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    std::fs::metadata(path).unwrap().len()
}
