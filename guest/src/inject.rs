//! What the model sees without calling a tool: the per-turn block (before-query), the standing
//! guidance (before-session-create) and the pre-compaction warning (before-compaction).
//!
//! The block's shape follows the configured placement:
//! - context placements (`prepend-context`, the default, and `append-context`) get the scratchpad extension's
//!   block, with each non-empty space under its own heading, and nothing at all when every
//!   space is empty:
//!   ```text
//!   [Session Scratchpad - your persistent working memory]
//!   ## Notes
//!   <notes>
//!   ## Plan
//!   <plan>
//!   ## Refs
//!   - <oldest ref>
//!   - <newest ref>
//!   [End Scratchpad]
//!   ```
//! - system placements (`append-system`, `prepend-system`) get the session notepad's section: the notes
//!   as they are under `## Session Notepad`, then `### Plan` and `### Refs` when non-empty, or
//!   the session notepad's empty-state hint when every space is empty.

use scratchpad_plugin_sdk::{Injection, Placement};

use crate::config::{Config, Surface};
use crate::phrases::{delivery_phrase, notes_budget};
use crate::state::Spaces;

/// First line of the context block (the scratchpad extension).
pub const BLOCK_START: &str = "[Session Scratchpad - your persistent working memory]";
/// Last line of the context block (the scratchpad extension).
pub const BLOCK_END: &str = "[End Scratchpad]";
/// Heading of the system section (the session notepad).
pub const NOTEPAD_HEADING: &str = "## Session Notepad";
/// The session notepad's empty-state hint, used when the notepad tools are offered.
pub const NOTEPAD_EMPTY_HINT: &str = "(empty — use write_notepad or update_notepad to save working notes, findings, and task progress; content here survives context compaction)";
/// The empty-state hint when only `session.scratchpad` is offered.
pub const SCRATCHPAD_EMPTY_HINT: &str = "(empty — use session.scratchpad to save working notes, findings, and task progress; content here survives context compaction)";

/// The session notepad's system-prompt instruction for the notepad surface.
pub const NOTEPAD_INSTRUCTION: &str = "For multi-step or complex tasks, use the session notepad to track your plan and record findings as you work. The notepad survives context compaction — conversation details may be summarized, but the notepad is preserved in full. Update it after significant findings or completed steps.";

/// Whether `placement` puts text in the system prompt (rather than around the message).
pub fn is_system(placement: Placement) -> bool {
    matches!(placement, Placement::PrependSystem | Placement::AppendSystem)
}

/// Whether texts should speak of "the notepad" (the session notepad's words): when the notepad tools
/// are offered, or no tools at all (then only the sandbox API writes it).
pub fn speaks_of_notepad(config: &Config) -> bool {
    config.offers(Surface::Notepad) || config.surfaces.is_empty()
}

/// The per-turn text for `spaces`, shaped for `config.placement`; `None` when nothing is shown.
pub fn render(spaces: &Spaces, config: &Config) -> Option<String> {
    if is_system(config.placement) { Some(system_section(spaces, config)) } else { context_block(spaces) }
}

fn refs_list(refs: &[String]) -> String {
    refs.iter().map(|r| format!("- {r}")).collect::<Vec<_>>().join("\n")
}

fn context_block(spaces: &Spaces) -> Option<String> {
    if spaces.is_empty() {
        return None;
    }
    let mut lines = vec![BLOCK_START.to_string()];
    for (heading, body) in
        [("## Notes", spaces.notes.clone()), ("## Plan", spaces.plan.clone()), ("## Refs", refs_list(&spaces.refs))]
    {
        if !body.is_empty() {
            lines.push(heading.to_string());
            lines.push(body);
        }
    }
    lines.push(BLOCK_END.to_string());
    Some(lines.join("\n"))
}

fn system_section(spaces: &Spaces, config: &Config) -> String {
    if spaces.is_empty() {
        let hint = if speaks_of_notepad(config) { NOTEPAD_EMPTY_HINT } else { SCRATCHPAD_EMPTY_HINT };
        return format!("{NOTEPAD_HEADING}\n{hint}");
    }
    let mut parts = vec![NOTEPAD_HEADING.to_string()];
    if !spaces.notes.is_empty() {
        parts.push(spaces.notes.clone());
    }
    if !spaces.plan.is_empty() {
        parts.push(format!("### Plan\n{}", spaces.plan));
    }
    if !spaces.refs.is_empty() {
        parts.push(format!("### Refs\n{}", refs_list(&spaces.refs)));
    }
    parts.join("\n")
}

/// The standing guidance for a new session: one `append-system` injection per offered surface.
pub fn guidance(config: &Config) -> Vec<Injection> {
    config
        .surfaces
        .iter()
        .map(|surface| Injection {
            placement: Placement::AppendSystem,
            text: match surface {
                Surface::Scratchpad => scratchpad_guidance(config),
                Surface::Notepad => notepad_guidance(config),
            },
        })
        .collect()
}

/// The scratchpad extension's system-prompt section, with the three spaces and the real budgets.
pub fn scratchpad_guidance(config: &Config) -> String {
    format!(
        "## Session Scratchpad\n\
         You have a persistent scratchpad tool (session.scratchpad) that survives context compaction.\n\
         Use it to save: multi-step plans, key findings, important decisions, accumulated state.\n\
         The scratchpad is {}. Budget: notes {}, plan {} chars, refs {} items.\n\
         Call session.scratchpad with action \"set_notes\" or \"set_plan\" to overwrite, \"append_notes\" \
         to add incrementally, and \"refs.add\", \"refs.remove\" or \"refs.set\" for file paths, URLs and \
         identifiers.",
        delivery_phrase(config.placement),
        notes_budget(config),
        config.plan_max_chars,
        config.refs_max_items,
    )
}

/// The session notepad's instruction, followed by the tools and the real budget.
pub fn notepad_guidance(config: &Config) -> String {
    format!(
        "{NOTEPAD_INSTRUCTION}\nNotepad tools: read_notepad, write_notepad (replaces everything) and \
         update_notepad (find_replace, append, prepend, delete). Budget: {}.",
        notes_budget(config)
    )
}

/// The session notepad's pre-compaction warning (speaking of the scratchpad when only `session.scratchpad`
/// is offered).
pub fn compaction_warning(config: &Config) -> String {
    let noun = if speaks_of_notepad(config) { "notepad" } else { "scratchpad" };
    format!(
        "[System] Context is approaching the token limit and will be compacted after your next \
         response. Review your session {noun} and update it with any working state, findings, or \
         progress you need to preserve. Conversation details may be summarized during compaction, \
         but the {noun} is kept in full."
    )
}

#[cfg(test)]
mod tests;
