//! The scratchpad extension: the `session.scratchpad` tool in its
//! `{content, mode}` form, its token budget counted with the host's real tokenizer
//! (cl100k_base), the data flow (write on turn N, prepended on N+1, still there after
//! compaction and after a host restart), the `before_session_create` guidance and
//! `enabled: false` — through the real host, the real component and a real database (each test on SQLite and on PostgreSQL).

use scratchpad_host::{Error, Host, Origin, Placement, ToolErrorKind};
use scratchpad_tests::{Fixture, dump, refusal, scratchpad, stored, turn};
use serde_json::{Value, json};

scratchpad_tests::on_both_backends!(
    replace_reports_the_tokens_used_of_the_budget,
    replace_over_the_budget_truncates_to_max_tokens_and_warns_with_the_original_count,
    append_over_the_budget_is_rejected_with_the_current_and_append_counts,
    append_within_the_budget_adds_to_the_existing_content,
    mode_defaults_to_replace,
    every_response_also_shows_the_token_usage,
    without_the_token_budget_the_same_messages_count_chars,
    malformed_arguments_are_invalid_naming_the_field_and_change_nothing,
    a_write_on_turn_n_is_prepended_to_the_message_of_turn_n_plus_1,
    the_users_message_is_never_changed_or_persisted_with_the_block,
    the_scratchpad_is_still_prepended_after_compaction,
    the_scratchpad_survives_a_host_restart_on_the_same_file,
    the_tool_is_registered_as_session_scratchpad_with_content_and_mode,
    guidance_is_appended_to_the_system_prompt_with_the_configured_budgets,
    when_disabled_there_is_no_tool_no_injection_and_no_guidance,
);

const TOOL: &str = "session.scratchpad";
const PLAN: &str = "## Plan\n1. Fix X\n2. Test Y";
const BLOCK: &str =
    "[Session Scratchpad - your persistent working memory]\n## Notes\n## Plan\n1. Fix X\n2. Test Y\n[End Scratchpad]";

/// The extension's configuration: `maxTokens: 2000`. The extension caps its single text by tokens only,
/// so the char limit of notes is raised out of the way.
fn extension_config() -> Value {
    json!({"tokenBudget": true, "maxTokens": 2000, "notesMaxChars": 20000})
}

async fn session(fx: &Fixture, config: Value) -> Host {
    let host = fx.open(vec![scratchpad(config)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    host
}

/// Calls the tool in turn `turn_id` with `content` and `mode`; the response's first line.
async fn write(host: &Host, turn_id: &str, content: &str, mode: &str) -> scratchpad_host::Result<String> {
    let args = json!({"content": content, "mode": mode}).to_string();
    let out = host.call_tool(&turn("s", turn_id), TOOL, &args).await?;
    Ok(out.content.lines().next().unwrap().to_owned())
}

/// `n` tokens of cl100k_base: `" x"` is one token.
fn tokens(n: usize) -> String {
    " x".repeat(n)
}

// ## Token budget enforcement

async fn replace_reports_the_tokens_used_of_the_budget(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    assert_eq!(host.count_tokens(PLAN), 12);
    assert_eq!(write(&host, "t1", PLAN, "replace").await.unwrap(), "Scratchpad updated (12 tokens / 2000 budget)");
}

async fn replace_over_the_budget_truncates_to_max_tokens_and_warns_with_the_original_count(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    let response = write(&host, "t1", &tokens(3200), "replace").await.unwrap();
    assert_eq!(response, "Scratchpad truncated to 2000 tokens (original: 3200). Consider summarizing.");
    assert_eq!(stored(&fx.database, "s", "notes"), Some(tokens(2000)));
}

async fn append_over_the_budget_is_rejected_with_the_current_and_append_counts(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    write(&host, "t1", &tokens(1800), "replace").await.unwrap();
    let before = dump(&fx.database, "s");

    let (kind, message) = refusal(write(&host, "t1", &tokens(500), "append").await);
    assert_eq!(kind, ToolErrorKind::Rejected);
    assert_eq!(
        message,
        "Append would exceed 2000 token budget (current: 1800, append: 500). Use mode 'replace' to rewrite, or \
         reduce content."
    );
    assert_eq!(dump(&fx.database, "s"), before, "the scratchpad is unchanged");
}

async fn append_within_the_budget_adds_to_the_existing_content(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    write(&host, "t1", PLAN, "replace").await.unwrap();
    let response = write(&host, "t1", "Finding: X is a tz bug", "append").await.unwrap();
    let expected = format!("{PLAN}\nFinding: X is a tz bug");
    assert_eq!(response, format!("Scratchpad updated ({} tokens / 2000 budget)", host.count_tokens(&expected)));
    assert_eq!(stored(&fx.database, "s", "notes"), Some(expected));
}

async fn mode_defaults_to_replace(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    write(&host, "t1", "old", "replace").await.unwrap();
    host.call_tool(&turn("s", "t1"), TOOL, &json!({"content": PLAN}).to_string()).await.unwrap();
    assert_eq!(stored(&fx.database, "s", "notes").as_deref(), Some(PLAN));
}

async fn every_response_also_shows_the_token_usage(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    let out = host.call_tool(&turn("s", "t1"), TOOL, &json!({"content": PLAN}).to_string()).await.unwrap();
    assert!(out.content.ends_with("Usage: notes 26/20000 chars, 12/2000 tokens; plan 0/2000 chars; refs 0/50 items"));
}

async fn without_the_token_budget_the_same_messages_count_chars(fx: Fixture) {
    let host = session(&fx, json!({})).await;
    assert_eq!(write(&host, "t1", PLAN, "replace").await.unwrap(), "Scratchpad updated (26 chars / 4000 budget)");
    let response = write(&host, "t1", &"a".repeat(4500), "replace").await.unwrap();
    assert_eq!(response, "Scratchpad truncated to 4000 chars (original: 4500). Consider summarizing.");
    write(&host, "t1", &"a".repeat(3900), "replace").await.unwrap();
    let (_, message) = refusal(write(&host, "t1", &"b".repeat(200), "append").await);
    assert_eq!(
        message,
        "Append would exceed 4000 char budget (current: 3900, append: 200). Use mode 'replace' to rewrite, or reduce \
         content."
    );
}

async fn malformed_arguments_are_invalid_naming_the_field_and_change_nothing(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    write(&host, "t1", PLAN, "replace").await.unwrap();
    let before = dump(&fx.database, "s");
    for (args, field) in [
        (r#"{"content": "x", "mode": "overwrite"}"#, "`mode` must be \"replace\" or \"append\""),
        (r#"{"content": "x", "mode": 1}"#, "`mode` must be a string"),
        (r#"{"content": 42}"#, "`content` must be a string"),
        (r#"{"content": "", "mode": "append"}"#, "`content` must not be empty"),
        (r#"{"mode": "append"}"#, "`action` is required"),
        ("content=x", "not valid JSON"),
    ] {
        let (kind, message) = refusal(host.call_tool(&turn("s", "t1"), TOOL, args).await);
        assert_eq!(kind, ToolErrorKind::InvalidArguments, "{args}");
        assert!(message.contains(field), "{args}: {message}");
    }
    assert_eq!(dump(&fx.database, "s"), before);
}

// ## Data flow

async fn a_write_on_turn_n_is_prepended_to_the_message_of_turn_n_plus_1(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    write(&host, "turn-n", PLAN, "replace").await.unwrap();

    let prompt = host.before_query(&turn("s", "turn-n+1"), "continue with step 2").await.unwrap();
    let injected: Vec<_> = prompt.at(Placement::PrependContext).collect();
    assert_eq!(injected.len(), 1);
    assert_eq!((injected[0].plugin.as_str(), injected[0].text.as_str()), ("scratchpad", BLOCK));
    assert_eq!(prompt.render("", "continue with step 2").user, format!("{BLOCK}\n\ncontinue with step 2"));
}

async fn the_users_message_is_never_changed_or_persisted_with_the_block(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    write(&host, "t1", PLAN, "replace").await.unwrap();
    let message = "continue with step 2";
    let prompt = host.before_query(&turn("s", "t2"), message).await.unwrap();

    assert!(prompt.injections.iter().all(|i| !i.text.contains(message)), "an injection, not a rewrite");
    let stored = dump(&fx.database, "s");
    assert!(stored.iter().all(|(_, _, v)| !String::from_utf8_lossy(v).contains(message)), "{stored:?}");
    assert_eq!(prompt.render("", message).user.strip_suffix(message).unwrap(), format!("{BLOCK}\n\n"));
}

async fn the_scratchpad_is_still_prepended_after_compaction(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    write(&host, "t1", PLAN, "replace").await.unwrap();
    for i in 2..=7 {
        host.before_query(&turn("s", &format!("t{i}")), "working").await.unwrap();
    }
    host.before_compaction(&turn("s", "t7")).await.unwrap();
    host.after_compaction(&turn("s", "t7")).await.unwrap();

    let prompt = host.before_query(&turn("s", "t8"), "what's next?").await.unwrap();
    assert_eq!(prompt.text(Placement::PrependContext), BLOCK);
    assert_eq!(host.session("s").await.unwrap().compaction_count, 1);
}

async fn the_scratchpad_survives_a_host_restart_on_the_same_file(fx: Fixture) {
    {
        let host = session(&fx, extension_config()).await;
        write(&host, "t1", PLAN, "replace").await.unwrap();
    }
    let host = fx.open(vec![scratchpad(extension_config())]).await;
    let prompt = host.before_query(&turn("s", "t2"), "continue with step 2").await.unwrap();
    assert_eq!(prompt.text(Placement::PrependContext), BLOCK);
    // The budget holds across the restart: the resumed text counts against it.
    let appended = write(&host, "t2", &tokens(1990), "append").await;
    assert!(refusal(appended).1.contains("(current: 12, append: 1990)"));
}

// ## Tool definition, guidance, enabled

async fn the_tool_is_registered_as_session_scratchpad_with_content_and_mode(fx: Fixture) {
    let host = session(&fx, extension_config()).await;
    let tools = host.tools(&turn("s", "t1")).await.unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), [TOOL]);
    let tool = &tools[0];
    assert!(tool.description.starts_with("Persist important working state (plans, findings, decisions) that survives"));
    assert!(tool.description.contains("Content is prepended to each message you receive."), "{}", tool.description);
    let parameters: Value = serde_json::from_str(&tool.parameters).unwrap();
    assert_eq!(parameters["properties"]["content"]["type"], "string");
    assert_eq!(parameters["properties"]["mode"]["enum"], json!(["replace", "append"]));
    assert_eq!(parameters["properties"]["mode"]["default"], "replace");
}

async fn guidance_is_appended_to_the_system_prompt_with_the_configured_budgets(fx: Fixture) {
    let host = fx
        .open(vec![scratchpad(json!({"tokenBudget": true, "maxTokens": 1500, "notesMaxChars": 6000,
        "planMaxChars": 1000, "refsMaxItems": 20}))])
        .await;
    let guidance = host.create_session("s", Origin::New).await.unwrap();
    assert_eq!(guidance.len(), 1);
    assert_eq!(guidance[0].placement, Placement::AppendSystem);
    let text = &guidance[0].text;
    assert!(
        text.starts_with(
            "## Session Scratchpad\nYou have a persistent scratchpad tool (session.scratchpad) that survives context \
             compaction.\nUse it to save: multi-step plans, key findings, important decisions, accumulated state.\n\
             The scratchpad is prepended to each message you receive. Budget: notes 6000 chars (~1500 tokens), plan \
             1000 chars, refs 20 items.\n"
        ),
        "{text}"
    );
    // Standing guidance: in every turn's system prompt, after the runtime's own.
    for t in ["t1", "t2"] {
        let system =
            host.before_query(&turn("s", t), "hi").await.unwrap().render("You are a coding agent.", "hi").system;
        assert_eq!(system, format!("You are a coding agent.\n\n{text}"));
    }
}

async fn when_disabled_there_is_no_tool_no_injection_and_no_guidance(fx: Fixture) {
    {
        let host = session(&fx, extension_config()).await;
        write(&host, "t1", PLAN, "replace").await.unwrap();
    }
    let host = fx.open(vec![scratchpad(json!({"enabled": false, "maxTokens": 2000}))]).await;
    assert!(host.create_session("other", Origin::New).await.unwrap().is_empty(), "no guidance");
    let t = turn("other", "t1");
    assert!(host.tools(&t).await.unwrap().is_empty(), "no tools");
    let call = host.call_tool(&t, TOOL, r#"{"content":"x"}"#).await;
    assert!(matches!(&call, Err(Error::UnknownTool(name)) if name == TOOL), "{call:?}");
    assert!(host.before_query(&t, "hi").await.unwrap().injections.is_empty(), "no injection");
    assert!(host.before_compaction(&t).await.unwrap().is_empty(), "no compaction warning");
    let read = host.notepad("other").read().await;
    assert!(matches!(&read, Err(Error::UnknownTool(_))), "the sandbox API goes through the same tools: {read:?}");

    // What was written while enabled stays stored, but is not injected.
    let prompt = host.before_query(&turn("s", "t2"), "continue with step 2").await.unwrap();
    assert_eq!(prompt.at(Placement::PrependContext).count(), 0, "{prompt:?}");
    assert_eq!(stored(&fx.database, "s", "notes").as_deref(), Some(PLAN));
}
