//! Tool names as a model API accepts them. The components name their tools freely
//! (`session.scratchpad`), while model APIs accept `^[a-zA-Z0-9_-]{1,64}$` only, and a coding
//! agent shows an MCP server's tools to its model under a prefix of its own
//! (`mcp__plugin_scratchpad_scratchpad__session_scratchpad` in Claude Code). The MCP server
//! offers the API-safe names (`mcp --api-safe-names`), and the hook command rewrites the
//! component names in every text it hands the model to the names the model sees
//! (`hook --tool-prefix`), so guidance never names a tool the model does not have.

/// The longest tool name model APIs accept.
pub(crate) const MAX_TOOL_NAME: usize = 64;

/// `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64 characters.
pub(crate) fn api_safe(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(MAX_TOOL_NAME)
        .collect()
}

/// Component tool names and the names a model sees for them.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolNames {
    /// (component name, model-visible name), longest component name first.
    pairs: Vec<(String, String)>,
}

impl ToolNames {
    /// The model-visible name of each of `tools`: `prefix` + its API-safe name.
    pub(crate) fn new<'a>(tools: impl IntoIterator<Item = &'a str>, prefix: &str) -> Self {
        let mut pairs: Vec<(String, String)> =
            tools.into_iter().map(|name| (name.to_owned(), format!("{prefix}{}", api_safe(name)))).collect();
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        ToolNames { pairs }
    }

    /// The component name behind a model-visible `name`, if it is one of these tools.
    pub(crate) fn component(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(_, seen)| seen == name).map(|(own, _)| own.as_str())
    }

    /// `text` with every whole-word mention of a component tool name replaced by the name the
    /// model sees. A mention is whole when no name character (`[A-Za-z0-9_.-]`) stands right
    /// before or after it, so `session.scratchpad` in `mcp__…__session_scratchpad` or in
    /// `session.scratchpad2` is left alone; one pass, so a replacement is never rewritten again.
    pub(crate) fn rewrite(&self, text: &str) -> String {
        if self.pairs.iter().all(|(own, seen)| own == seen) {
            return text.to_owned();
        }
        let is_name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut previous: Option<char> = None;
        'scan: while let Some(c) = rest.chars().next() {
            if !previous.is_some_and(is_name_char) {
                for (own, seen) in &self.pairs {
                    if let Some(after) = rest.strip_prefix(own.as_str())
                        && !after.chars().next().is_some_and(|n| is_name_char(n) && !(n == '.' && ends_sentence(after)))
                    {
                        out.push_str(seen);
                        previous = own.chars().last();
                        rest = after;
                        continue 'scan;
                    }
                }
            }
            out.push(c);
            previous = Some(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }
}

/// Whether `after`, which starts with a `.`, is the end of a sentence (the dot followed by
/// white space or the end of the text) rather than more of a dotted name.
fn ends_sentence(after: &str) -> bool {
    after[1..].chars().next().is_none_or(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_become_underscores_and_names_stay_within_64() {
        assert_eq!(api_safe("session.scratchpad"), "session_scratchpad");
        assert_eq!(api_safe("scratchpad_read"), "scratchpad_read");
        assert_eq!(api_safe(&"a.".repeat(50)).len(), MAX_TOOL_NAME);
    }

    #[test]
    fn mentions_are_rewritten_whole_and_once() {
        let names = ToolNames::new(["session.scratchpad", "scratchpad_read"], "mcp__plugin_scratchpad_scratchpad__");
        let text = "Call session.scratchpad (or `scratchpad_read`). Not session.scratchpad2 nor \
                    mcp__plugin_scratchpad_scratchpad__session_scratchpad. End: session.scratchpad.";
        assert_eq!(
            names.rewrite(text),
            "Call mcp__plugin_scratchpad_scratchpad__session_scratchpad (or \
             `mcp__plugin_scratchpad_scratchpad__scratchpad_read`). Not session.scratchpad2 nor \
             mcp__plugin_scratchpad_scratchpad__session_scratchpad. End: \
             mcp__plugin_scratchpad_scratchpad__session_scratchpad."
        );
        assert_eq!(names.component("mcp__plugin_scratchpad_scratchpad__scratchpad_read"), Some("scratchpad_read"));
        assert_eq!(names.component("Bash"), None);
    }

    #[test]
    fn without_a_prefix_only_unsafe_names_change() {
        let names = ToolNames::new(["scratchpad_read"], "");
        assert_eq!(names.rewrite("use scratchpad_read"), "use scratchpad_read");
    }
}
