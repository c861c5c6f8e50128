//! Embedding the scratchpad host in a Rust agent runtime, in the order a runtime calls it.
//!
//! Run with `cargo run -p scratchpad-host --example embed`; `host/tests/embed_example.rs` runs it
//! in the test suite, and the README shows an excerpt of it.

use std::path::Path;

use scratchpad_host::{Error, Host, HostConfig, Observation, Origin, RenderedPrompt, ToolCall, TurnContext};

#[tokio::main]
pub async fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let rendered = run(&dir.path().join("agent.db")).await?;
    println!("--- system ---\n{}\n--- user ---\n{}", rendered.system, rendered.user);
    Ok(())
}

/// A session of two turns over the database at `database`; returns the second turn's prompt.
pub async fn run(database: &Path) -> anyhow::Result<RenderedPrompt> {
    // The embedded first-party plugins, over a database of our own.
    let host = Host::open(HostConfig::with_database(database)).await?;

    // Session start: the guidance goes into the system prompt.
    let guidance = host.create_session("session-1", Origin::New).await?;
    println!("{} guidance injection(s) for the system prompt", guidance.len());

    // Turn 1: offer the plugins' tools to the model, then route its tool calls.
    let turn = TurnContext::new("session-1", "turn-1").with_tokens(12_000, 200_000);
    let tools = host.tools(&turn).await?;
    println!("tools for the model: {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>());

    let call = ToolCall::new("session.scratchpad", r#"{"action":"set_plan","content":"1. Fix X\n2. Test Y"}"#, 1);
    let arguments = host.before_tool_call(&turn, &call).await?; // plugins may rewrite arguments
    match host.call_tool(&turn, &call.name, &arguments).await {
        Ok(output) => println!("tool result: {}", output.content),
        Err(Error::Tool { error, .. }) => println!("tool refused: {error}"), // show it to the model
        Err(other) => return Err(other.into()),
    }
    // Results of the runtime's own tools pass through after-tool-result.
    let view = host.after_tool_result(&turn, &ToolCall::new("fs_read", "{}", 2), &Observation::text("ok")).await?;
    println!("observation replaced: {}", view.replacement.is_some());
    host.after_response(&turn, "I saved the plan.").await?;

    // Turn 2: the composed prompt around the user's untouched message.
    let message = "continue with step 2";
    let prompt = host.before_query(&TurnContext::new("session-1", "turn-2"), message).await?;
    let rendered = prompt.render("You are a coding agent.", message);
    Ok(rendered)
}
