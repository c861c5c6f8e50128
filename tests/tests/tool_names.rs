//! Tool names as model APIs accept them, decided once in the host (`scratchpad_host::ToolNames`):
//! the shared vectors (`tests/embed/vectors/tool_names.json`, also replayed by the Python wheel's
//! and the Node package's tests) answered by the Rust functions, and the host around them —
//! two plugins whose tools share an API name refused at load naming both, every tool listed with
//! its API name, and a tool called by its API name.

use scratchpad_host::{Error, Host, Origin, ToolNameError, ToolNames, api_tool_name};
use scratchpad_tests::{Fixture, probe, runtimes, scratchpad, turn};
use serde_json::{Value, json};

fn vectors() -> Value {
    let path = runtimes::root().join("tests/embed/vectors/tool_names.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).expect("the tool-name vectors are JSON")
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().expect("an array").iter().map(|v| v.as_str().expect("a string")).collect()
}

#[test]
fn every_api_name_vector_is_answered_exactly() {
    for case in vectors()["api_names"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        match (case.get("api_name"), case.get("error")) {
            (Some(expected), None) => {
                assert_eq!(api_tool_name(name).as_deref(), Ok(expected.as_str().unwrap()), "the API name of {name:?}")
            }
            (None, Some(error)) => {
                assert_eq!(error, "empty", "the vectors know one error of a single name");
                assert_eq!(api_tool_name(name), Err(ToolNameError::Empty), "{name:?}");
            }
            _ => panic!("a case has `api_name` or `error`: {case}"),
        }
    }
}

#[test]
fn every_tool_set_vector_is_answered_exactly() {
    let sets = vectors()["sets"].as_array().unwrap().clone();
    assert!(sets.len() >= 6, "the vectors cover prefixes, collisions and the empty name");
    for case in sets {
        let tools = strings(&case["tools"]);
        let result = ToolNames::new(tools.iter().copied(), case["prefix"].as_str().unwrap());
        match case.get("error").and_then(Value::as_str) {
            Some("collision") => {
                let error = result.expect_err("two tools with one API name are refused");
                let message = error.to_string();
                assert!(matches!(error, ToolNameError::Collision { .. }), "{message}");
                for name in strings(&case["naming"]) {
                    assert!(message.contains(&format!("`{name}`")), "the error names `{name}`: {message}");
                }
            }
            Some("empty") => assert_eq!(result, Err(ToolNameError::Empty), "{case}"),
            Some(other) => panic!("an error the vectors do not define: {other}"),
            None => {
                let names = result.unwrap_or_else(|e| panic!("{case}: {e}"));
                let expected = case["names"].as_object().unwrap();
                assert_eq!(names.iter().count(), expected.len(), "{case}");
                for (tool, seen) in expected {
                    let seen = seen.as_str().unwrap();
                    assert_eq!(names.model_name(tool), Some(seen), "{case}");
                    assert_eq!(names.tool(seen), Some(tool.as_str()), "{case}");
                }
                for text in case["texts"].as_array().unwrap() {
                    let (input, output) = (text["in"].as_str().unwrap(), text["out"].as_str().unwrap());
                    assert_eq!(names.rewrite(input), output, "rewriting {input:?} with {tools:?}");
                }
            }
        }
    }
}

scratchpad_tests::on_both_backends!(
    two_plugins_whose_tools_share_an_api_name_are_refused_at_load_naming_both,
    tools_are_listed_with_their_api_names_and_called_by_either_name,
);

async fn two_plugins_whose_tools_share_an_api_name_are_refused_at_load_naming_both(fx: Fixture) {
    let clash = probe("intruder", "x").with_config(json!({ "prefix": "x", "extraTools": ["session_scratchpad"] }));
    let error = Host::open(fx.config(vec![scratchpad(json!({})), clash])).await.err().expect("refused");
    let message = error.to_string();
    assert!(matches!(error, Error::Load { ref plugin, .. } if plugin == "intruder"), "{message}");
    assert!(message.contains("`session.scratchpad`") && message.contains("`session_scratchpad`"), "{message}");
    assert!(message.contains("plugin `scratchpad`"), "the error names the other plugin: {message}");
}

async fn tools_are_listed_with_their_api_names_and_called_by_either_name(fx: Fixture) {
    let host = fx.open(vec![scratchpad(json!({})), probe("probe", "p")]).await;
    host.create_session("s", Origin::New).await.unwrap();
    let listed = host.tools(&turn("s", "t1")).await.unwrap();
    let pad = listed.iter().find(|t| t.name == "session.scratchpad").expect("the scratchpad's tool is listed");
    assert_eq!(pad.api_name, "session_scratchpad");
    let declared = host.plugins().into_iter().flat_map(|p| p.tools).find(|t| t.name == "p.count").unwrap();
    assert_eq!(declared.api_name, "p_count", "declared tools carry their API names too");

    let plan = r#"{"action":"set_plan","content":"1. call by the API name"}"#;
    host.call_tool(&turn("s", "t1"), "session_scratchpad", plan).await.expect("the API name is the tool's");
    let prompt = host.before_query(&turn("s", "t2"), "go").await.unwrap();
    assert!(prompt.render("", "go").user.contains("1. call by the API name"), "{prompt:?}");

    let missing = host.call_tool(&turn("s", "t2"), "session_scratchpad2", "{}").await;
    assert!(
        matches!(missing, Err(Error::UnknownTool(name)) if name == "session_scratchpad2"),
        "unknown names stay unknown"
    );

    let names = host.tool_names("mcp__x__");
    assert_eq!(names.model_name("session.scratchpad"), Some("mcp__x__session_scratchpad"));
    assert_eq!(names.rewrite("Use session.scratchpad."), "Use mcp__x__session_scratchpad.");
}
