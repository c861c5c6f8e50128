//! [`Scratchpad`]: the component's hooks as plain Rust over [`Storage`] and [`Tokenizer`].
//!
//! Each method mirrors one export of the WIT world. The tools live in `scratchpad_tool.rs` and
//! `notepad_tools.rs`, the nudges in `nudges.rs`, recall in `recall.rs`; this file routes and
//! applies `enabled`.

use scratchpad_plugin_sdk::{
    Access, Injection, Manifest, Origin, Section, SessionInfo, SessionSetup, Storage, Tokenizer, ToolError, ToolOutput,
    ToolSpec, Turn, section,
};

use crate::budget::{self, TextLimit};

use crate::config::{Config, Surface};
use crate::inject;
use crate::recall::{self, RECALL_READ, RECALL_SEARCH, Recall};
use crate::schema::{self, READ_NOTEPAD, SCRATCHPAD_TOOL, UPDATE_NOTEPAD, WRITE_NOTEPAD};
use crate::state::{self, Spaces};

/// The manifest for `config`: every tool the component may run whenever it is enabled — all
/// four scratchpad tools (the notepad tools also serve the host's sandbox API when they are
/// not offered to the model), and the two recall tools when recall is enabled — none when it
/// is disabled.
pub fn manifest(config: &Config) -> Manifest {
    let mut tools = Vec::new();
    if config.enabled {
        tools
            .extend([Surface::Scratchpad, Surface::Notepad].into_iter().flat_map(|s| schema::surface_tools(s, config)));
        if config.recall.enabled {
            tools.extend(recall::tools::specs());
        }
    }
    Manifest { tools }
}

/// The scratchpad of one session: its storage, the host's tokenizer and the configuration,
/// and, given [`Scratchpad::with_recall`], the project's recall index.
pub struct Scratchpad<'a, S: Storage, T: Tokenizer> {
    pub(crate) storage: &'a mut S,
    pub(crate) tokens: &'a T,
    pub(crate) config: &'a Config,
    pub(crate) recall: Option<Recall<'a>>,
    pub(crate) warnings: Vec<String>,
}

impl<'a, S: Storage, T: Tokenizer> Scratchpad<'a, S, T> {
    /// The scratchpad over `storage` (scoped to one session), counting tokens with `tokens`,
    /// without recall (see [`Scratchpad::with_recall`]).
    pub fn new(storage: &'a mut S, tokens: &'a T, config: &'a Config) -> Self {
        Scratchpad { storage, tokens, config, recall: None, warnings: Vec::new() }
    }

    /// `load`: the manifest (see [`manifest`]).
    pub fn load(&self) -> Manifest {
        manifest(self.config)
    }

    /// The current contents of the three spaces.
    pub fn spaces(&self) -> Spaces {
        Spaces::load(self.storage)
    }

    /// `describe` (the component's view): the plan, the notes and the references, each with its
    /// use of its budget as the tools report it, under the keys `plan`, `notes` and `refs`
    /// (which the host's OpenClaw export maps). Empty spaces are shown too, at 0 of their budget.
    pub fn describe(&self) -> Vec<Section> {
        let Spaces { notes, plan, refs } = self.spaces();
        let plan_usage = budget::text_budget(&plan, &TextLimit::plan(self.config), self.tokens);
        let notes_usage = budget::text_budget(&notes, &TextLimit::notes(self.config), self.tokens);
        let refs_usage = budget::refs_budget(refs.len(), self.config.refs_max_items);
        vec![
            section::text("Plan", "plan", plan, Some(plan_usage)),
            section::text("Notes", "notes", notes, Some(notes_usage)),
            section::items("References", "refs", refs, Some(refs_usage)),
        ]
    }

    /// `before-session-create`: the guidance for each offered surface, and whether to inherit
    /// the parent's state (fork: always; spawn: when a copy was requested; new: never). An
    /// inheriting session also restarts the turn-numbered bookkeeping of the copy (see
    /// `restart_turn_counts`).
    pub fn before_session_create(&mut self, session: &SessionInfo) -> SessionSetup {
        if !self.config.enabled {
            return SessionSetup { injections: Vec::new(), inherit_parent_state: false };
        }
        let inherit_parent_state = match &session.origin {
            Origin::New => false,
            Origin::Spawn(spawn) => spawn.copy_requested,
            Origin::Fork(_) => true,
        };
        if inherit_parent_state {
            self.restart_turn_counts();
        }
        SessionSetup { injections: inject::guidance(self.config), inherit_parent_state }
    }

    /// `before-query`: the due `[Hint: ...]` lines (recall's after a compaction last), then the
    /// block, all at the configured placement; on a new session's first turn, recall's block
    /// on the system side, found with the user's message (which is never changed). Puts the
    /// session's latest checkpoint in the recall index.
    pub fn before_query(&mut self, turn: &Turn, message: &str) -> Vec<Injection> {
        if !self.config.enabled {
            return Vec::new();
        }
        let spaces = self.spaces();
        let mut texts = self.due_hints(turn, &spaces);
        texts.extend(self.recall_reminder());
        texts.extend(inject::render(&spaces, self.config));
        let placement = self.config.placement;
        let mut injections: Vec<Injection> = texts.into_iter().map(|text| Injection { placement, text }).collect();
        // Every request of the first turn carries the block (a runtime that rebuilds its prompt
        // for each model call asks again with the user's message); a re-injection without a
        // message once it was given (a session resumed in its first turn) does not.
        let given = self.storage.get(state::RECALL_OFFERED).is_some();
        if turn.turn_index == 0
            && !(given && message.trim().is_empty())
            && let Some(block) = self.recall_block(turn, message, &spaces)
        {
            let _ = self.storage.set(state::RECALL_OFFERED, b"1");
            injections.push(block);
        }
        self.index_checkpoint();
        injections
    }

    /// `after-response`: watches the reply for a plan (nudgeOnPlanDetected).
    pub fn after_response(&mut self, turn: &Turn, text: &str) {
        if self.config.enabled {
            self.note_reply(turn, text);
        }
    }

    /// `before-compaction`: the session notepad's warning turn.
    pub fn before_compaction(&self, _turn: &Turn) -> Option<String> {
        self.config.enabled.then(|| inject::compaction_warning(self.config))
    }

    /// `after-compaction`: arms the nudgeAfterCompaction hint and recall's reminder for the
    /// next turn.
    pub fn after_compaction(&mut self, _turn: &Turn) {
        if self.config.enabled {
            self.note_compaction();
            self.note_compaction_for_recall();
        }
    }

    /// `list-tools`: the tools of the configured surfaces, and the recall tools while the
    /// session may read its project's index.
    pub fn list_tools(&self, _turn: &Turn) -> Vec<ToolSpec> {
        if !self.config.enabled {
            return Vec::new();
        }
        let mut tools: Vec<ToolSpec> =
            self.config.surfaces.iter().flat_map(|s| schema::surface_tools(*s, self.config)).collect();
        if !matches!(self.recall_access(), Access::None) {
            tools.extend(recall::tools::specs());
        }
        tools
    }

    /// `call-tool`: runs one of the four scratchpad tools (any of them, offered or not, so the
    /// host's sandbox API can use the notepad tools) or a recall tool. Errors change nothing;
    /// a scratchpad tool that changed a space puts what it added in the recall index.
    pub fn call_tool(&mut self, turn: &Turn, name: &str, arguments: &str) -> Result<ToolOutput, ToolError> {
        if !self.config.enabled {
            return Err(ToolError::UnknownTool(format!("the scratchpad is disabled; there is no tool `{name}`")));
        }
        let writes = matches!(name, SCRATCHPAD_TOOL | WRITE_NOTEPAD | UPDATE_NOTEPAD);
        let before = (writes && self.indexing()).then(|| self.spaces());
        let result = match name {
            SCRATCHPAD_TOOL => self.call_scratchpad(turn, arguments),
            READ_NOTEPAD => self.read_notepad(arguments),
            WRITE_NOTEPAD => self.write_notepad(turn, arguments),
            UPDATE_NOTEPAD => self.update_notepad(turn, arguments),
            RECALL_SEARCH if self.config.recall.enabled => self.recall_search(arguments),
            RECALL_READ if self.config.recall.enabled => self.recall_read(arguments),
            _ => {
                Err(ToolError::UnknownTool(format!("no tool named `{name}`; this plugin offers {}", self.tool_names())))
            }
        };
        if let (Ok(_), Some(before)) = (&result, before) {
            self.index_changes(&before);
        }
        result
    }

    /// The names of the tools the manifest declares, as prose (`a, b and c`).
    fn tool_names(&self) -> String {
        let names: Vec<String> = self.load().tools.into_iter().map(|tool| tool.name).collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => "no tools".into(),
        }
    }
}

#[cfg(test)]
mod tests;
