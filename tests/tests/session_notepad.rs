//! The session notepad: the `read_notepad` / `write_notepad` / `update_notepad`
//! meta-tools, the `## Session Notepad` section of the system prompt with its empty-state hint,
//! the system-prompt instruction, the pre-compaction warning, sub-sessions and forks, and the
//! sandbox API for code outside the model — through the real host, the real component and a
//! real database (each test on SQLite and on PostgreSQL).

use scratchpad_host::{Error, Host, Origin, Placement, SANDBOX_TURN_ID, ToolErrorKind};
use scratchpad_tests::{Fixture, dump, refusal, scratchpad, stored, turn};
use serde_json::{Value, json};

scratchpad_tests::on_both_backends!(
    read_notepad_returns_an_empty_string_before_anything_is_written,
    write_notepad_replaces_everything_and_an_empty_write_clears_it,
    find_replace_marks_a_todo_done_replacing_the_first_occurrence_unless_replace_all,
    append_and_prepend_add_a_line_at_either_end,
    delete_removes_the_given_text,
    edits_of_text_that_is_not_there_are_not_found_and_change_nothing,
    edits_past_the_budget_are_rejected_and_change_nothing_while_a_long_write_is_truncated,
    after_the_limit_is_lowered_edits_that_shrink_the_notepad_are_still_accepted,
    malformed_arguments_are_invalid_naming_the_field_and_change_nothing,
    the_three_meta_tools_are_offered_with_their_specified_parameters,
    an_empty_notepad_shows_the_hint_which_disappears_once_something_is_written,
    the_notepad_is_appended_to_the_system_prompt_after_the_instruction_every_turn,
    before_compaction_asks_for_one_warning_turn_and_the_notepad_is_kept_in_full_after,
    spawn_session_starts_with_an_empty_notepad_unless_copy_notepad,
    fork_session_always_copies_the_notepad,
    after_creation_a_childs_edits_never_reach_its_parent,
    after_creation_a_parents_edits_never_reach_its_children,
    agent_authored_code_reads_writes_and_appends_the_notepad_the_model_sees,
    a_sandbox_append_past_the_budget_is_refused_with_the_limit_and_changes_nothing,
    the_sandbox_api_works_when_the_model_is_offered_only_session_scratchpad,
    sandbox_calls_belong_to_the_current_turn_and_never_count_as_a_turn,
    the_sandbox_api_names_a_missing_session,
);

const HEADING: &str = "## Session Notepad";
const EMPTY_HINT: &str = "(empty — use write_notepad or update_notepad to save working notes, findings, and task \
                          progress; content here survives context compaction)";
const TODO: &str = "## Plan\n- [x] Survey all sheets\n- [ ] Fix Q3 total formulas in Summary\n- [ ] Add conditional \
                    formatting";

/// The notepad's setup: the notepad tools, the notepad in the system prompt.
fn notepad_config() -> Value {
    json!({"surfaces": ["notepad"], "placement": "append-system"})
}

async fn session(fx: &Fixture, config: Value) -> Host {
    let host = fx.open(vec![scratchpad(config)]).await;
    host.create_session("s", Origin::New).await.unwrap();
    host
}

/// Calls a notepad tool on `session` in turn `t1`; its JSON output.
async fn tool(host: &Host, session: &str, name: &str, args: Value) -> scratchpad_host::Result<Value> {
    let out = host.call_tool(&turn(session, "t1"), name, &args.to_string()).await?;
    Ok(serde_json::from_str(&out.content).unwrap())
}

async fn read(host: &Host, session: &str) -> String {
    let out = tool(host, session, "read_notepad", json!({})).await.unwrap();
    out["content"].as_str().unwrap().to_owned()
}

async fn update(host: &Host, args: Value) -> scratchpad_host::Result<Value> {
    tool(host, "s", "update_notepad", args).await
}

/// The `## Session Notepad` section of `session`'s system prompt in turn `turn_id`.
async fn section(host: &Host, session: &str, turn_id: &str) -> String {
    let prompt = host.before_query(&turn(session, turn_id), "go").await.unwrap();
    let mut sections = prompt.at(Placement::AppendSystem).filter(|i| i.text.starts_with(HEADING));
    sections.next().expect("a notepad section").text.clone()
}

// ## Meta-tools

async fn read_notepad_returns_an_empty_string_before_anything_is_written(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    let empty = json!({"content": "", "usage": "notepad 0/4000 chars"});
    assert_eq!(tool(&host, "s", "read_notepad", json!({})).await.unwrap(), empty);
}

async fn write_notepad_replaces_everything_and_an_empty_write_clears_it(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    tool(&host, "s", "write_notepad", json!({"content": "scratch"})).await.unwrap();
    let out = tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();
    assert_eq!(out, json!({"ok": true, "usage": format!("notepad {}/4000 chars", TODO.chars().count())}));
    assert_eq!(read(&host, "s").await, TODO);

    tool(&host, "s", "write_notepad", json!({"content": ""})).await.unwrap();
    assert_eq!(read(&host, "s").await, "");
    assert_eq!(stored(&fx.database, "s", "notes"), None);
}

async fn find_replace_marks_a_todo_done_replacing_the_first_occurrence_unless_replace_all(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();
    let out = update(&host, json!({"operation": "find_replace", "find": "- [ ]", "replace": "- [x]"})).await.unwrap();
    assert_eq!(out["replaced"], 1);
    assert_eq!(read(&host, "s").await, TODO.replacen("- [ ]", "- [x]", 1));

    let all = json!({"operation": "find_replace", "find": "- [x]", "replace": "- [ ]", "replace_all": true});
    assert_eq!(update(&host, all).await.unwrap()["replaced"], 2);
    assert_eq!(read(&host, "s").await, TODO.replace("- [x]", "- [ ]"));
}

async fn append_and_prepend_add_a_line_at_either_end(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    update(&host, json!({"operation": "append", "content": "## Findings"})).await.unwrap();
    update(&host, json!({"operation": "append", "content": "- Q3 gap traced to EMEA"})).await.unwrap();
    update(&host, json!({"operation": "prepend", "content": "## Delegated\n- sub_abc: revenue"})).await.unwrap();
    assert_eq!(read(&host, "s").await, "## Delegated\n- sub_abc: revenue\n## Findings\n- Q3 gap traced to EMEA");
}

async fn delete_removes_the_given_text(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    tool(&host, "s", "write_notepad", json!({"content": "keep\nobsolete note\nkeep too"})).await.unwrap();
    let out = update(&host, json!({"operation": "delete", "content": "obsolete note\n"})).await.unwrap();
    assert_eq!(out["ok"], true);
    assert_eq!(read(&host, "s").await, "keep\nkeep too");
}

async fn edits_of_text_that_is_not_there_are_not_found_and_change_nothing(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();
    let before = dump(&fx.database, "s");
    for args in [
        json!({"operation": "find_replace", "find": "- [ ] Create YoY sheet", "replace": "- [x] Create YoY sheet"}),
        json!({"operation": "find_replace", "find": "survey", "replace": "x", "replace_all": true}),
        json!({"operation": "delete", "content": "## Decisions"}),
    ] {
        assert_eq!(refusal(update(&host, args).await).0, ToolErrorKind::NotFound);
    }
    assert_eq!(dump(&fx.database, "s"), before, "byte for byte");
}

async fn edits_past_the_budget_are_rejected_and_change_nothing_while_a_long_write_is_truncated(fx: Fixture) {
    let host = session(&fx, json!({"surfaces": ["notepad"], "notesMaxChars": 20})).await;
    tool(&host, "s", "write_notepad", json!({"content": "0123456789"})).await.unwrap();
    let before = dump(&fx.database, "s");
    for args in [
        json!({"operation": "append", "content": "abcdefghij"}),
        json!({"operation": "prepend", "content": "abcdefghij"}),
        json!({"operation": "find_replace", "find": "5", "replace": "five-five-five"}),
    ] {
        let (kind, message) = refusal(update(&host, args).await);
        assert_eq!(kind, ToolErrorKind::Rejected);
        assert!(message.contains("notepad unchanged") && message.contains("20 char budget"), "{message}");
    }
    assert_eq!(dump(&fx.database, "s"), before);

    let out = tool(&host, "s", "write_notepad", json!({"content": "ü".repeat(25)})).await.unwrap();
    assert_eq!(out["warning"], "Notepad truncated to 20 chars (original: 25). Consider summarizing.");
    assert_eq!(read(&host, "s").await, "ü".repeat(20));
}

async fn after_the_limit_is_lowered_edits_that_shrink_the_notepad_are_still_accepted(fx: Fixture) {
    session(&fx, notepad_config()).await.notepad("s").write(TODO).await.unwrap();
    let host = fx.open(vec![scratchpad(json!({"surfaces": ["notepad"], "notesMaxChars": 40}))]).await;
    update(&host, json!({"operation": "delete", "content": "\n- [ ] Add conditional formatting"})).await.unwrap();
    update(&host, json!({"operation": "find_replace", "find": "[ ]", "replace": "[x]"})).await.unwrap();
    let grow = update(&host, json!({"operation": "append", "content": "- more"})).await;
    assert!(refusal(grow).1.contains("40 char budget"));
    assert_eq!(read(&host, "s").await, "## Plan\n- [x] Survey all sheets\n- [x] Fix Q3 total formulas in Summary");
}

async fn malformed_arguments_are_invalid_naming_the_field_and_change_nothing(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();
    let before = dump(&fx.database, "s");
    let cases = [
        ("write_notepad", "{}", "`content` is required"),
        ("write_notepad", r#"{"content": null}"#, "`content` must be a string"),
        ("update_notepad", "{}", "`operation` is required"),
        ("update_notepad", r#"{"operation": "rewrite"}"#, "`operation` must be one of"),
        ("update_notepad", r#"{"operation": "find_replace", "replace": "x"}"#, "`find` is required"),
        ("update_notepad", r#"{"operation": "find_replace", "find": "Plan"}"#, "`replace` is required"),
        ("update_notepad", r#"{"operation": "find_replace", "find": "", "replace": "x"}"#, "`find` must not be"),
        (
            "update_notepad",
            r#"{"operation":"find_replace","find":"a","replace":"b","replace_all":"yes"}"#,
            "`replace_all`",
        ),
        ("update_notepad", r#"{"operation": "append", "content": 5}"#, "`content` must be a string"),
        ("update_notepad", r#"{"operation": "delete", "content": ""}"#, "`content` must not be empty"),
        ("read_notepad", "[]", "JSON object"),
        ("update_notepad", "{operation: append}", "not valid JSON"),
    ];
    for (name, args, expected) in cases {
        let (kind, message) = refusal(host.call_tool(&turn("s", "t1"), name, args).await);
        assert_eq!(kind, ToolErrorKind::InvalidArguments, "{name} {args}");
        assert!(message.contains(expected), "{name} {args}: {message}");
    }
    assert_eq!(dump(&fx.database, "s"), before);
}

async fn the_three_meta_tools_are_offered_with_their_specified_parameters(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    let tools = host.tools(&turn("s", "t1")).await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read_notepad", "write_notepad", "update_notepad"]);
    let schema = |i: usize| serde_json::from_str::<Value>(&tools[i].parameters).unwrap();
    assert_eq!(schema(0)["properties"], json!({}));
    assert_eq!(schema(1)["required"], json!(["content"]));
    assert_eq!(schema(2)["required"], json!(["operation"]));
    assert_eq!(schema(2)["properties"]["operation"]["enum"], json!(["find_replace", "append", "prepend", "delete"]));
    assert_eq!(schema(2)["properties"]["replace_all"]["type"], "boolean");
}

// ## How it appears in context

async fn an_empty_notepad_shows_the_hint_which_disappears_once_something_is_written(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    assert_eq!(section(&host, "s", "t1").await, format!("{HEADING}\n{EMPTY_HINT}"));
    tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();
    assert_eq!(section(&host, "s", "t2").await, format!("{HEADING}\n{TODO}"));
}

async fn the_notepad_is_appended_to_the_system_prompt_after_the_instruction_every_turn(fx: Fixture) {
    let host = fx.open(vec![scratchpad(notepad_config())]).await;
    let guidance = host.create_session("s", Origin::New).await.unwrap();
    assert_eq!(guidance.len(), 1);
    let instruction = &guidance[0].text;
    assert!(
        instruction.starts_with(
            "For multi-step or complex tasks, use the session notepad to track your plan and record findings as you \
             work. The notepad survives context compaction — conversation details may be summarized, but the \
             notepad is preserved in full. Update it after significant findings or completed steps."
        ),
        "{instruction}"
    );
    assert!(instruction.contains("Budget: 4000 chars."), "{instruction}");

    tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();
    for t in ["t2", "t3"] {
        let rendered = host.before_query(&turn("s", t), "go").await.unwrap().render("You are an analyst.", "go");
        assert_eq!(rendered.system, format!("You are an analyst.\n\n{instruction}\n\n{HEADING}\n{TODO}"));
        assert_eq!(rendered.user, "go", "nothing is added to the message");
    }
}

// ## Pre-compaction warning

async fn before_compaction_asks_for_one_warning_turn_and_the_notepad_is_kept_in_full_after(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();

    let near_limit = turn("s", "t9").with_tokens(180_000, 200_000);
    let warnings = host.before_compaction(&near_limit).await.unwrap();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].plugin, "scratchpad");
    assert_eq!(
        warnings[0].text,
        "[System] Context is approaching the token limit and will be compacted after your next response. Review \
         your session notepad and update it with any working state, findings, or progress you need to preserve. \
         Conversation details may be summarized during compaction, but the notepad is kept in full."
    );
    // The warning turn: the agent updates the notepad, then the runtime compacts.
    update(&host, json!({"operation": "append", "content": "- Q3 gap: EMEA rows 234-267"})).await.unwrap();
    host.after_compaction(&near_limit).await.unwrap();
    let expected = format!("{HEADING}\n{TODO}\n- Q3 gap: EMEA rows 234-267");
    assert_eq!(section(&host, "s", "t10").await, expected);
}

// ## Sub-sessions and forks

async fn parent_with_notepad(fx: &Fixture) -> Host {
    let host = session(fx, notepad_config()).await;
    tool(&host, "s", "write_notepad", json!({"content": TODO})).await.unwrap();
    host
}

async fn spawn_session_starts_with_an_empty_notepad_unless_copy_notepad(fx: Fixture) {
    let host = parent_with_notepad(&fx).await;
    host.create_session("sub_abc", Origin::Spawn { parent: "s".into(), copy: false }).await.unwrap();
    host.create_session("sub_def", Origin::Spawn { parent: "s".into(), copy: true }).await.unwrap();

    assert_eq!(read(&host, "sub_abc").await, "");
    assert_eq!(section(&host, "sub_abc", "t1").await, format!("{HEADING}\n{EMPTY_HINT}"));
    assert_eq!(read(&host, "sub_def").await, TODO);
}

async fn fork_session_always_copies_the_notepad(fx: Fixture) {
    let host = parent_with_notepad(&fx).await;
    host.create_session("fork", Origin::Fork { parent: "s".into() }).await.unwrap();
    assert_eq!(read(&host, "fork").await, TODO);
    assert_eq!(section(&host, "fork", "t1").await, format!("{HEADING}\n{TODO}"));
}

async fn after_creation_a_childs_edits_never_reach_its_parent(fx: Fixture) {
    let host = parent_with_notepad(&fx).await;
    host.create_session("fork", Origin::Fork { parent: "s".into() }).await.unwrap();
    host.create_session("copy", Origin::Spawn { parent: "s".into(), copy: true }).await.unwrap();
    let parent_before = dump(&fx.database, "s");

    tool(&host, "fork", "write_notepad", json!({"content": "fork's own"})).await.unwrap();
    tool(&host, "copy", "update_notepad", json!({"operation": "append", "content": "copy's own"})).await.unwrap();
    assert_eq!(read(&host, "s").await, TODO);
    assert_eq!(dump(&fx.database, "s"), parent_before);
}

async fn after_creation_a_parents_edits_never_reach_its_children(fx: Fixture) {
    let host = parent_with_notepad(&fx).await;
    host.create_session("fork", Origin::Fork { parent: "s".into() }).await.unwrap();
    host.create_session("copy", Origin::Spawn { parent: "s".into(), copy: true }).await.unwrap();
    host.create_session("empty", Origin::Spawn { parent: "s".into(), copy: false }).await.unwrap();

    let delegated = "## Delegated\n- fork: analysing revenue sheets";
    update(&host, json!({"operation": "prepend", "content": delegated})).await.unwrap();
    assert_eq!(read(&host, "fork").await, TODO);
    assert_eq!(read(&host, "copy").await, TODO);
    assert_eq!(read(&host, "empty").await, "");
}

// ## Sandbox API: code outside the model (agent-authored tools) goes through the component

async fn agent_authored_code_reads_writes_and_appends_the_notepad_the_model_sees(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    let notepad = host.notepad("s");
    assert_eq!(notepad.read().await.unwrap(), "");
    let written = notepad.write("## Progress").await.unwrap();
    assert_eq!((written.usage.as_str(), written.warning), ("notepad 11/4000 chars", None));
    notepad.append("- sheet 1 of 6 done").await.unwrap();
    let appended = notepad.append("- sheet 2 of 6 done").await.unwrap();
    assert_eq!(appended.usage, "notepad 51/4000 chars");

    let expected = "## Progress\n- sheet 1 of 6 done\n- sheet 2 of 6 done";
    assert_eq!(notepad.read().await.unwrap(), expected);
    assert_eq!(read(&host, "s").await, expected, "the model's read_notepad sees the same notepad");
    assert_eq!(section(&host, "s", "t2").await, format!("{HEADING}\n{expected}"));
}

async fn a_sandbox_append_past_the_budget_is_refused_with_the_limit_and_changes_nothing(fx: Fixture) {
    let host = session(&fx, json!({"surfaces": ["notepad"], "notesMaxChars": 30})).await;
    let notepad = host.notepad("s");
    notepad.write(&"x".repeat(25)).await.unwrap();
    let before = dump(&fx.database, "s");

    let (kind, message) = refusal(notepad.append("progress: 50%").await);
    assert_eq!(kind, ToolErrorKind::Rejected);
    assert!(message.contains("30 char budget") && message.contains("(current: 25, adding: 13)"), "{message}");
    assert_eq!(dump(&fx.database, "s"), before);

    // A write past the budget is truncated, as for the model, and says so.
    let written = notepad.write(&"y".repeat(31)).await.unwrap();
    assert_eq!(written.warning.as_deref(), Some("Notepad truncated to 30 chars (original: 31). Consider summarizing."));
    assert_eq!(notepad.read().await.unwrap(), "y".repeat(30));
}

async fn the_sandbox_api_works_when_the_model_is_offered_only_session_scratchpad(fx: Fixture) {
    let host = session(&fx, json!({"tokenBudget": true, "maxTokens": 10})).await;
    let tools = host.tools(&turn("s", "t1")).await.unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["session.scratchpad"]);
    let set = json!({"action": "set_notes", "content": "root cause: tz"}).to_string();
    host.call_tool(&turn("s", "t1"), "session.scratchpad", &set).await.unwrap();

    let notepad = host.notepad("s");
    assert_eq!(notepad.read().await.unwrap(), "root cause: tz", "the notepad is the notes space");
    let (kind, message) = refusal(notepad.append(&" x".repeat(8)).await);
    assert_eq!(kind, ToolErrorKind::Rejected);
    assert!(message.contains("10 token budget"), "the token budget holds too: {message}");
}

async fn sandbox_calls_belong_to_the_current_turn_and_never_count_as_a_turn(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    let notepad = host.notepad("s");
    let at = |record: scratchpad_host::SessionRecord| (record.turn_id.unwrap(), record.turn_index);

    notepad.append("set up before the first turn").await.unwrap();
    assert_eq!(at(host.session("s").await.unwrap()), (SANDBOX_TURN_ID.to_owned(), 0), "a turn of its own");
    host.before_query(&turn("s", "t1"), "go").await.unwrap();
    notepad.append("progress from an agent-authored tool").await.unwrap();
    assert_eq!(at(host.session("s").await.unwrap()), ("t1".to_owned(), 1), "still the runtime's turn");

    host.notepad("s").in_turn(&turn("s", "t2")).append("in a named turn").await.unwrap();
    assert_eq!(at(host.session("s").await.unwrap()), ("t2".to_owned(), 2));
}

async fn the_sandbox_api_names_a_missing_session(fx: Fixture) {
    let host = session(&fx, notepad_config()).await;
    let read = host.notepad("nope").read().await;
    assert!(matches!(&read, Err(Error::SessionNotFound(id)) if id == "nope"), "{read:?}");
}
