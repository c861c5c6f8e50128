//! The recall tools, over the project's index (this session's documents included):
//!
//! - `recall_search {query, kind?, session?, since?, limit?}` → one line per hit, best first:
//!   `- [<kind> · <session> · <YYYY-MM-DD>] <snippet> (<id>)`, or `No match.`
//! - `recall_read {id}` → `[<kind> · <session> · <YYYY-MM-DD>] <title> (<id>)`, then the whole
//!   text; an unknown id is `not-found`.
//!
//! Bad arguments are `invalid-arguments` naming the field, as the host's `invalid` answers
//! (a query with no words, or too many) are; a session with no project is `failed` with a
//! message saying so. The tools only read: nothing changes either way.

use scratchpad_plugin_sdk::args::{Args, invalid};
use scratchpad_plugin_sdk::{Access, Index, IndexError, Query, Storage, Tokenizer, ToolError, ToolOutput, ToolSpec};
use serde_json::json;

use crate::plugin::Scratchpad;
use crate::recall::index::KINDS;
use crate::recall::{date, line, parse_date};

/// Name of the search tool.
pub const RECALL_SEARCH: &str = "recall_search";
/// Name of the read tool.
pub const RECALL_READ: &str = "recall_read";
/// Hits of a search when `limit` is not given.
pub const DEFAULT_LIMIT: u64 = 8;
/// Most hits of a search.
pub const MAX_LIMIT: u64 = 20;

/// What the tools answer in a session whose project has no index.
pub const NO_PROJECT: &str = "this session belongs to no project (or its project opted out of recall), so there is \
                              nothing to recall; keep working from the scratchpad";

/// The specs of the two tools.
pub fn specs() -> Vec<ToolSpec> {
    let search = json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "description": "Words to look for (1 to 32 words; a word of three letters or more that few documents hold also matches as a prefix)."
            },
            "kind": { "type": "string", "enum": KINDS, "description": "Only documents of this kind." },
            "session": { "type": "string", "minLength": 1, "description": "Only documents saved by this session." },
            "since": {
                "type": "string",
                "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
                "description": "Only documents from this date on (YYYY-MM-DD, UTC)."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": DEFAULT_LIMIT,
                "description": "Most hits to return."
            }
        },
        "required": ["query"]
    });
    let read = json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "minLength": 1, "description": "A document's id, as recall_search shows it." }
        },
        "required": ["id"]
    });
    vec![
        ToolSpec {
            name: RECALL_SEARCH.into(),
            description: "Search what this and earlier sessions of the project saved: plan versions, notes, refs \
                          and checkpoints (conversation summaries). Best matches first, one per line with its id, \
                          kind, session, date and a snippet."
                .into(),
            parameters: search.to_string(),
        },
        ToolSpec {
            name: RECALL_READ.into(),
            description: "Read one document found by recall_search (or shown in the recall block) whole, with \
                          where it comes from."
                .into(),
            parameters: read.to_string(),
        },
    ]
}

/// The query `recall_search` was called with, checked.
fn query(arguments: &str) -> Result<Query, ToolError> {
    let args = Args::parse(arguments)?;
    let text = args.non_empty_string("query")?.to_string();
    let kind = match args.optional_string("kind")? {
        Some(kind) if !KINDS.contains(&kind) => {
            return Err(invalid(format!("`kind` must be one of {}, got \"{kind}\"", KINDS.join(", "))));
        }
        kind => kind.map(str::to_string),
    };
    let session = match args.optional_string("session")? {
        Some(session) if session.trim().is_empty() => {
            return Err(invalid("`session` must be a non-empty string".into()));
        }
        session => session.map(str::to_string),
    };
    let since_ms = match args.optional_string("since")? {
        Some(since) => Some(parse_date(since).ok_or_else(|| {
            invalid(format!("`since` must be a date YYYY-MM-DD from 1970-01-01 on, got \"{since}\""))
        })?),
        None => None,
    };
    let limit = args.integer("limit", 1)?.unwrap_or(DEFAULT_LIMIT);
    if limit > MAX_LIMIT {
        return Err(invalid(format!("`limit` must be at most {MAX_LIMIT}, got {limit}")));
    }
    Ok(Query { text, kind, session, since_ms, other_sessions: false, limit: limit as u32 })
}

/// An index error as the tool's error.
fn index_failure(error: IndexError) -> ToolError {
    match error {
        IndexError::Invalid(message) => ToolError::InvalidArguments(message),
        IndexError::NoProject => ToolError::Failed(NO_PROJECT.into()),
        other => ToolError::Failed(format!("the recall index failed: {other:?}")),
    }
}

impl<S: Storage, T: Tokenizer> Scratchpad<'_, S, T> {
    pub(crate) fn recall_search(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        let query = query(arguments)?;
        let hits = self.readable_index()?.search(&query).map_err(index_failure)?;
        let content = if hits.is_empty() {
            "No match.".to_string()
        } else {
            let lines: Vec<String> =
                hits.iter().map(|hit| line(&hit.kind, &hit.session, hit.at_ms, &hit.snippet, &hit.id)).collect();
            lines.join("\n")
        };
        Ok(ToolOutput { content })
    }

    pub(crate) fn recall_read(&self, arguments: &str) -> Result<ToolOutput, ToolError> {
        let args = Args::parse(arguments)?;
        let id = args.non_empty_string("id")?;
        let document = self.readable_index()?.get(id).ok_or_else(|| {
            ToolError::NotFound(format!(
                "no document `{id}` in this project's recall index; use an id that recall_search shows"
            ))
        })?;
        let provenance = format!(
            "[{} · {} · {}] {} ({})",
            document.kind,
            document.session,
            date(document.at_ms),
            document.title,
            document.id
        );
        Ok(ToolOutput { content: format!("{provenance}\n{}", document.text) })
    }

    /// The index, when recall may read it.
    fn readable_index(&self) -> Result<&dyn Index, ToolError> {
        match (&self.recall, self.recall_access()) {
            (Some(recall), Access::Read | Access::ReadWrite) => Ok(&*recall.index),
            (Some(_), Access::None) if self.config.recall.enabled => Err(ToolError::Failed(NO_PROJECT.into())),
            _ => Err(ToolError::Failed("recall is not available in this host".into())),
        }
    }
}

#[cfg(test)]
mod tests;
