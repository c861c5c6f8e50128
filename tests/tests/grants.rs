//! Grants: a plugin holds only the powers it asks for and its configuration grants.
//! A plugin asking for more than it was granted is refused at load with every missing power
//! named; the host never calls a hook the plugin's powers do not cover; an answer or an import
//! it has no power for is a denial that keeps nothing. Through real built components: the
//! hostile one, the probe (which asks for what its configuration's `powers` says), the legacy
//! one (built against the frozen 0.1.0 contract, which cannot ask), and the embedded ones.

use scratchpad_host::embedded::{self, DEFAULT_PLUGINS};
use scratchpad_host::{
    Error, Grants, Host, Observation, Origin, PluginFailure, PluginSpec, Power, ToolCall, embedded::EMBEDDED,
};
use scratchpad_tests::{Fixture, components, dump_state, scratchpad, turn};
use serde_json::json;

/// The probe, unsigned (built here), asking for `asks` and granted `granted`, with `config`.
fn probe(asks: &[Power], granted: &[Power], config: serde_json::Value) -> PluginSpec {
    let mut config = config;
    config["prefix"] = json!("probe");
    config["powers"] = json!(asks.iter().map(|p| p.name()).collect::<Vec<_>>());
    PluginSpec::file(components::PROBE_PATH).unsigned().granting(Grants::of(granted)).with_config(config)
}

/// Everything stored but the sessions' own rows (which count the turns that were entered) and
/// their event logs (see [`denial_logged`]).
fn plugin_data(fx: &Fixture) -> String {
    dump_state(&fx.database).lines().filter(|line| !line.starts_with("sessions:")).collect::<Vec<_>>().join("\n")
}

/// The denial just made is the last entry of session `s`'s event log.
async fn denial_logged(host: &Host) {
    let events = host.events("s").await.unwrap();
    assert_eq!(events.last().map(|e| e.kind.as_str()), Some("denied"), "{events:?}");
}

fn refusal(result: Result<Host, Error>) -> String {
    match result {
        Ok(_) => panic!("the plugin was loaded"),
        Err(Error::Load { message, .. }) => message,
        Err(other) => panic!("refused for another reason: {other}"),
    }
}

fn denied(result: Result<impl std::fmt::Debug, Error>) -> String {
    match result {
        Err(Error::Plugin { failure: PluginFailure::Denied { power }, .. }) => power,
        other => panic!("expected a denial, got {other:?}"),
    }
}

#[tokio::test]
async fn the_embedded_plugins_hold_the_grants_they_carry_which_are_what_they_ask_for() {
    let fx = Fixture::new();
    let specs = EMBEDDED.iter().map(|name| PluginSpec::embedded(name)).collect();
    let host = Host::open(fx.config(specs)).await.expect("the embedded plugins load with their own grants");
    for plugin in host.plugins() {
        let carried = embedded::grants(&plugin.name).names();
        assert!(!carried.is_empty(), "{} carries grants", plugin.name);
        assert_eq!(plugin.grants, carried, "{} holds its carried grants", plugin.name);
        assert_eq!(plugin.requested.as_ref(), Some(&carried), "{} asks for exactly them", plugin.name);
        assert_eq!(plugin.identity, format!("embedded:{}", plugin.name));
    }
    assert!(DEFAULT_PLUGINS.iter().all(|name| EMBEDDED.contains(name)));

    // An operator who grants an embedded plugin less than it asks for gets it refused.
    let less = PluginSpec::embedded("observations").granting(Grants::of(&[Power::Blobs, Power::Config, Power::Log]));
    let message = refusal(Host::open(fx.config(vec![less])).await);
    assert!(message.contains("`rewrite-tool-calls`") && message.contains("`read-tool-traffic`"), "{message}");
}

#[tokio::test]
async fn the_hostile_component_is_refused_without_grants_naming_every_missing_power_and_loads_with_them() {
    let fx = Fixture::new();
    let hostile = || PluginSpec::file(components::HOSTILE_PATH).unsigned();
    let message = refusal(Host::open(fx.config(vec![scratchpad(json!({})), hostile()])).await);
    assert!(message.contains("asks for 15 power(s) it was not granted"), "{message}");
    for power in Power::ALL {
        assert!(message.contains(&format!("`{power}`")), "{power} is listed: {message}");
    }
    assert!(message.contains("grants = [\"inject\", \"guidance\""), "the line that grants them: {message}");
    let host = Host::open(fx.config(vec![hostile().granting(Grants::ALL)])).await.expect("loads once granted");
    assert_eq!(host.plugins()[0].grants.len(), Power::ALL.len());
}

#[tokio::test]
async fn a_plugin_asking_to_rewrite_tool_calls_but_granted_only_inject_is_refused_at_load() {
    let fx = Fixture::new();
    let spec = probe(&[Power::Config, Power::RewriteToolCalls], &[Power::Config, Power::Inject], json!({}));
    let message = refusal(Host::open(fx.config(vec![spec])).await);
    assert!(message.contains("1 power(s) it was not granted: `rewrite-tool-calls`"), "{message}");
    assert!(message.contains("--grant NAME=inject,rewrite-tool-calls,config"), "{message}");
}

#[tokio::test]
async fn a_plugin_that_asks_for_nothing_is_not_called_for_others_tools_and_its_imports_are_denied() {
    let fx = Fixture::new();
    // It would echo (rewrite) every call it sees, and it asked for nothing but its configuration.
    let host = fx.open(vec![probe(&[Power::Config], &[Power::Config], json!({ "chainMode": "echo" }))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let before = plugin_data(&fx);

    // Another tool's traffic: the hook is not called, so the arguments run as given.
    let call = ToolCall { name: "bash".into(), arguments: r#"{"cmd":"ls"}"#.into(), step: 1 };
    assert_eq!(host.before_tool_call(&turn("s", "t1"), &call).await.unwrap(), call.arguments);
    let view = host.after_tool_result(&turn("s", "t1"), &call, &Observation::text("out")).await.unwrap();
    assert_eq!(view.replacement, None, "the result is not handed to it either");

    // Its own tool still runs, but storage is a power it did not ask for: denied, nothing kept.
    let power = denied(host.call_tool(&turn("s", "t1"), "probe.write", r#"{"key":"k","value":"v"}"#).await);
    assert_eq!(power, "storage");
    assert_eq!(plugin_data(&fx), before, "a denied call keeps nothing");
    denial_logged(&host).await;
}

#[tokio::test]
async fn an_answer_or_an_import_the_plugin_holds_no_power_for_is_denied_and_keeps_nothing() {
    let fx = Fixture::new();
    // Granted blocking of its own tools' calls, it rewrites them instead.
    let blocker = probe(
        &[Power::Config, Power::BlockToolCalls],
        &[Power::Config, Power::BlockToolCalls],
        json!({
            "chainMode": "echo"
        }),
    );
    let host = fx.open(vec![blocker]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let before = plugin_data(&fx);
    let own = ToolCall { name: "probe.read".into(), arguments: r#"{"key":"k"}"#.into(), step: 1 };
    assert_eq!(denied(host.before_tool_call(&turn("s", "t1"), &own).await), "rewrite-tool-calls");
    assert_eq!(plugin_data(&fx), before);
    denial_logged(&host).await;
    drop(host);

    // Reading every tool's results and replacing them, it stores copies in the blob store,
    // which it did not ask for.
    let fx = Fixture::new();
    let asks = [Power::Config, Power::ReadToolTraffic, Power::ReplaceToolResults];
    let host = fx.open(vec![probe(&asks, &asks, json!({ "resultMode": "hoard" }))]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let before = plugin_data(&fx);
    let call = ToolCall { name: "bash".into(), arguments: "{}".into(), step: 1 };
    let result = host.after_tool_result(&turn("s", "t1"), &call, &Observation::text("secret output")).await;
    assert_eq!(denied(result), "blobs");
    assert_eq!(plugin_data(&fx), before, "no copy was stored");
    denial_logged(&host).await;
    assert!(host.observations("s").await.unwrap().is_empty());
}

#[tokio::test]
async fn a_component_of_the_0_1_0_contract_loads_and_holds_exactly_what_its_configuration_grants() {
    let fx = Fixture::new();
    let legacy = |grants: &[Power]| PluginSpec::file(components::LEGACY_PATH).unsigned().granting(Grants::of(grants));

    // Nothing granted: it loads (it cannot ask), its tool works, its injection hook is not called.
    let host = fx.open(vec![legacy(&[])]).await;
    let listed = &host.plugins()[0];
    assert_eq!((listed.requested.clone(), listed.grants.len()), (None, 0), "{listed:?}");
    host.create_session("s", Origin::New).await.unwrap();
    assert_eq!(host.call_tool(&turn("s", "t1"), "legacy.echo", r#"{"a":1}"#).await.unwrap().content, r#"{"a":1}"#);
    assert!(host.before_query(&turn("s", "t1"), "hi").await.unwrap().injections.is_empty());
    drop(host);

    // Granted `inject` only: its hook runs, and its storage write is denied.
    let host = fx.open(vec![legacy(&[Power::Inject])]).await;
    let before = plugin_data(&fx);
    assert_eq!(denied(host.before_query(&turn("s", "t2"), "hi").await), "storage");
    assert_eq!(plugin_data(&fx), before);
    denial_logged(&host).await;
    drop(host);

    // Granted both: it works as it always did.
    let host = fx.open(vec![legacy(&[Power::Inject, Power::Storage])]).await;
    let prompt = host.before_query(&turn("s", "t3"), "hi").await.unwrap();
    assert_eq!(prompt.injections.iter().map(|i| i.text.as_str()).collect::<Vec<_>>(), ["[legacy] turn 1"]);
}
