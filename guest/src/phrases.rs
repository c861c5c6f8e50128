//! Prose about the configuration that the tools' descriptions (`schema.rs`) and the injected
//! texts (`inject.rs`) both say, so the two never disagree.

use scratchpad_plugin_sdk::Placement;

use crate::config::Config;

/// How the block reaches the model, for prose ("prepended to each message you receive").
pub fn delivery_phrase(placement: Placement) -> &'static str {
    match placement {
        Placement::PrependContext => "prepended to each message you receive",
        Placement::AppendContext => "appended to each message you receive",
        Placement::PrependSystem | Placement::AppendSystem => "included in your system prompt every turn",
    }
}

/// The notes budget as prose, e.g. `4000 chars` or `4000 chars (~2000 tokens)`.
pub fn notes_budget(config: &Config) -> String {
    match config.notes_max_tokens() {
        Some(tokens) => format!("{} chars (~{tokens} tokens)", config.notes_max_chars),
        None => format!("{} chars", config.notes_max_chars),
    }
}
