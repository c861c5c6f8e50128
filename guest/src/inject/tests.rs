//! The block of the session scratchpad and the scratchpad extension, the section of the session notepad, guidance and the compaction warning.

use scratchpad_plugin_sdk::Placement;

use super::*;

fn spaces(notes: &str, plan: &str, refs: &[&str]) -> Spaces {
    Spaces { notes: notes.into(), plan: plan.into(), refs: refs.iter().map(|r| r.to_string()).collect() }
}

fn config(json: &str) -> Config {
    Config::from_json(json).unwrap()
}

#[test]
fn nothing_is_injected_in_context_when_every_space_is_empty() {
    assert_eq!(render(&Spaces::default(), &Config::default()), None);
    assert_eq!(render(&Spaces::default(), &config(r#"{"placement": "append-context"}"#)), None);
}

#[test]
fn the_context_block_holds_every_non_empty_space_under_its_heading() {
    let text = render(&spaces("Root cause: tz", "1. Fix X\n2. Test Y", &["a.rs", "https://x/1"]), &Config::default());
    assert_eq!(
        text.unwrap(),
        "[Session Scratchpad - your persistent working memory]\n## Notes\nRoot cause: tz\n## Plan\n1. Fix X\n\
         2. Test Y\n## Refs\n- a.rs\n- https://x/1\n[End Scratchpad]"
    );
}

#[test]
fn the_context_block_leaves_out_empty_spaces() {
    let text = render(&spaces("", "1. Fix X", &[]), &Config::default()).unwrap();
    assert_eq!(text, "[Session Scratchpad - your persistent working memory]\n## Plan\n1. Fix X\n[End Scratchpad]");
}

#[test]
fn the_system_section_shows_003s_empty_state_hint_when_empty() {
    let c = config(r#"{"placement": "append-system", "surfaces": ["notepad"]}"#);
    assert_eq!(
        render(&Spaces::default(), &c).unwrap(),
        "## Session Notepad\n(empty — use write_notepad or update_notepad to save working notes, findings, and task \
         progress; content here survives context compaction)"
    );
}

#[test]
fn the_system_section_hint_names_session_scratchpad_when_only_it_is_offered() {
    let c = config(r#"{"placement": "prepend-system"}"#);
    assert_eq!(render(&Spaces::default(), &c).unwrap(), format!("## Session Notepad\n{SCRATCHPAD_EMPTY_HINT}"));
}

#[test]
fn the_system_section_shows_the_notes_as_they_are_then_plan_and_refs() {
    let c = config(r#"{"placement": "append-system"}"#);
    assert_eq!(render(&spaces("## Findings\n- x", "", &[]), &c).unwrap(), "## Session Notepad\n## Findings\n- x");
    assert_eq!(render(&spaces("n", "p", &["r"]), &c).unwrap(), "## Session Notepad\nn\n### Plan\np\n### Refs\n- r");
}

#[test]
fn scratchpad_guidance_is_001s_section_with_the_configured_budgets() {
    let guidance = guidance(&Config::default());
    assert_eq!(guidance.len(), 1);
    assert_eq!(guidance[0].placement, Placement::AppendSystem);
    assert_eq!(
        guidance[0].text,
        "## Session Scratchpad\n\
         You have a persistent scratchpad tool (session.scratchpad) that survives context compaction.\n\
         Use it to save: multi-step plans, key findings, important decisions, accumulated state.\n\
         The scratchpad is prepended to each message you receive. Budget: notes 4000 chars, plan 2000 chars, refs 50 items.\n\
         Call session.scratchpad with action \"set_notes\" or \"set_plan\" to overwrite, \"append_notes\" to add \
         incrementally, and \"refs.add\", \"refs.remove\" or \"refs.set\" for file paths, URLs and identifiers."
    );
}

#[test]
fn guidance_mentions_tokens_when_the_token_budget_is_on() {
    let c = config(r#"{"tokenBudget": true, "maxTokens": 1500, "notesMaxChars": 9000}"#);
    assert!(guidance(&c)[0].text.contains("Budget: notes 9000 chars (~1500 tokens), plan 2000 chars"));
}

#[test]
fn notepad_guidance_is_003s_instruction_with_the_budget() {
    let c = config(r#"{"surfaces": ["notepad"], "notesMaxChars": 3000}"#);
    let guidance = guidance(&c);
    assert_eq!(guidance.len(), 1);
    assert!(guidance[0].text.starts_with(NOTEPAD_INSTRUCTION));
    assert!(guidance[0].text.ends_with("Budget: 3000 chars."));
}

#[test]
fn both_surfaces_get_both_guidance_sections() {
    let c = config(r#"{"surfaces": ["scratchpad", "notepad"]}"#);
    let texts: Vec<String> = guidance(&c).into_iter().map(|i| i.text).collect();
    assert!(texts[0].starts_with("## Session Scratchpad") && texts[1].starts_with("For multi-step"));
}

#[test]
fn the_compaction_warning_is_003s_text_for_the_notepad() {
    let c = config(r#"{"surfaces": ["notepad"]}"#);
    assert_eq!(
        compaction_warning(&c),
        "[System] Context is approaching the token limit and will be compacted after your next response. Review \
         your session notepad and update it with any working state, findings, or progress you need to preserve. \
         Conversation details may be summarized during compaction, but the notepad is kept in full."
    );
    assert!(compaction_warning(&Config::default()).contains("Review your session scratchpad"));
}
