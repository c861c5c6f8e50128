//! Tool names as a model API accepts them — decided here once for every client.
//!
//! Components name their tools freely within `[A-Za-z0-9_.-]{1,64}` (`session.scratchpad`),
//! while the major model APIs accept `^[a-zA-Z0-9_-]{1,64}$` only, and a coding agent shows an
//! MCP server's tools to its model under a prefix of its own
//! (`mcp__plugin_scratchpad_scratchpad__session_scratchpad` in Claude Code). So every tool has an
//! API name ([`api_tool_name`], carried by [`ToolSpec::api_name`](crate::ToolSpec::api_name)),
//! two tools whose API names collide are refused (at load, naming both), and the texts a model
//! reads name each tool as the model is offered it ([`ToolNames::rewrite`]), so guidance never
//! names a tool the model does not have. The Python and Node bindings, the sidecar, the MCP
//! server and the hook command all use these functions; the shared vectors
//! (`tests/embed/vectors/tool_names.json`) pin them in every language.

use std::collections::HashMap;

/// The longest tool name model APIs accept, in characters.
pub const MAX_TOOL_NAME: usize = 64;

/// Why a set of tool names cannot be offered to a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolNameError {
    /// A tool name is empty: model APIs need 1 to 64 characters.
    #[error("a tool name is empty; model APIs accept 1 to {MAX_TOOL_NAME} of [A-Za-z0-9_-]")]
    Empty,
    /// Two tools map to the same API name, so a model could call only one of them.
    #[error("tools `{first}` and `{second}` both map to the API name `{api_name}`; rename one of them")]
    Collision {
        /// The tool named first.
        first: String,
        /// The tool named after it.
        second: String,
        /// The API name both map to.
        api_name: String,
    },
}

/// `name` as model APIs accept it: every character outside `[A-Za-z0-9_-]` (a non-ASCII letter
/// included) becomes one `_`, and the result is cut to [`MAX_TOOL_NAME`] characters
/// (`session.scratchpad` is `session_scratchpad`). An empty name has no API name.
pub fn api_tool_name(name: &str) -> Result<String, ToolNameError> {
    if name.is_empty() {
        return Err(ToolNameError::Empty);
    }
    Ok(name.chars().map(|c| if is_api_char(c) { c } else { '_' }).take(MAX_TOOL_NAME).collect())
}

fn is_api_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// A set of tools and the names a model sees for them: `prefix` + each tool's API name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolNames {
    /// (tool name, model-visible name), longest tool name first (the rewrite's order).
    pairs: Vec<(String, String)>,
    /// Model-visible name → index into `pairs`.
    by_model: HashMap<String, usize>,
}

impl ToolNames {
    /// The model-visible names of `tools` behind `prefix`. A name given twice is one tool; two
    /// names with one API name are [`ToolNameError::Collision`], naming both.
    pub fn new<'a>(tools: impl IntoIterator<Item = &'a str>, prefix: &str) -> Result<Self, ToolNameError> {
        let mut api_owner: HashMap<String, &str> = HashMap::new();
        let mut pairs = Vec::new();
        for tool in tools {
            let api = api_tool_name(tool)?;
            match api_owner.get(api.as_str()) {
                Some(&owner) if owner == tool => continue,
                Some(&owner) => {
                    return Err(ToolNameError::Collision {
                        first: owner.to_owned(),
                        second: tool.to_owned(),
                        api_name: api,
                    });
                }
                None => {}
            }
            pairs.push((tool.to_owned(), format!("{prefix}{api}")));
            api_owner.insert(api, tool);
        }
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        let by_model = pairs.iter().enumerate().map(|(at, (_, seen))| (seen.clone(), at)).collect();
        Ok(ToolNames { pairs, by_model })
    }

    /// The name the model sees for `tool`, if it is one of these tools.
    pub fn model_name(&self, tool: &str) -> Option<&str> {
        self.pairs.iter().find(|(own, _)| own == tool).map(|(_, seen)| seen.as_str())
    }

    /// The tool behind a model-visible `name`, if it is one of these tools.
    pub fn tool(&self, name: &str) -> Option<&str> {
        self.by_model.get(name).map(|&at| self.pairs[at].0.as_str())
    }

    /// Every (tool, model-visible name), longest tool name first.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(own, seen)| (own.as_str(), seen.as_str()))
    }

    /// `text` with every whole-word mention of a tool replaced by the name the model sees. A
    /// mention is whole when no name character (`[A-Za-z0-9_.-]`) stands right before or after
    /// it — a `.` after it counts only when more of a name follows, not at a sentence's end —
    /// so `session.scratchpad` in `mcp__…__session_scratchpad` or in `session.scratchpad2` is
    /// left alone; one pass, so a replacement is never rewritten again.
    pub fn rewrite(&self, text: &str) -> String {
        if self.pairs.iter().all(|(own, seen)| own == seen) {
            return text.to_owned();
        }
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

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Whether `after`, which starts with a `.`, is the end of a sentence (the dot followed by
/// anything that cannot go on a name: white space, a closing parenthesis or quote, the end of
/// the text) rather than more of a dotted name.
fn ends_sentence(after: &str) -> bool {
    after[1..].chars().next().is_none_or(|c| !is_name_char(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_characters_become_one_underscore_each_and_names_stay_within_64() {
        assert_eq!(api_tool_name("session.scratchpad").unwrap(), "session_scratchpad");
        assert_eq!(api_tool_name("scratchpad_read").unwrap(), "scratchpad_read");
        assert_eq!(api_tool_name("notes.é").unwrap(), "notes__");
        assert_eq!(api_tool_name(&"a.".repeat(50)).unwrap().chars().count(), MAX_TOOL_NAME);
        assert_eq!(api_tool_name(""), Err(ToolNameError::Empty));
    }

    #[test]
    fn two_tools_with_one_api_name_are_refused_naming_both() {
        let error = ToolNames::new(["a.b", "a_b"], "").unwrap_err();
        assert_eq!(
            error,
            ToolNameError::Collision { first: "a.b".into(), second: "a_b".into(), api_name: "a_b".into() }
        );
        assert!(error.to_string().contains("`a.b` and `a_b`"), "{error}");
        assert_eq!(ToolNames::new(["a.b", "a.b"], "").unwrap().iter().count(), 1);
    }

    #[test]
    fn mentions_are_rewritten_whole_and_once() {
        let names =
            ToolNames::new(["session.scratchpad", "scratchpad_read"], "mcp__plugin_scratchpad_scratchpad__").unwrap();
        let text = "Call session.scratchpad (or `scratchpad_read`). Not session.scratchpad2 nor \
                    mcp__plugin_scratchpad_scratchpad__session_scratchpad. (Read with scratchpad_read.) \
                    End: session.scratchpad.";
        assert_eq!(
            names.rewrite(text),
            "Call mcp__plugin_scratchpad_scratchpad__session_scratchpad (or \
             `mcp__plugin_scratchpad_scratchpad__scratchpad_read`). Not session.scratchpad2 nor \
             mcp__plugin_scratchpad_scratchpad__session_scratchpad. (Read with \
             mcp__plugin_scratchpad_scratchpad__scratchpad_read.) End: \
             mcp__plugin_scratchpad_scratchpad__session_scratchpad."
        );
        assert_eq!(names.tool("mcp__plugin_scratchpad_scratchpad__scratchpad_read"), Some("scratchpad_read"));
        assert_eq!(
            names.model_name("session.scratchpad"),
            Some("mcp__plugin_scratchpad_scratchpad__session_scratchpad")
        );
        assert_eq!(names.tool("Bash"), None);
    }

    #[test]
    fn without_a_prefix_only_unsafe_names_change() {
        let names = ToolNames::new(["scratchpad_read"], "").unwrap();
        assert_eq!(names.rewrite("use scratchpad_read"), "use scratchpad_read");
    }
}
