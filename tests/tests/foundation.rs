//! The foundation end to end: a tool call is stored and injected on the next turn, through
//! the real component, the real host and a real database (SQLite and PostgreSQL, each test on both).

use scratchpad_host::{Error, Origin, PluginFailure, ToolErrorKind};
use scratchpad_tests::{Fixture, dump, probe, scratchpad, turn};
use serde_json::json;

scratchpad_tests::on_both_backends!(
    a_tool_call_is_stored_and_injected_on_the_next_turn,
    a_preview_of_the_next_prompt_writes_nothing,
    failures_and_quota_refusals_are_logged_in_the_session_events_and_the_log_is_bounded,
    a_new_host_on_the_same_file_still_injects_the_state,
    two_plugins_state_is_isolated,
    two_sessions_state_is_isolated,
    a_call_that_writes_then_traps_persists_nothing,
    fork_copies_state_and_spawn_does_not,
    session_creation_refuses_duplicates_and_missing_parents_and_changes_nothing,
    two_plugins_declaring_one_tool_are_refused_at_load_naming_both,
);

const SET_NOTES: &str = r#"{"action":"set_notes","content":"root cause: timezone mismatch"}"#;

async fn a_tool_call_is_stored_and_injected_on_the_next_turn(fx: Fixture) {
    let host = fx.host().await;
    host.create_session("s", Origin::New).await.unwrap();
    host.call_tool(&turn("s", "t1"), "session.scratchpad", SET_NOTES).await.unwrap();

    let prompt = host.before_query(&turn("s", "t2"), "continue").await.unwrap();
    let rendered = prompt.render("", "continue");
    assert!(rendered.user.contains("root cause: timezone mismatch"), "{}", rendered.user);
    assert!(rendered.user.ends_with("continue"), "the message stays last and untouched: {}", rendered.user);
    let stored = dump(&fx.database, "s");
    assert!(stored.iter().any(|(p, _, v)| p == "scratchpad" && v == b"root cause: timezone mismatch"), "{stored:?}");
}

async fn a_preview_of_the_next_prompt_writes_nothing(fx: Fixture) {
    let host = fx.host().await;
    host.create_session("s", Origin::New).await.unwrap();
    let fresh = host.preview_query("s").await.unwrap();
    assert!(!fresh.injections.is_empty(), "the standing guidance is previewed before the first turn");
    assert_eq!(host.session("s").await.unwrap().turn_index, -1, "a preview starts no turn");

    host.call_tool(&turn("s", "t1"), "session.scratchpad", SET_NOTES).await.unwrap();
    let (record, stored) = (host.session("s").await.unwrap(), dump(&fx.database, "s"));
    let preview = host.preview_query("s").await.unwrap();
    assert!(preview.render("", "").user.contains("root cause: timezone mismatch"), "{preview:?}");
    let after = host.session("s").await.unwrap();
    assert_eq!(
        (after.turn_id, after.turn_index, after.updated_at),
        (record.turn_id, record.turn_index, record.updated_at),
        "the preview entered no turn and committed nothing"
    );
    assert_eq!(dump(&fx.database, "s"), stored);

    // What the next real turn injects is what the preview showed.
    let next = host.before_query(&turn("s", "t1"), "").await.unwrap();
    assert_eq!(next.injections, preview.injections);
    assert!(matches!(host.preview_query("ghost").await, Err(Error::SessionNotFound(_))));
    drop(host);

    // A plugin failing in the preview fails the preview and logs nothing: looking writes nothing.
    let trapping = probe("probe", "p").with_config(json!({"prefix": "p", "queryMode": "trap"}));
    let host = fx.open(vec![trapping]).await;
    host.create_session("t", Origin::New).await.unwrap();
    let before = scratchpad_tests::dump_all(&fx.database);
    assert!(matches!(host.preview_query("t").await, Err(Error::Plugin { .. })));
    assert_eq!(scratchpad_tests::dump_all(&fx.database), before, "no event, no write");
    assert!(host.events("t").await.unwrap().is_empty());
}

async fn failures_and_quota_refusals_are_logged_in_the_session_events_and_the_log_is_bounded(fx: Fixture) {
    let limits = scratchpad_host::Limits { storage_quota_bytes: 64, ..Default::default() };
    let host = fx.open(vec![probe("probe", "p").with_limits(limits)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    host.create_session("other", Origin::New).await.unwrap();
    let over = json!({"key": "big", "value": "x".repeat(100)}).to_string();
    let bound = scratchpad_host::MAX_EVENTS_PER_SESSION as usize;
    for i in 0..bound + 5 {
        let refused = host.call_tool(&turn("s", &format!("t{i}")), "p.write", &over).await.unwrap_err();
        assert!(matches!(refused, Error::Tool { .. }), "the plugin handles the refusal: {refused}");
    }
    let trapped = host.call_tool(&turn("s", "last"), "p.write_then_trap", r#"{"key":"k","value":"v"}"#).await;
    assert!(matches!(trapped, Err(Error::Plugin { .. })));

    let events = host.events("s").await.unwrap();
    assert_eq!(events.len(), bound, "the newest {bound} are kept");
    assert!(
        events[..bound - 1].iter().all(|e| e.kind == scratchpad_host::EventKind::Quota && e.hook == "tool p.write"),
        "{:?}",
        &events[..3]
    );
    assert!(events[0].message.contains("refused by its storage quota of 64 bytes"), "{:?}", events[0]);
    let last = events.last().unwrap();
    assert_eq!(
        (last.plugin.as_str(), last.hook.as_str(), last.kind.as_str()),
        ("probe", "tool p.write_then_trap", "trap")
    );
    assert!(events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms), "oldest first");
    assert!(host.events("other").await.unwrap().is_empty(), "another session's log is its own");
    assert!(matches!(host.events("ghost").await, Err(Error::SessionNotFound(_))));
}

async fn a_new_host_on_the_same_file_still_injects_the_state(fx: Fixture) {
    {
        let host = fx.host().await;
        host.create_session("s", Origin::New).await.unwrap();
        host.call_tool(&turn("s", "t1"), "session.scratchpad", SET_NOTES).await.unwrap();
    }
    let host = fx.host().await;
    let prompt = host.before_query(&turn("s", "t2"), "what's next?").await.unwrap();
    assert!(prompt.render("", "").user.contains("root cause: timezone mismatch"));
}

async fn two_plugins_state_is_isolated(fx: Fixture) {
    let host = fx.open(vec![probe("alpha", "a"), probe("beta", "b")]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    host.call_tool(&t, "a.write", r#"{"key":"secret","value":"alpha's"}"#).await.unwrap();

    let err = host.call_tool(&t, "b.read", r#"{"key":"secret"}"#).await.unwrap_err();
    assert!(matches!(&err, Error::Tool { error, .. } if error.kind == ToolErrorKind::NotFound), "{err}");
    assert_eq!(host.call_tool(&t, "b.keys", "{}").await.unwrap().content, "[]");
    assert_eq!(host.call_tool(&t, "a.read", r#"{"key":"secret"}"#).await.unwrap().content, "alpha's");
}

async fn two_sessions_state_is_isolated(fx: Fixture) {
    let host = fx.host().await;
    host.create_session("one", Origin::New).await.unwrap();
    host.create_session("two", Origin::New).await.unwrap();
    host.call_tool(&turn("one", "t1"), "session.scratchpad", SET_NOTES).await.unwrap();

    let other = host.before_query(&turn("two", "t1"), "hi").await.unwrap();
    assert!(!other.render("", "hi").user.contains("timezone"));
    assert!(dump(&fx.database, "two").is_empty());
}

async fn a_call_that_writes_then_traps_persists_nothing(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({})), probe("probe", "p")]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let t = turn("s", "t1");
    host.call_tool(&t, "p.write", r#"{"key":"kept","value":"1"}"#).await.unwrap();
    let before = dump(&fx.database, "s");

    let err = host.call_tool(&t, "p.write_then_trap", r#"{"key":"lost","value":"2"}"#).await.unwrap_err();
    match &err {
        Error::Plugin { plugin, hook, failure: PluginFailure::Trap(message) } => {
            assert_eq!(plugin, "probe");
            assert_eq!(hook, "tool p.write_then_trap");
            assert!(message.contains("probe panicked after writing"), "{message}");
        }
        other => panic!("expected a trap, got {other}"),
    }
    assert_eq!(dump(&fx.database, "s"), before, "the trapped call's write must not persist");
    // The host keeps serving the session.
    host.call_tool(&t, "session.scratchpad", SET_NOTES).await.unwrap();
}

async fn fork_copies_state_and_spawn_does_not(fx: Fixture) {
    let host = fx.host().await;
    host.create_session("parent", Origin::New).await.unwrap();
    host.call_tool(&turn("parent", "t1"), "session.scratchpad", SET_NOTES).await.unwrap();

    host.create_session("forked", Origin::Fork { parent: "parent".into() }).await.unwrap();
    host.create_session("spawned", Origin::Spawn { parent: "parent".into(), copy: false }).await.unwrap();

    let forked = host.before_query(&turn("forked", "t1"), "go").await.unwrap().render("", "go");
    assert!(forked.user.contains("timezone mismatch"), "{}", forked.user);
    let spawned = host.before_query(&turn("spawned", "t1"), "go").await.unwrap().render("", "go");
    assert!(!spawned.user.contains("timezone mismatch"), "{}", spawned.user);
    assert!(dump(&fx.database, "spawned").iter().all(|(_, k, _)| k != "notes"));
}

async fn session_creation_refuses_duplicates_and_missing_parents_and_changes_nothing(fx: Fixture) {
    let host = fx.host().await;
    host.create_session("s", Origin::New).await.unwrap();
    host.call_tool(&turn("s", "t1"), "session.scratchpad", SET_NOTES).await.unwrap();
    let before = dump(&fx.database, "s");

    assert!(matches!(host.create_session("s", Origin::New).await, Err(Error::SessionExists(id)) if id == "s"));
    let orphan = host.create_session("child", Origin::Fork { parent: "nope".into() }).await;
    assert!(matches!(orphan, Err(Error::SessionNotFound(id)) if id == "nope"));
    assert!(matches!(host.session("child").await, Err(Error::SessionNotFound(_))));
    assert_eq!(dump(&fx.database, "s"), before);
}

async fn two_plugins_declaring_one_tool_are_refused_at_load_naming_both(fx: Fixture) {
    let clash = probe("intruder", "x").with_config(json!({ "prefix": "x", "extraTools": ["session.scratchpad"] }));
    let err = scratchpad_host::Host::open(fx.config(vec![scratchpad(json!({})), clash])).await.err().unwrap();
    let message = err.to_string();
    assert!(matches!(err, Error::Load { .. }), "{message}");
    assert!(message.contains("intruder") && message.contains("`scratchpad`"), "{message}");
    assert!(message.contains("session.scratchpad"), "{message}");
}
