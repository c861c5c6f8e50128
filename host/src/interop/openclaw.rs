//! OpenClaw sessions in and out (session persistence in OpenClaw's format): read session JSONL files and `sessions.json`,
//! import their scratchpad state, and append the current scratchpad as `custom` records.
//! OpenClaw 2026.9 keeps the same records in a SQLite store instead (`store.rs`); the import
//! reads either.
//!
//! The reader follows OpenClaw's own rule: record types it does not know are skipped, never an
//! error. Malformed lines (bad JSON, a truncated last line from a crash, wrong field types)
//! are reported with `file:line` and skipped; the rest still imports. Imported files are never
//! modified.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;
use serde_json::{Value, json};

use crate::{Error, Host, Origin, SectionContent, TurnContext};

mod jsonl;
mod store;

pub use jsonl::{LEGACY_KEY, NOTES_KEY, PLAN_KEY, REFS_KEY, SessionFile, parse};

/// The plugin whose state the interop reads and writes.
const PLUGIN: &str = "scratchpad";
/// The turn id the import acts in.
const IMPORT_TURN: &str = "openclaw-import";

/// What `import-openclaw` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    /// Sessions created or updated, by id.
    pub sessions: Vec<String>,
    /// Sessions whose state already matched (nothing written).
    pub unchanged: Vec<String>,
    /// Malformed lines skipped, as `file:line: reason`.
    pub skipped_lines: Vec<String>,
    /// Records of unused types skipped.
    pub skipped_records: usize,
}

/// The `sessions.json` index: session id → (compactionCount, totalTokens, sessionFile).
type Index = BTreeMap<String, (Option<i64>, Option<i64>, Option<PathBuf>)>;

/// Reads the `sessions.json` index of `dir` (empty when there is none).
fn read_index(dir: &Path) -> anyhow::Result<Index> {
    let path = dir.join("sessions.json");
    let mut index = BTreeMap::new();
    if !path.exists() {
        return Ok(index);
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    for entry in value.as_object().into_iter().flat_map(|o| o.values()) {
        let Some(id) = entry.get("sessionId").and_then(Value::as_str) else { continue };
        let file = entry.get("sessionFile").and_then(Value::as_str).map(PathBuf::from);
        let count = entry.get("compactionCount").and_then(Value::as_i64);
        let tokens = entry.get("totalTokens").and_then(Value::as_i64);
        index.insert(id.to_owned(), (count, tokens, file));
    }
    Ok(index)
}

impl Host {
    /// Imports the scratchpad state of an OpenClaw session file, or of every `*.jsonl` in a
    /// directory (with `sessions.json`'s compactionCount and totalTokens). OpenClaw 2026.9's
    /// SQLite transcript store is read too: the `openclaw-agent.sqlite` file, an agent
    /// directory holding it, or a state directory (every `agents/*/agent/` store); there the
    /// session key (`agent:main:main`) is the session id, as the OpenClaw plugin maps it.
    /// Sessions are created when missing; the state goes through the scratchpad component's
    /// tools, so its limits hold. Importing twice changes nothing. The files are only read.
    pub async fn import_openclaw(&self, path: &Path) -> crate::Result<ImportReport> {
        if !self.plugins().iter().any(|p| p.name == PLUGIN) {
            return Err(Error::invalid("plugins", "importing OpenClaw sessions needs the `scratchpad` plugin loaded"));
        }
        if !path.exists() {
            return Err(Error::invalid("path", format!("{} does not exist", path.display())));
        }
        if let Some(stores) = store::stores_at(path)? {
            return self.import_openclaw_stores(&stores).await;
        }
        let (files, index) = if path.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("reading {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect();
            files.sort();
            (files, read_index(path)?)
        } else {
            (vec![path.to_owned()], BTreeMap::new())
        };
        let mut report = ImportReport::default();
        for file in files {
            let bytes = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
            let name = file.display().to_string();
            let parsed = parse(&name, &String::from_utf8_lossy(&bytes));
            report.skipped_lines.extend(parsed.malformed.iter().cloned());
            report.skipped_records += parsed.skipped_records;
            let Some(id) = parsed.session_id.clone() else {
                report.skipped_lines.push(format!("{name}: no session header; file skipped"));
                continue;
            };
            let (count, tokens, _) = index.get(&id).cloned().unwrap_or((None, None, None));
            let changed = self.import_session(&id, &parsed, count.or(Some(parsed.compactions as i64)), tokens).await?;
            if changed { report.sessions.push(id) } else { report.unchanged.push(id) }
        }
        Ok(report)
    }

    /// Imports every session of OpenClaw 2026.9's transcript stores (see `store.rs`).
    async fn import_openclaw_stores(&self, stores: &[PathBuf]) -> crate::Result<ImportReport> {
        let mut report = ImportReport::default();
        for path in stores {
            let sessions = store::read_store(path, &mut report.skipped_lines, &mut report.skipped_records)?;
            for session in sessions {
                let changed =
                    self.import_session(&session.key, &session.file, session.compactions, session.tokens).await?;
                if changed { report.sessions.push(session.key) } else { report.unchanged.push(session.key) }
            }
        }
        Ok(report)
    }

    async fn import_session(
        &self,
        id: &str,
        file: &SessionFile,
        compactions: Option<i64>,
        tokens: Option<i64>,
    ) -> crate::Result<bool> {
        let mut changed = false;
        match self.create_session(id, Origin::New).await {
            Ok(_) => changed = true,
            Err(Error::SessionExists(_)) => {}
            Err(other) => return Err(other),
        }
        let current = self.scratchpad_state(id).await?;
        let turn = TurnContext::new(id, IMPORT_TURN);
        let mut call = |args: Value| {
            changed = true;
            let turn = turn.clone();
            async move { self.call_tool(&turn, "session.scratchpad", &args.to_string()).await.map(drop) }
        };
        if let Some(notes) = &file.notes
            && current.notes.as_deref().unwrap_or_default() != notes
        {
            call(json!({ "action": "set_notes", "content": notes })).await?;
        }
        if let Some(plan) = &file.plan
            && current.plan.as_deref().unwrap_or_default() != plan
        {
            call(json!({ "action": "set_plan", "content": plan })).await?;
        }
        if let Some(refs) = &file.refs
            && current.refs.as_deref().unwrap_or_default() != refs.as_slice()
        {
            call(json!({ "action": "refs.set", "items": refs })).await?;
        }
        changed |= self.record_counters(id, compactions, tokens).await?;
        Ok(changed)
    }

    async fn record_counters(&self, id: &str, compactions: Option<i64>, tokens: Option<i64>) -> crate::Result<bool> {
        self.inner.db.record_counters(id, compactions, tokens).await
    }

    /// The scratchpad plugin's three spaces in `id`, as its view shows them (the sections keyed
    /// `notes`, `plan` and `refs`): the host never reads a plugin's storage, so a component that
    /// keeps them differently, or a replacement that shows the same keys, exports the same.
    /// Without the plugin (or a view) every space is `None`; a failed view is the plugin's error.
    pub(crate) async fn scratchpad_state(&self, id: &str) -> crate::Result<SessionFile> {
        let mut state = SessionFile::default();
        let Some(view) = self.view(id).await?.into_iter().find(|v| v.plugin == PLUGIN) else { return Ok(state) };
        if let Some(message) = view.error {
            return Err(match view.failure {
                Some(failure) => Error::Plugin { plugin: view.plugin, hook: crate::view::HOOK.to_owned(), failure },
                None => anyhow::anyhow!(message).into(),
            });
        }
        for section in view.sections {
            let items = || match &section.content {
                SectionContent::Items(items) => items.clone(),
                SectionContent::Text(text) => text.lines().map(str::to_owned).collect(),
            };
            match section.key.as_str() {
                "notes" => state.notes = Some(section.content.to_text()),
                "plan" => state.plan = Some(section.content.to_text()),
                "refs" => state.refs = Some(items()),
                _ => {}
            }
        }
        Ok(state)
    }

    /// Session `id`'s scratchpad as markdown (`## Notes`, `## Plan`, `## Refs`; empty spaces
    /// left out), from the scratchpad plugin's view, without running a turn.
    pub async fn render_scratchpad(&self, id: &str) -> crate::Result<String> {
        let state = self.scratchpad_state(id).await?;
        let mut parts = Vec::new();
        if let Some(notes) = state.notes.filter(|n| !n.is_empty()) {
            parts.push(format!("## Notes\n{notes}"));
        }
        if let Some(plan) = state.plan.filter(|p| !p.is_empty()) {
            parts.push(format!("## Plan\n{plan}"));
        }
        if let Some(refs) = state.refs.filter(|r| !r.is_empty()) {
            parts.push(format!("## Refs\n{}", refs.iter().map(|r| format!("- {r}")).collect::<Vec<_>>().join("\n")));
        }
        Ok(if parts.is_empty() { "(the scratchpad is empty)".to_owned() } else { parts.join("\n") })
    }

    /// Appends session `id`'s scratchpad to the OpenClaw JSONL `file` as three `custom`
    /// records (notes, plan, refs) with ids `{unix_ms}_{4 hex}`, each `parentId` linked to the
    /// record before it, so OpenClaw resumes with the scratchpad. Returns the records written.
    pub async fn export_openclaw(&self, id: &str, file: &Path) -> crate::Result<Vec<Value>> {
        let state = self.scratchpad_state(id).await?;
        let existing = match std::fs::read(file) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(anyhow::Error::new(e).context(format!("reading {}", file.display())).into()),
        };
        let mut parent = parse(&file.display().to_string(), &existing).last_id;
        let now = crate::store::now_ms();
        let mut records = Vec::new();
        let values = [
            (NOTES_KEY, json!(state.notes.unwrap_or_default())),
            (PLAN_KEY, json!(state.plan.unwrap_or_default())),
            (REFS_KEY, json!(state.refs.unwrap_or_default())),
        ];
        for (i, (key, data)) in values.into_iter().enumerate() {
            let record_id = crate::store::record_id(now, &format!("{id}/{i}"));
            records.push(json!({
                "type": "custom",
                "customType": key,
                "data": data,
                "id": record_id,
                "parentId": parent,
                "timestamp": crate::timestamp::iso8601(now),
            }));
            parent = Some(record_id);
        }
        let mut text = String::new();
        if !existing.is_empty() && !existing.ends_with('\n') {
            text.push('\n');
        }
        for record in &records {
            text.push_str(&record.to_string());
            text.push('\n');
        }
        let mut out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .with_context(|| format!("opening {}", file.display()))?;
        out.write_all(text.as_bytes()).with_context(|| format!("appending to {}", file.display()))?;
        Ok(records)
    }
}
