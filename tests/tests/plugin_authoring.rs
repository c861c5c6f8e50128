//! The README's plugin-authoring example (`plugins/reminder`) works as documented: a
//! third-party component loads beside the scratchpad, its tool is routed to it, and its
//! injection is composed with the scratchpad's in plugin order.

use scratchpad_host::{Origin, Placement};
use scratchpad_tests::{Fixture, components, scratchpad, trusted, turn};
use serde_json::json;

#[tokio::test]
async fn the_readme_reminder_plugin_injects_beside_the_scratchpad() {
    let fx = Fixture::new();
    let host = fx.open(vec![scratchpad(json!({})), trusted(components::REMINDER_PATH)]).await;
    let names: Vec<_> = host.plugins().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["scratchpad", "reminder_plugin"]);

    host.create_session("s", Origin::New).await.unwrap();
    let t1 = turn("s", "t1");
    let set = host.call_tool(&t1, "reminder.set", r#"{"text":"run the tests"}"#).await.unwrap();
    assert_eq!((set.plugin.as_str(), set.content.as_str()), ("reminder_plugin", "Reminder set."));
    host.call_tool(&t1, "session.scratchpad", r#"{"action":"set_plan","content":"1. fix"}"#).await.unwrap();

    let prompt = host.before_query(&turn("s", "t2"), "go").await.unwrap();
    let context: Vec<_> = prompt.at(Placement::PrependContext).map(|i| i.plugin.as_str()).collect();
    assert_eq!(context, ["scratchpad", "reminder_plugin"], "injections follow plugin order");
    assert!(prompt.render("", "go").user.contains("[Reminder] run the tests"));
}
