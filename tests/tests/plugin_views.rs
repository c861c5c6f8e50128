//! Components describe their own state (the contract's optional `view` export, new in 0.1.2):
//! `Host::view` shows the scratchpad's plan, notes and references with their usage; a
//! component without the export (the probe's SDK default, the frozen 0.1.0 and 0.1.1 ones) has
//! no view and fails nothing; a hostile `describe` (a loop, a huge answer, too many sections, a
//! malformed key) is that plugin's error and leaves the other plugins' views whole; and a
//! `describe` writes nothing.

use scratchpad_host::{Grants, Host, Limits, Origin, PluginFailure, PluginSpec, Power, SectionContent};
use scratchpad_tests::{Fixture, components, dump_all, probe, scratchpad, trusted, turn};
use serde_json::{Value, json};

async fn scratch(host: &Host, session: &str, args: Value) {
    host.call_tool(&turn(session, "t1"), "session.scratchpad", &args.to_string()).await.unwrap();
}

fn hostile(config: Value, limits: Limits) -> PluginSpec {
    PluginSpec { name: "hostile".into(), ..trusted(components::HOSTILE_PATH) }.with_config(config).with_limits(limits)
}

async fn the_scratchpads_view_shows_its_spaces_with_their_usage(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    scratch(&host, "s", json!({"action": "set_plan", "content": "1. read\n2. fix"})).await;
    scratch(&host, "s", json!({"action": "append_notes", "content": "the bug is in parse()"})).await;
    scratch(&host, "s", json!({"action": "refs.add", "ref": "src/parse.rs:42"})).await;

    let views = host.view("s").await.unwrap();
    assert_eq!(views.len(), 1, "{views:?}");
    let view = &views[0];
    assert_eq!((view.plugin.as_str(), view.error.as_deref()), ("scratchpad", None));
    let shown: Vec<_> = view
        .sections
        .iter()
        .map(|s| (s.title.as_str(), s.key.as_str(), s.usage.as_deref(), s.content.clone()))
        .collect();
    assert_eq!(
        shown,
        [
            ("Plan", "plan", Some("14/2000 chars"), SectionContent::Text("1. read\n2. fix".into())),
            ("Notes", "notes", Some("21/4000 chars"), SectionContent::Text("the bug is in parse()".into())),
            ("References", "refs", Some("1/50 items"), SectionContent::Items(vec!["src/parse.rs:42".into()])),
        ]
    );
}

#[tokio::test]
async fn the_scratchpads_view_shows_plan_notes_and_refs_with_usage_on_sqlite() {
    the_scratchpads_view_shows_its_spaces_with_their_usage(Fixture::new()).await;
}

#[tokio::test]
async fn the_scratchpads_view_shows_plan_notes_and_refs_with_usage_on_postgresql() {
    the_scratchpads_view_shows_its_spaces_with_their_usage(Fixture::postgres()).await;
}

#[tokio::test]
async fn a_view_writes_nothing_and_enters_no_turn() {
    let fx = Fixture::new();
    let host = fx.open(vec![scratchpad(json!({})), hostile(json!({}), Limits::default())]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let (before, record) = (dump_all(&fx.db()), host.session("s").await.unwrap());
    let views = host.view("s").await.unwrap();
    let hostile = views.iter().find(|v| v.plugin == "hostile").expect("the hostile plugin has a view");
    assert_eq!(hostile.section("hostile").map(|s| s.content.to_text()), Some("calm".into()));
    assert_eq!(dump_all(&fx.db()), before, "the hostile describe's `described` write was dropped");
    assert_eq!(host.session("s").await.unwrap().turn_index, record.turn_index);
}

#[tokio::test]
async fn components_without_the_view_export_have_no_view_and_fail_nothing() {
    let fx = Fixture::new();
    let legacy = PluginSpec::file(components::LEGACY_PATH).unsigned().granting(Grants::of(&[Power::Storage]));
    let frozen =
        PluginSpec::file(components::FROZEN_PATH).unsigned().granting(Grants::of(&[Power::Inject, Power::Storage]));
    let host = fx.open(vec![probe("probe", "p"), legacy, frozen, scratchpad(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let views = host.view("s").await.unwrap();
    let names: Vec<_> = views.iter().map(|v| (v.plugin.as_str(), v.error.is_none())).collect();
    // The probe has the SDK's default (no sections), the frozen ones no export: none shows.
    assert_eq!(names, [("scratchpad", true)]);
    assert_eq!(host.view("missing").await.err().map(|e| e.to_string().contains("missing")), Some(true));
}

#[tokio::test]
async fn a_component_of_the_frozen_0_1_1_contract_still_loads_and_runs() {
    let fx = Fixture::new();
    let frozen =
        PluginSpec::file(components::FROZEN_PATH).unsigned().granting(Grants::of(&[Power::Inject, Power::Storage]));
    let host = fx.open(vec![frozen]).await;
    host.create_session("s", Origin::New).await.unwrap();
    for (n, t) in ["t1", "t2"].iter().enumerate() {
        let prompt = host.before_query(&turn("s", t), "go").await.unwrap();
        let texts: Vec<_> = prompt.injections.iter().map(|i| i.text.clone()).collect();
        assert_eq!(texts, [format!("[frozen] turn {}", n + 1)]);
    }
    assert_eq!(host.call_tool(&turn("s", "t3"), "frozen.echo", "{}").await.unwrap().content, "{}");
    assert!(host.view("s").await.unwrap().is_empty());

    // Its `permissions@0.1.1` export is still read: granted everything, it holds what it asks.
    let fx = Fixture::new();
    let all = PluginSpec::file(components::FROZEN_PATH).unsigned().granting(Grants::ALL);
    let host = fx.open(vec![all]).await;
    assert_eq!(host.plugins()[0].grants, ["inject", "storage"], "the 0.1.1 component's request was read");
}

#[tokio::test]
async fn a_component_of_the_frozen_0_1_2_contract_loads_with_its_view_and_no_index() {
    let fx = Fixture::new();
    let all = PluginSpec::file(components::VIEWED_PATH).unsigned().granting(Grants::ALL);
    let host = fx.open(vec![all]).await;
    assert_eq!(host.plugins()[0].grants, ["inject", "storage"], "its `permissions@0.1.2` request was read");
    host.create_session_in("s", Origin::New, Some("p")).await.unwrap();
    for (n, t) in ["t1", "t2"].iter().enumerate() {
        let prompt = host.before_query(&turn("s", t), "go").await.unwrap();
        let texts: Vec<_> = prompt.injections.iter().map(|i| i.text.clone()).collect();
        assert_eq!(texts, [format!("[viewed] turn {}", n + 1)]);
    }
    let views = host.view("s").await.unwrap();
    let turns = views[0].section("turns").map(|s| s.content.to_text());
    assert_eq!(turns, Some("2".into()), "its `view@0.1.2` export is called");
    assert!(host.recall_usage(None).await.unwrap().is_empty(), "it has no index to write to");
}

/// The hostile plugin's view with `config`, beside the real scratchpad.
async fn hostile_view(config: Value, limits: Limits) -> (Option<PluginFailure>, String, usize) {
    let fx = Fixture::new();
    let host = fx.open(vec![hostile(config, limits), scratchpad(json!({}))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    scratch(&host, "s", json!({"action": "set_plan", "content": "keep going"})).await;
    let views = host.view("s").await.unwrap();
    assert_eq!(views.len(), 2, "{views:?}");
    let scratchpad = &views[1];
    assert_eq!(scratchpad.error, None);
    assert_eq!(scratchpad.section("plan").map(|s| s.content.to_text()), Some("keep going".into()));
    let hostile = &views[0];
    assert!(hostile.sections.is_empty(), "{hostile:?}");
    (hostile.failure.clone(), hostile.error.clone().unwrap_or_default(), hostile.sections.len())
}

#[tokio::test]
async fn a_describe_that_loops_is_cut_at_its_deadline_and_the_others_still_show() {
    let limits = Limits { call_timeout: std::time::Duration::from_millis(300), ..Limits::default() };
    let started = std::time::Instant::now();
    let (failure, error, _) = hostile_view(json!({"view": "loop"}), limits).await;
    assert_eq!(failure, Some(PluginFailure::Timeout { limit_ms: 300 }));
    assert!(error.contains("hostile") && error.contains("describe"), "{error}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

#[tokio::test]
async fn a_describe_past_the_output_cap_is_refused_and_the_others_still_show() {
    let limits = Limits { output_bytes: 64 << 10, ..Limits::default() };
    let (failure, _, _) = hostile_view(json!({"view": "huge", "viewBytes": 1 << 20}), limits).await;
    assert!(
        matches!(failure, Some(PluginFailure::OutputTooLarge { limit_bytes, .. }) if limit_bytes == 64 << 10),
        "{failure:?}"
    );
}

#[tokio::test]
async fn a_describe_past_the_contracts_bounds_is_refused_naming_the_bound() {
    let (failure, _, _) = hostile_view(json!({"view": "sections"}), Limits::default()).await;
    assert!(matches!(&failure, Some(PluginFailure::Contract(m)) if m.contains("1000 sections")), "{failure:?}");
    let (failure, error, _) = hostile_view(json!({"view": "bad-key"}), Limits::default()).await;
    assert!(
        matches!(&failure, Some(PluginFailure::Contract(m)) if m.contains("a key is 1 to 64 bytes")),
        "{failure:?}"
    );
    assert!(!error.contains('\u{1b}'), "the key's escape sequence is not repeated: {error:?}");
}
