//! A project's search index (the contract's `index` import), on every backend: what a plugin
//! keeps there is found again by the project's other sessions and by nobody else, no query text
//! is ever the backend's search syntax, writes are kept only with their call, the quota holds,
//! privacy is applied before anything is kept, and the operator's commands forget, export and
//! import. Driven through the probe component's `index_*` tools, so each test asserts what the
//! host itself answered.

use scratchpad_host::{Error, Host, HostConfig, IndexFilter, Limits, Origin, RecallMode, TurnContext};
use scratchpad_tests::{Fixture, probe};
use serde_json::{Value, json};

scratchpad_tests::on_both_backends!(
    a_project_index_is_shared_by_its_sessions_and_nobody_else,
    no_query_text_is_search_syntax,
    index_writes_are_kept_only_when_the_call_succeeds,
    the_quota_bounds_each_plugin_in_each_project,
    private_spans_and_secrets_never_reach_the_index,
    forget_export_and_import_cover_what_they_name,
    read_only_and_excluded_projects_keep_nothing,
    a_spawned_session_is_in_its_parents_project,
    newest_first_and_filters_narrow_a_search,
    a_word_held_whole_by_enough_documents_is_not_also_a_prefix,
);

/// A probe named `name` (tools `name.*`) that asks for the index power.
fn indexer(name: &str) -> scratchpad_host::PluginSpec {
    let mut spec = probe(name, name);
    spec.config["indexVerbs"] = json!(true);
    spec.config["powers"] = json!(["index", "storage", "config"]);
    spec
}

/// Calls `tool` of the probe with `args` in `session`, and parses its JSON answer.
async fn call(host: &Host, session: &str, tool: &str, args: Value) -> Value {
    let out = host.call_tool(&TurnContext::new(session, "t1"), tool, &args.to_string()).await;
    serde_json::from_str(&out.unwrap_or_else(|e| panic!("{tool} failed: {e}")).content).unwrap()
}

async fn open(fx: &Fixture, config: impl FnOnce(&mut HostConfig)) -> Host {
    let mut host_config = fx.config(vec![indexer("pa"), indexer("pb")]);
    config(&mut host_config);
    Host::open(host_config).await.expect("opening the host")
}

/// The ids of a search's hits.
fn ids(hits: &Value) -> Vec<&str> {
    hits.as_array().unwrap_or_else(|| panic!("not hits: {hits}")).iter().map(|h| h["id"].as_str().unwrap()).collect()
}

async fn a_project_index_is_shared_by_its_sessions_and_nobody_else(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("a1", Origin::New, Some("/work/p1")).await.unwrap();
    host.create_session_in("a2", Origin::New, Some("/work/p1")).await.unwrap();
    host.create_session_in("b1", Origin::New, Some("/work/p2")).await.unwrap();
    host.create_session("loose", Origin::New).await.unwrap();

    let put = json!({ "id": "n1", "text": "the timezone bug lives in parse_date", "at": 1000 });
    assert_eq!(call(&host, "a1", "pa.index_put", put).await, json!({ "ok": true }));
    let query = json!({ "query": "timezone" });

    let found = call(&host, "a2", "pa.index_search", query.clone()).await;
    assert_eq!(ids(&found), ["n1"], "another session of the project finds it");
    assert_eq!(found[0]["session"], "a1", "with the session that kept it");
    assert!(found[0]["snippet"].as_str().unwrap().contains("timezone bug"), "{found}");
    assert_eq!(ids(&call(&host, "a1", "pa.index_search", query.clone()).await), ["n1"]);
    let others = json!({ "query": "timezone", "other": true });
    assert!(ids(&call(&host, "a1", "pa.index_search", others).await).is_empty(), "its own session left out");

    assert!(ids(&call(&host, "b1", "pa.index_search", query.clone()).await).is_empty(), "not another project");
    assert!(ids(&call(&host, "a2", "pb.index_search", query.clone()).await).is_empty(), "not another plugin");
    assert_eq!(call(&host, "b1", "pa.index_get", json!({ "id": "n1" })).await, Value::Null);
    assert_eq!(call(&host, "a2", "pb.index_get", json!({ "id": "n1" })).await, Value::Null);
    assert_eq!(
        call(&host, "a2", "pa.index_get", json!({ "id": "n1" })).await["text"],
        "the timezone bug lives in parse_date"
    );

    // A session with no project has no index: nothing to search, nothing kept.
    assert_eq!(call(&host, "loose", "pa.index_access", json!({})).await, "none");
    assert_eq!(call(&host, "a1", "pa.index_access", json!({})).await, "read-write");
    assert_eq!(call(&host, "loose", "pa.index_search", query.clone()).await["error"], "no-project");
    let stray = json!({ "id": "n2", "text": "timezone elsewhere" });
    assert_eq!(call(&host, "loose", "pa.index_put", stray).await["error"], "no-project");
    assert_eq!(host.recall_usage(None).await.unwrap().len(), 1, "only p1's index holds anything");
}

async fn no_query_text_is_search_syntax(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("a", Origin::New, Some("p1")).await.unwrap();
    host.create_session_in("b", Origin::New, Some("p2")).await.unwrap();
    call(&host, "a", "pa.index_put", json!({ "id": "a", "title": "near", "text": "alpha beta gamma" })).await;
    call(&host, "b", "pa.index_put", json!({ "id": "b", "text": "alpha from another project" })).await;

    // Every operator of FTS5 and tsquery, column filters, quotes and parentheses: words only,
    // answered from p1 alone.
    for query in [
        "alpha*",
        "NEAR(alpha beta)",
        "title:alpha",
        "body:alpha OR project:p2",
        "\"alpha",
        "(alpha",
        "alpha AND",
        "-alpha",
        "alpha & !beta | gamma:*",
        "alpha' OR 1=1 --",
        "^alpha",
        "{alpha beta}",
    ] {
        let hits = call(&host, "a", "pa.index_search", json!({ "query": query })).await;
        assert_eq!(ids(&hits), ["a"], "`{query}` answered {hits}");
    }
    // Nothing to look for, too much, a bad limit: a clear error value, not a failure.
    for (query, limit, says) in [
        ("", 10, "no words"),
        ("*** () \"\" :", 10, "no words"),
        (&"alpha ".repeat(300)[..], 10, "bytes"),
        (&(0..40).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ")[..], 10, "40 words"),
        ("alpha", 0, "limit"),
        ("alpha", 51, "limit"),
    ] {
        let answer = call(&host, "a", "pa.index_search", json!({ "query": query, "limit": limit })).await;
        assert_eq!(answer["error"], "invalid", "{answer}");
        assert!(answer["message"].as_str().unwrap().contains(says), "{answer}");
    }
    let megabyte = "alpha ".repeat(200_000);
    let answer = call(&host, "a", "pa.index_search", json!({ "query": megabyte })).await;
    assert_eq!(answer["error"], "invalid", "a megabyte query");
}

async fn index_writes_are_kept_only_when_the_call_succeeds(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("s", Origin::New, Some("p")).await.unwrap();
    let args = json!({ "id": "lost", "text": "written then trapped" }).to_string();
    let failed = host.call_tool(&TurnContext::new("s", "t1"), "pa.index_put_then_trap", &args).await;
    assert!(matches!(failed, Err(Error::Plugin { .. })), "{failed:?}");
    assert_eq!(call(&host, "s", "pa.index_get", json!({ "id": "lost" })).await, Value::Null);
    assert!(host.recall_usage(Some("p")).await.unwrap().is_empty(), "no usage counted");

    // Bad documents are error values and keep nothing; the good ones of the same call are kept.
    let documents = json!({ "documents": [
        { "id": "", "text": "no id" },
        { "id": "x", "kind": "Not A Kind", "text": "bad kind" },
        { "id": "y", "text": "z".repeat(70_000) },
        { "id": "nul", "text": "a\u{0}b" },
        { "id": "kept", "text": "a good one" },
        { "id": "empty", "text": "<private>all of it</private>" },
    ]});
    let answers = call(&host, "s", "pa.index_put", documents).await;
    let errors: Vec<&str> = answers.as_array().unwrap().iter().map(|a| a["error"].as_str().unwrap_or("ok")).collect();
    assert_eq!(errors, ["invalid", "invalid", "invalid", "invalid", "ok", "ok"], "{answers}");
    let kept = host.recall_documents(&IndexFilter::default()).await.unwrap();
    assert_eq!(kept.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(), ["kept"], "an all-private text is not kept");

    // A removal is a write too: kept with its call.
    assert_eq!(call(&host, "s", "pa.index_remove", json!({ "id": "kept" })).await, json!({ "removed": true }));
    assert_eq!(call(&host, "s", "pa.index_remove", json!({ "id": "kept" })).await, json!({ "removed": false }));
    assert!(host.recall_documents(&IndexFilter::default()).await.unwrap().is_empty());
}

async fn the_quota_bounds_each_plugin_in_each_project(fx: Fixture) {
    let mut small = indexer("pa");
    small.limits = Limits { index_quota_bytes: 4096, ..small.limits };
    let host = Host::open(fx.config(vec![small, indexer("pb")])).await.unwrap();
    host.create_session_in("s", Origin::New, Some("p")).await.unwrap();
    host.create_session_in("t", Origin::New, Some("q")).await.unwrap();
    let document = |i: usize| json!({ "id": format!("d{i}"), "text": "x".repeat(1000) });
    let many = json!({ "documents": (0..8).map(document).collect::<Vec<_>>() });
    let answers = call(&host, "s", "pa.index_put", many.clone()).await;
    let refused: Vec<&Value> = answers.as_array().unwrap().iter().filter(|a| a["error"] == "quota-exceeded").collect();
    assert_eq!(refused.len(), 5, "1,070 bytes each into 4,096: three fit: {answers}");
    assert_eq!(refused[0]["limit"], 4096);
    let usage = host.recall_usage(Some("p")).await.unwrap();
    assert!(usage[0].bytes <= 4096, "{usage:?}");
    // Across calls too, and per project and plugin.
    assert_eq!(call(&host, "s", "pa.index_put", document(99)).await["error"], "quota-exceeded");
    assert_eq!(call(&host, "t", "pa.index_put", document(99)).await, json!({ "ok": true }), "another project");
    let answers = call(&host, "s", "pb.index_put", many).await;
    assert!(answers.as_array().unwrap().iter().all(|a| a["ok"] == true), "another plugin's quota: {answers}");
}

async fn private_spans_and_secrets_never_reach_the_index(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("s", Origin::New, Some("p")).await.unwrap();
    let key = "sk-ant-api03-Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu";
    let text = format!("deploy with {key} <private>the launch codes are tangerine</private> then verify");
    call(&host, "s", "pa.index_put", json!({ "id": "n", "title": "<private>hidden</private>title", "text": text }))
        .await;
    let kept = call(&host, "s", "pa.index_get", json!({ "id": "n" })).await;
    assert_eq!(kept["text"], "deploy with [redacted]  then verify");
    assert_eq!(kept["title"], "title");
    for word in ["tangerine", "launch", "hidden", "Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu"] {
        assert!(ids(&call(&host, "s", "pa.index_search", json!({ "query": word })).await).is_empty(), "{word}");
    }
    if let scratchpad_host::Location::Sqlite(_) = &fx.database {
        drop(host);
        let bytes = std::fs::read(fx.db()).unwrap();
        let wal = std::fs::read(fx.db().with_extension("db-wal")).unwrap_or_default();
        for haystack in [&bytes, &wal] {
            assert!(!contains(haystack, b"tangerine") && !contains(haystack, key.as_bytes()), "on disk");
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

async fn forget_export_and_import_cover_what_they_name(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    for (session, project) in [("s1", "p"), ("s2", "p"), ("s3", "q")] {
        host.create_session_in(session, Origin::New, Some(project)).await.unwrap();
        let text = format!("{session} found the marmalade regression");
        call(&host, session, "pa.index_put", json!({ "id": session, "text": text, "at": 1000 })).await;
        call(&host, session, "pb.index_put", json!({ "id": session, "text": "an unrelated finding", "at": 2000 }))
            .await;
    }
    let all = host.recall_documents(&IndexFilter::default()).await.unwrap();
    assert_eq!(all.len(), 6);

    let mut by_session = IndexFilter::default();
    by_session.project = Some("p".into());
    by_session.session = Some("s1".into());
    assert_eq!(host.recall_forget(&by_session).await.unwrap(), 2);
    let mut by_query = IndexFilter::default();
    by_query.project = Some("p".into());
    by_query.words = Some(vec!["marmalade".into()]);
    assert_eq!(host.recall_forget(&by_query).await.unwrap(), 1, "s2's marmalade note");
    let mut by_time = IndexFilter::default();
    by_time.project = Some("q".into());
    by_time.since_ms = Some(1500);
    assert_eq!(host.recall_forget(&by_time).await.unwrap(), 1, "q's document at 2000");
    let left: Vec<(String, String)> =
        host.recall_documents(&IndexFilter::default()).await.unwrap().into_iter().map(|d| (d.project, d.id)).collect();
    // Left: q's marmalade note (at 1000) and p's unrelated one of s2 (at 2000), oldest first.
    assert_eq!(left, [("q".to_owned(), "s3".to_owned()), ("p".to_owned(), "s2".to_owned())]);
    if let scratchpad_host::Location::Sqlite(_) = &fx.database {
        let bytes = std::fs::read(fx.db()).unwrap();
        assert!(!contains(&bytes, b"s1 found the marmalade"), "forgotten from the file");
    }

    // Export, forget everything, import: the same documents, searchable again.
    let exported = host.recall_documents(&IndexFilter::default()).await.unwrap();
    assert_eq!(host.recall_forget(&IndexFilter::default()).await.unwrap(), 2);
    assert_eq!(host.recall_import(exported.clone()).await.unwrap(), 2);
    assert_eq!(host.recall_documents(&IndexFilter::default()).await.unwrap(), exported);
    assert_eq!(ids(&call(&host, "s3", "pa.index_search", json!({ "query": "marmalade" })).await), ["s3"]);

    // An import is scrubbed like a plugin's write, and a bad document refuses all of it.
    let mut secret = exported[0].clone();
    secret.text = "token ghp_0123456789abcdefghijABCDEFGHIJklmnop".into();
    let mut broken = exported[1].clone();
    broken.kind = "Bad Kind".into();
    let refused = host.recall_import(vec![secret.clone(), broken]).await.unwrap_err();
    assert!(refused.to_string().contains("document 2"), "{refused}");
    host.recall_import(vec![secret]).await.unwrap();
    let kept = host.recall_documents(&IndexFilter::default()).await.unwrap();
    assert!(kept.iter().any(|d| d.text == "token [redacted]"), "{kept:?}");
}

async fn read_only_and_excluded_projects_keep_nothing(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("w", Origin::New, Some("p")).await.unwrap();
    host.create_session_in("x", Origin::New, Some("secret")).await.unwrap();
    call(&host, "w", "pa.index_put", json!({ "id": "d", "text": "kept before" })).await;
    drop(host);

    let host = open(&fx, |config| {
        config.recall.mode = RecallMode::ReadOnly;
        config.recall.exclude = vec!["secret".into()];
    })
    .await;
    assert_eq!(call(&host, "w", "pa.index_access", json!({})).await, "read");
    assert_eq!(ids(&call(&host, "w", "pa.index_search", json!({ "query": "kept" })).await), ["d"], "still searched");
    assert_eq!(call(&host, "w", "pa.index_put", json!({ "id": "e", "text": "new" })).await["error"], "read-only");
    assert_eq!(call(&host, "w", "pa.index_remove", json!({ "id": "d" })).await["error"], "read-only");
    assert_eq!(call(&host, "x", "pa.index_access", json!({})).await, "none", "an excluded project has no index");
    assert_eq!(host.recall_documents(&IndexFilter::default()).await.unwrap().len(), 1);
    drop(host);

    let host = open(&fx, |config| config.recall.mode = RecallMode::Off).await;
    assert_eq!(call(&host, "w", "pa.index_access", json!({})).await, "none");
    assert_eq!(call(&host, "w", "pa.index_search", json!({ "query": "kept" })).await["error"], "no-project");
}

async fn a_spawned_session_is_in_its_parents_project(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("parent", Origin::New, Some("p")).await.unwrap();
    let spawn = Origin::Spawn { parent: "parent".into(), copy: false };
    host.create_session_in("child", spawn, None).await.unwrap();
    assert_eq!(host.session("child").await.unwrap().project.as_deref(), Some("p"));
    host.create_session_in("elsewhere", Origin::Fork { parent: "parent".into() }, Some("q")).await.unwrap();
    assert_eq!(host.session("elsewhere").await.unwrap().project.as_deref(), Some("q"));
    assert_eq!(host.session("parent").await.unwrap().project.as_deref(), Some("p"));
    for bad in ["", "  ", "a\nb"] {
        let refused = host.create_session_in("bad", Origin::New, Some(bad)).await.unwrap_err();
        assert_eq!(refused.code(), "invalid-input", "{bad:?}: {refused}");
    }
    assert!(matches!(host.session("bad").await, Err(Error::SessionNotFound(_))), "nothing created");
}

async fn newest_first_and_filters_narrow_a_search(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("s1", Origin::New, Some("p")).await.unwrap();
    host.create_session_in("s2", Origin::New, Some("p")).await.unwrap();
    call(&host, "s1", "pa.index_put", json!({ "id": "old", "kind": "plan", "text": "ship the parser", "at": 1 })).await;
    call(&host, "s2", "pa.index_put", json!({ "id": "new", "kind": "plan", "text": "ship the parser", "at": 5 })).await;
    call(&host, "s2", "pa.index_put", json!({ "id": "note", "kind": "note", "text": "parser notes", "at": 3 })).await;
    // Equal scores: newest first.
    let plans = call(&host, "s1", "pa.index_search", json!({ "query": "ship parser", "kind": "plan" })).await;
    assert_eq!(ids(&plans), ["new", "old"]);
    let since = call(&host, "s1", "pa.index_search", json!({ "query": "parser", "since": 2 })).await;
    assert_eq!(ids(&since).len(), 2, "{since}");
    assert!(!ids(&since).contains(&"old"));
    let of_s1 = call(&host, "s2", "pa.index_search", json!({ "query": "parser", "session": "s1" })).await;
    assert_eq!(ids(&of_s1), ["old"]);
    let prefix = call(&host, "s1", "pa.index_search", json!({ "query": "pars" })).await;
    assert_eq!(
        ids(&prefix).len(),
        3,
        "a word of three letters or more that no document holds whole matches as a prefix: {prefix}"
    );
    let recent = call(&host, "s1", "pa.index_recent", json!({ "kind": "plan", "other": true, "limit": 1 })).await;
    assert_eq!(recent[0]["id"], "new");
    assert_eq!(recent.as_array().unwrap().len(), 1);
    let all = call(&host, "s1", "pa.index_recent", json!({})).await;
    assert_eq!(ids(&all), ["new", "note", "old"]);
    assert_eq!(call(&host, "s1", "pa.index_recent", json!({ "limit": 0 })).await["error"], "invalid");
}

async fn a_word_held_whole_by_enough_documents_is_not_also_a_prefix(fx: Fixture) {
    let host = open(&fx, |_| {}).await;
    host.create_session_in("s1", Origin::New, Some("p")).await.unwrap();
    call(&host, "s1", "pa.index_put", json!({ "id": "first", "text": "the cache was cold", "at": 1 })).await;
    // 64 documents hold "cache" whole (a search's candidates for one word); a newer one holds
    // only a longer word it starts.
    let first = host.recall_documents(&IndexFilter::default()).await.unwrap().remove(0);
    let mut documents: Vec<_> = (2..=64)
        .map(|n| {
            let mut document = first.clone();
            document.id = format!("cache-{n}");
            document.at_ms = n;
            document
        })
        .collect();
    let mut longer = first.clone();
    longer.id = "longer".into();
    longer.text = "the caches were warmed".into();
    longer.at_ms = 100;
    documents.push(longer);
    host.recall_import(documents).await.unwrap();
    let search = |query: &str| call(&host, "s1", "pa.index_search", json!({ "query": query, "limit": 50 }));
    let whole = search("cache").await;
    assert_eq!(ids(&whole).len(), 50, "{whole}");
    assert!(!ids(&whole).contains(&"longer"), "the word's own documents fill its candidates: {:?}", ids(&whole));
    let start = search("cach").await;
    assert_eq!(ids(&start)[0], "longer", "held whole by none: a prefix, newest first: {start}");
    let both = search("cache warmed").await;
    assert_eq!(ids(&both)[0], "longer", "found by another word, its \"caches\" counts too: {both}");
}

/// Without the `index` power a plugin gets a denial, never the index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_power_is_denied_unless_granted() {
    let fx = Fixture::new();
    let mut spec = indexer("pa");
    spec.config["powers"] = json!(["storage", "config"]);
    spec.grants = scratchpad_host::Grants::parse(["storage", "config"]).unwrap();
    let host = Host::open(fx.config(vec![spec])).await.unwrap();
    host.create_session_in("s", Origin::New, Some("p")).await.unwrap();
    let denied = host.call_tool(&TurnContext::new("s", "t1"), "pa.index_access", "{}").await.unwrap_err();
    assert!(matches!(denied, Error::Plugin { .. }), "a denial, not an unknown tool: {denied}");
    assert!(denied.to_string().contains("`index`"), "{denied}");

    // Asked for and not granted: refused at load, naming the power.
    let mut asks = indexer("pa");
    asks.grants = scratchpad_host::Grants::parse(["storage", "config"]).unwrap();
    let refused = Host::open(fx.config(vec![asks])).await.err().expect("refused");
    assert!(refused.to_string().contains("index"), "{refused}");
}
