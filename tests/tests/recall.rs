//! Recall through the real embedded scratchpad component, on every backend: what one session
//! of a project saved reaches the next session's first prompt (and its search tool), never a
//! private span or a secret, never another project, and the plan is offered, not adopted.

use scratchpad_host::{Host, IndexFilter, Origin, Summarizer, Summary, SummaryFuture, SummaryRequest, TurnContext};
use scratchpad_tests::{Fixture, scratchpad};
use serde_json::json;

scratchpad_tests::on_both_backends!(
    a_new_session_starts_from_what_earlier_sessions_of_its_project_left,
    a_newer_plan_supersedes_the_older_one_and_both_stay_searchable,
    the_preview_shows_exactly_what_a_new_session_receives,
    the_same_text_is_kept_once_per_project,
    a_checkpoint_is_found_by_the_next_session,
);

const KEY: &str = "sk-proj-Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu";

async fn save(host: &Host, session: &str, action: &str, content: &str) {
    let args = json!({ "action": action, "content": content }).to_string();
    host.call_tool(&TurnContext::new(session, "t1"), "session.scratchpad", &args).await.unwrap();
}

/// Every injected text of the session's first turn, for `message`.
async fn first_prompt(host: &Host, session: &str, message: &str) -> String {
    let prompt = host.before_query(&TurnContext::new(session, "first"), message).await.unwrap();
    prompt.injections.into_iter().map(|i| i.text).collect::<Vec<_>>().join("\n")
}

async fn a_new_session_starts_from_what_earlier_sessions_of_its_project_left(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await;
    host.create_session_in("a", Origin::New, Some("/repo/p1")).await.unwrap();
    save(&host, "a", "set_plan", "1. reproduce the timezone bug\n2. fix parse_date").await;
    let note = format!("parse_date drops the offset <private>my home is in Lisbon</private> deploy key {KEY}");
    save(&host, "a", "append_notes", &note).await;

    host.create_session_in("b", Origin::New, Some("/repo/p1")).await.unwrap();
    let prompt = first_prompt(&host, "b", "let's continue on the timezone bug").await;
    assert!(prompt.contains("What earlier sessions of this project left"), "{prompt}");
    assert!(prompt.contains("parse_date drops the offset"), "the finding: {prompt}");
    assert!(prompt.contains("reproduce the timezone bug"), "the plan, offered: {prompt}");
    assert!(prompt.contains("offered, not adopted"), "{prompt}");
    assert!(!prompt.contains("Lisbon") && !prompt.contains(KEY), "no private span, no secret: {prompt}");
    // Offered, not adopted: the new session's own plan is empty.
    let plan = host.state("b").await.unwrap().into_iter().find(|e| e.plugin == "scratchpad" && e.key == "plan");
    assert!(plan.as_ref().is_none_or(|e| e.value.is_empty()), "{plan:?}");
    // Only the first turn carries the block.
    let later = host.before_query(&TurnContext::new("b", "second"), "go on").await.unwrap();
    assert!(!later.injections.iter().any(|i| i.text.contains("earlier sessions")), "{later:?}");

    // The metrics count recall's reads, what they found, what was kept and what it injected.
    let metrics = host.metrics().render();
    let value = |name: &str| -> u64 {
        let line = format!("{name}{{plugin=\"scratchpad\"}} ");
        let found = metrics.lines().find_map(|l| l.strip_prefix(line.as_str()));
        found.unwrap_or_else(|| panic!("{name}:\n{metrics}")).parse().unwrap()
    };
    assert!(value("scratchpad_recall_queries_total") >= 1 && value("scratchpad_recall_hits_total") >= 2);
    assert!(value("scratchpad_recall_documents_kept_total") >= 2, "the plan and the note");
    assert!(value("scratchpad_recall_injected_bytes_total") as usize >= prompt.len() / 2, "{metrics}");

    // Its search tool finds the note, and reads it whole.
    let turn = TurnContext::new("b", "second");
    let tools = host.tools(&turn).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "recall_search") && tools.iter().any(|t| t.name == "recall_read"));
    let found = host.call_tool(&turn, "recall_search", r#"{"query":"offset"}"#).await.unwrap().content;
    assert!(found.contains("parse_date drops the offset") && found.contains("· a ·"), "{found}");
    let id = found.rsplit_once('(').and_then(|(_, id)| id.split(')').next()).unwrap().to_owned();
    let whole = host.call_tool(&turn, "recall_read", &json!({ "id": id }).to_string()).await.unwrap().content;
    assert!(whole.contains("parse_date drops the offset") && whole.contains("[redacted]"), "{whole}");
    assert!(!whole.contains("Lisbon") && !whole.contains(KEY), "{whole}");
    let missing = host.call_tool(&turn, "recall_search", r#"{"query":""}"#).await;
    assert!(missing.is_err(), "an empty query is refused: {missing:?}");

    // Another project, and a session with none, see nothing of it.
    host.create_session_in("c", Origin::New, Some("/repo/p2")).await.unwrap();
    let other = first_prompt(&host, "c", "the timezone bug").await;
    assert!(!other.contains("parse_date") && !other.contains("timezone bug\n"), "{other}");
    let turn_c = TurnContext::new("c", "second");
    let none = host.call_tool(&turn_c, "recall_search", r#"{"query":"offset"}"#).await.unwrap().content;
    assert_eq!(none, "No match.");
    host.create_session("loose", Origin::New).await.unwrap();
    let loose = first_prompt(&host, "loose", "the timezone bug").await;
    assert!(!loose.contains("parse_date"), "{loose}");
    let offered = host.tools(&TurnContext::new("loose", "second")).await.unwrap();
    assert!(!offered.iter().any(|t| t.name == "recall_search"), "no project, no search tool");
}

async fn a_newer_plan_supersedes_the_older_one_and_both_stay_searchable(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await;
    host.create_session_in("a", Origin::New, Some("p")).await.unwrap();
    save(&host, "a", "set_plan", "old plan: rewrite the tokenizer").await;
    save(&host, "a", "set_plan", "new plan: patch the tokenizer").await;
    host.create_session_in("b", Origin::New, Some("p")).await.unwrap();
    let prompt = first_prompt(&host, "b", "tokenizer").await;
    assert!(prompt.contains("new plan: patch the tokenizer"), "{prompt}");
    assert!(!prompt.contains("old plan"), "superseded: {prompt}");
    let turn = TurnContext::new("b", "second");
    let plans = host.call_tool(&turn, "recall_search", r#"{"query":"tokenizer","kind":"plan"}"#).await.unwrap();
    assert!(plans.content.contains("old plan") && plans.content.contains("new plan"), "{}", plans.content);
}

async fn the_preview_shows_exactly_what_a_new_session_receives(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await;
    host.create_session_in("a", Origin::New, Some("p")).await.unwrap();
    save(&host, "a", "append_notes", "the flaky test needs a fixed seed").await;
    let before = scratchpad_tests::dump_all(&fx.database);
    let preview = host.preview_new_session("p", "flaky test").await.unwrap();
    assert_eq!(scratchpad_tests::dump_all(&fx.database), before, "a preview writes nothing");
    let preview: String = preview.injections.into_iter().map(|i| i.text).collect::<Vec<_>>().join("\n");
    assert!(preview.contains("the flaky test needs a fixed seed"), "{preview}");
    host.create_session_in("b", Origin::New, Some("p")).await.unwrap();
    let received = first_prompt(&host, "b", "flaky test").await;
    let block = |text: &str| text.split("## What earlier").nth(1).map(str::to_owned);
    assert_eq!(block(&received), block(&preview), "the same recall block");
    assert!(host.preview_new_session("", "x").await.is_err(), "an empty project key is refused");
}

async fn the_same_text_is_kept_once_per_project(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await;
    for session in ["a", "b"] {
        host.create_session_in(session, Origin::New, Some("p")).await.unwrap();
        save(&host, session, "append_notes", "use the staging database for repro").await;
    }
    let kept = host.recall_documents(&IndexFilter::default()).await.unwrap();
    let notes: Vec<_> = kept.iter().filter(|d| d.kind == "note").collect();
    assert_eq!(notes.len(), 1, "{kept:?}");
    assert_eq!(notes[0].session, "b", "the latest session that saved it");
}

/// The runtime's model, summarising the conversation: its decisions and open questions.
struct Decisions;

impl Summarizer for Decisions {
    fn summarize<'a>(&'a self, _request: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            Ok(Summary {
                summary: "Investigated the flaky upload test.".into(),
                key_decisions: vec!["retry uploads with jittered backoff".into()],
                open_questions: vec!["does the proxy drop idle sockets".into()],
                ..Summary::default()
            })
        })
    }
}

async fn a_checkpoint_is_found_by_the_next_session(fx: Fixture) {
    let guard = scratchpad_host::PluginSpec::embedded("context-guard").with_config(json!({ "showContext": false }));
    let mut config = fx.config(vec![scratchpad(json!({})), guard]);
    config.summarizer = Some(std::sync::Arc::new(Decisions));
    let host = Host::open(config).await.unwrap();
    host.create_session_in("a", Origin::New, Some("p")).await.unwrap();
    // The conversation crosses 25 % of the window: context-guard asks for a checkpoint, the
    // summarizer writes it at the turn's end, and the scratchpad indexes it at the next turn.
    let crossing = TurnContext::new("a", "t1").with_tokens(52_000, 200_000);
    host.after_response(&crossing, "done").await.unwrap();
    assert_eq!(host.checkpoints("a").await.unwrap().len(), 1);
    host.before_query(&TurnContext::new("a", "t2"), "next").await.unwrap();
    host.before_query(&TurnContext::new("a", "t3"), "again").await.unwrap();
    let kept = host.recall_documents(&IndexFilter::default()).await.unwrap();
    let checkpoints: Vec<_> = kept.iter().filter(|d| d.kind == "checkpoint").collect();
    assert_eq!(checkpoints.len(), 1, "indexed once: {kept:?}");
    assert!(checkpoints[0].text.contains("retry uploads with jittered backoff"), "{kept:?}");
    assert!(checkpoints[0].text.contains("does the proxy drop idle sockets"), "{kept:?}");

    host.create_session_in("b", Origin::New, Some("p")).await.unwrap();
    let prompt = first_prompt(&host, "b", "the upload test is flaky").await;
    assert!(prompt.contains("jittered backoff"), "{prompt}");
}
