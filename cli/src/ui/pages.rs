//! The viewer's pages, each read from the host when asked: the sessions, one session (its
//! working memory, the next prompt as the model will see it, its offloaded observations,
//! checkpoints and published metadata), one observation (paged or searched) and the plugins.
//! Each page function answers the whole `main` element; [`super`] frames it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use scratchpad_host::{
    BlobEntry, Error, Host, PluginSource, PluginSpec, PluginView, SectionContent, SessionRecord, StateEntry,
};

use super::html::{bytes, esc, time, url};
use super::reader;

/// Sessions whose stored text a search reads, newest first.
pub(crate) const SEARCHED_SESSIONS: usize = 500;

/// What a page answers: its title, its `main`, and the URL of the stamp the live-update
/// script polls (none for a page that does not change by itself).
pub(crate) struct Page {
    pub(crate) title: String,
    pub(crate) main: String,
    pub(crate) stamp: Option<String>,
}

/// The sessions, newest activity first; with `q`, those whose id or stored text holds it.
pub(crate) async fn sessions(host: &Host, q: &str) -> anyhow::Result<Page> {
    let mut all = host.sessions().await?;
    all.sort_by_key(|s| std::cmp::Reverse(s.updated_at.max(s.created_at)));
    let needle = q.to_lowercase();
    let mut shown = Vec::new();
    for (i, session) in all.iter().enumerate() {
        let by_id = needle.is_empty() || session.id.to_lowercase().contains(&needle);
        if by_id || (i < SEARCHED_SESSIONS && holds(&host.state(&session.id).await?, &needle)) {
            shown.push(session);
        }
    }
    let mut main = format!(
        "<h1>Sessions</h1><form method=\"get\" action=\"/\"><input name=\"q\" value=\"{}\" \
         placeholder=\"id or text\" aria-label=\"search\"> <button>search</button></form>",
        esc(q)
    );
    if !q.is_empty() {
        let _ = write!(
            main,
            "<p class=\"meta\">{} of {} sessions match (ids of all; stored text of the {SEARCHED_SESSIONS} most recent).</p>",
            shown.len(),
            all.len()
        );
    }
    main.push_str("<table id=\"sessions\"><tr><th>session</th><th>turns</th><th>compactions</th><th>last activity</th><th>created</th></tr>");
    for s in &shown {
        let _ = write!(
            main,
            "<tr><td><a href=\"/s/{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            url(&s.id),
            esc(&s.id),
            s.turn_index + 1,
            s.compaction_count,
            time(s.updated_at.max(s.created_at)),
            time(s.created_at)
        );
    }
    main.push_str("</table>");
    if all.is_empty() {
        main.push_str("<p>No sessions yet: an agent's first turn creates one.</p>");
    }
    Ok(Page { title: "sessions".into(), main, stamp: Some("/stamp".into()) })
}

/// Whether any stored value holds `needle` (already lower case).
fn holds(state: &[StateEntry], needle: &str) -> bool {
    state.iter().any(|e| std::str::from_utf8(&e.value).is_ok_and(|text| text.to_lowercase().contains(needle)))
}

/// What changes when any session does: how many there are and their latest activity, turns
/// and compactions.
pub(crate) async fn sessions_stamp(host: &Host) -> anyhow::Result<String> {
    let all = host.sessions().await?;
    let latest = all.iter().map(|s| s.updated_at.max(s.created_at)).max().unwrap_or(0);
    let turns: i64 = all.iter().map(|s| s.turn_index + s.compaction_count).sum();
    Ok(format!("{}:{latest}:{turns}", all.len()))
}

/// What changes when session `id` does; `None` when there is no such session.
pub(crate) async fn session_stamp(host: &Host, id: &str) -> anyhow::Result<Option<String>> {
    let Some(record) = record(host, id).await? else { return Ok(None) };
    let checkpoints = host.checkpoints(id).await?.len();
    // Events touch no session row: their count and the latest time.
    let events = host.events(id).await?;
    let latest_event = events.last().map_or(0, |e| e.at_ms);
    Ok(Some(format!(
        "{}:{}:{}:{}:{checkpoints}:{}:{latest_event}",
        record.updated_at,
        record.turn_index,
        record.compaction_count,
        record.turn_id.unwrap_or_default(),
        events.len()
    )))
}

/// The session record, or `None` when there is none (any other failure is an error).
async fn record(host: &Host, id: &str) -> anyhow::Result<Option<SessionRecord>> {
    match host.session(id).await {
        Ok(record) => Ok(Some(record)),
        Err(Error::SessionNotFound(_) | Error::InvalidInput { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Session `id`'s page; `None` when there is no such session.
pub(crate) async fn session(host: &Host, id: &str) -> anyhow::Result<Option<Page>> {
    let Some(record) = record(host, id).await? else { return Ok(None) };
    let state = host.state(id).await?;
    let views = host.view(id).await?;
    let mut main = format!("<h1>Session {}</h1>", esc(id));
    let _ = write!(
        main,
        "<p class=\"meta\">origin {} · turns {} · compactions {} · tokens {} · created {} · last activity {}</p>",
        esc(&origin(&record)),
        record.turn_index + 1,
        record.compaction_count,
        record.total_tokens.map_or("unknown".into(), |t| t.to_string()),
        time(record.created_at),
        time(record.updated_at.max(record.created_at)),
    );
    if let Some(project) = &record.project {
        let _ = write!(
            main,
            "<p class=\"meta\">project <a id=\"project\" href=\"/p?project={}\">{}</a></p>",
            url(project),
            esc(project)
        );
    }
    memory(host, &views, &state, &mut main);
    prompt(host, id, &mut main).await;
    observations(id, &host.observations(id).await?, &mut main);
    events(host, id, &mut main).await?;
    checkpoints(host, id, &mut main).await?;
    metadata(host, id, &mut main).await?;
    Ok(Some(Page { title: id.to_owned(), main, stamp: Some(format!("/stamp?s={}", url(id))) }))
}

fn origin(record: &SessionRecord) -> String {
    record.origin.to_string()
}

/// What every plugin shows of its state (its view: each section's title, text or list, and
/// usage, rendered the same for any plugin, from [`Host::view`]), then every plugin's stored
/// keys with their sizes against its storage quota and key cap (the limits the host enforces).
/// A plugin whose view failed shows its error in its place; the others still show.
fn memory(host: &Host, views: &[PluginView], state: &[StateEntry], main: &mut String) {
    main.push_str("<h2>Working memory</h2>");
    for view in views {
        let _ = write!(main, "<div class=\"view\" id=\"view-{}\"><h3>{}</h3>", esc(&view.plugin), esc(&view.plugin));
        if let Some(error) = &view.error {
            let _ = write!(main, "<p class=\"error\">its view failed: {}</p>", esc(error));
        }
        for section in &view.sections {
            let _ = write!(
                main,
                "<div class=\"space\" id=\"space-{}-{}\"><h4>{}</h4>",
                esc(&view.plugin),
                esc(&section.key),
                esc(&section.title)
            );
            if let Some(usage) = &section.usage {
                let _ = write!(main, "<p class=\"meta\">{}</p>", esc(usage));
            }
            match &section.content {
                SectionContent::Text(text) => {
                    let _ = write!(main, "<pre>{}</pre>", esc(text));
                }
                SectionContent::Items(items) => {
                    main.push_str("<ul>");
                    for item in items {
                        let _ = write!(main, "<li>{}</li>", esc(item));
                    }
                    main.push_str("</ul>");
                }
                _ => {}
            }
            main.push_str("</div>");
        }
        main.push_str("</div>");
    }

    let mut by_plugin: BTreeMap<&str, Vec<&StateEntry>> = BTreeMap::new();
    for entry in state {
        by_plugin.entry(&entry.plugin).or_default().push(entry);
    }
    let plugins = host.plugins();
    main.push_str(
        "<h3>Stored keys, against each plugin's limits</h3><table><tr><th>plugin</th><th>key</th><th>size</th></tr>",
    );
    for (plugin, entries) in &by_plugin {
        let used: u64 = entries.iter().map(|e| (e.key.len() + e.value.len()) as u64).sum();
        if let Some(summary) = plugins.iter().find(|p| p.name == *plugin) {
            let _ = write!(
                main,
                "<tr><th colspan=\"3\">{} — {} of its {} storage quota {} · {} of {} keys</th></tr>",
                esc(plugin),
                bytes(used),
                bytes(summary.storage_quota_bytes),
                bar(used, summary.storage_quota_bytes),
                entries.len(),
                summary.storage_max_keys
            );
        }
        for entry in entries {
            let _ = write!(
                main,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(plugin),
                esc(&entry.key),
                bytes(entry.value.len() as u64)
            );
        }
    }
    main.push_str("</table>");
}

/// A bar of `used` against `limit`.
fn bar(used: u64, limit: u64) -> String {
    let percent = used.saturating_mul(100).checked_div(limit).map_or(100, |p| p.min(100));
    let over = if used > limit { " over" } else { "" };
    format!("<span class=\"bar{over}\" title=\"{percent}%\"><span style=\"width:{percent}%\"></span></span>")
}

/// The next prompt as the model will see it: each injected block with its placement, plugin
/// and token count, from [`Host::preview_query`] (nothing written).
async fn prompt(host: &Host, id: &str, main: &mut String) {
    main.push_str("<h2>Next prompt</h2>");
    match host.preview_query(id).await {
        Ok(prompt) => {
            let total: u32 = prompt.injections.iter().map(|i| host.count_tokens(&i.text)).sum();
            let _ = write!(
                main,
                "<p class=\"meta\">{} injected blocks, {total} tokens, as the plugins would inject them now \
                 (with an empty message; nothing is written).</p>",
                prompt.injections.len()
            );
            for injection in &prompt.injections {
                let _ = write!(
                    main,
                    "<div class=\"block\" data-plugin=\"{0}\" data-placement=\"{1}\"><p class=\"meta\">{1} · {0} · \
                     <span class=\"tokens\">{2}</span> tokens</p><pre>{3}</pre></div>",
                    esc(&injection.plugin),
                    injection.placement.as_str(),
                    host.count_tokens(&injection.text),
                    esc(&injection.text)
                );
            }
        }
        Err(error) => {
            let _ = write!(main, "<p class=\"error\">The preview failed: {}</p>", esc(&error.to_string()));
        }
    }
}

/// The first `chars` characters of `text` on one line, with `…` when cut.
fn short(text: &str, chars: usize) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

fn observations(session: &str, entries: &[BlobEntry], main: &mut String) {
    let _ = write!(main, "<h2>Offloaded observations</h2><p class=\"meta\">{} entries</p>", entries.len());
    if entries.is_empty() {
        return;
    }
    main.push_str(
        "<table id=\"observations\"><tr><th>entry</th><th>plugin</th><th>tool</th><th>turn · step</th><th>type</th>\
         <th>size</th><th>sha256</th><th>stored</th><th>expires</th></tr>",
    );
    for e in entries {
        let _ = write!(
            main,
            "<tr><td><a href=\"/s/{}/o/{}/{}\">{}</a><br><span class=\"meta\">{}</span></td><td>{}</td><td>{}</td>\
             <td>{} · {}</td><td>{:?}</td><td>{} ({} chars)</td><td title=\"{}\">{}…</td><td>{}</td><td>{}</td></tr>",
            url(session),
            url(&e.plugin),
            url(&e.id),
            esc(&e.id),
            esc(&short(&e.summary, 120)),
            esc(&e.plugin),
            esc(&e.tool),
            esc(&e.turn_id),
            e.step,
            e.kind,
            bytes(e.size_bytes),
            e.size_chars,
            esc(&e.sha256),
            esc(e.sha256.get(..12).unwrap_or(&e.sha256)),
            time(e.created_at_ms as i64),
            time(e.expires_at_ms as i64),
        );
    }
    main.push_str("</table>");
}

/// The session's plugin events (failed calls, quota refusals), newest first.
async fn events(host: &Host, id: &str, main: &mut String) -> anyhow::Result<()> {
    let events = host.events(id).await?;
    let _ = write!(
        main,
        "<h2>Plugin events</h2><p class=\"meta\">{} (failed calls and storage-quota refusals; the newest {} are kept)</p>",
        events.len(),
        scratchpad_host::MAX_EVENTS_PER_SESSION
    );
    if events.is_empty() {
        return Ok(());
    }
    main.push_str("<table id=\"events\"><tr><th>when</th><th>plugin</th><th>hook</th><th>kind</th><th>what</th></tr>");
    for e in events.iter().rev() {
        let _ = write!(
            main,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            time(e.at_ms),
            esc(&e.plugin),
            esc(&e.hook),
            esc(e.kind.as_str()),
            esc(&e.message)
        );
    }
    main.push_str("</table>");
    Ok(())
}

async fn checkpoints(host: &Host, id: &str, main: &mut String) -> anyhow::Result<()> {
    let checkpoints = host.checkpoints(id).await?;
    let _ = write!(main, "<h2>Checkpoints</h2><p class=\"meta\">{} written</p>", checkpoints.len());
    for c in checkpoints.iter().rev() {
        let _ = write!(
            main,
            "<div class=\"block\"><p class=\"meta\">{} · {} · at {} tokens, {} messages · {:?}</p><pre>{}</pre></div>",
            esc(&c.id),
            time(c.created_at_ms as i64),
            c.tokens_at_checkpoint,
            c.message_count_at_checkpoint,
            c.trigger,
            esc(&c.checkpoint.summary)
        );
    }
    Ok(())
}

async fn metadata(host: &Host, id: &str, main: &mut String) -> anyhow::Result<()> {
    let metadata = host.metadata(id).await?;
    if metadata.is_empty() {
        return Ok(());
    }
    main.push_str("<h2>Published by plugins</h2><table><tr><th>plugin</th><th>key</th><th>value</th></tr>");
    for m in &metadata {
        let _ = write!(
            main,
            "<tr><td>{}</td><td>{}</td><td><pre>{}</pre></td></tr>",
            esc(&m.plugin),
            esc(&m.key),
            esc(&m.value.to_string())
        );
    }
    main.push_str("</table>");
    Ok(())
}

/// One observation: a page of it from `offset`, or with `grep`, the lines that hold it.
/// `None` when the session or the entry does not exist.
pub(crate) async fn observation(
    host: &Host,
    session: &str,
    plugin: &str,
    id: &str,
    offset: u64,
    grep: &str,
) -> anyhow::Result<Option<Page>> {
    if record(host, session).await?.is_none() {
        return Ok(None);
    }
    let entries = host.observations(session).await?;
    let Some(entry) = entries.iter().find(|e| e.plugin == plugin && e.id == id) else { return Ok(None) };
    let base = format!("/s/{}/o/{}/{}", url(session), url(plugin), url(id));
    let mut main = format!(
        "<p><a href=\"/s/{}\">← session {}</a></p><h1>Observation {}</h1><p class=\"meta\">{} · {} · {} ({} chars) · sha256 {}</p>\
         <form method=\"get\" action=\"{base}\"><input name=\"grep\" value=\"{}\" placeholder=\"find lines\" aria-label=\"grep\"> \
         <button>grep</button></form>",
        url(session),
        esc(session),
        esc(id),
        esc(plugin),
        esc(&entry.tool),
        bytes(entry.size_bytes),
        entry.size_chars,
        esc(&entry.sha256),
        esc(grep),
    );
    if grep.is_empty() {
        let offset = offset.min(entry.size_bytes);
        let text = reader::page(host, session, entry, offset).await?;
        let end = offset + text.len() as u64;
        let _ = write!(main, "<p class=\"meta\">bytes {offset}–{end} of {}</p>", entry.size_bytes);
        if offset > 0 {
            let _ =
                write!(main, "<a href=\"{base}?offset={}\">← previous</a> ", offset.saturating_sub(reader::PAGE_BYTES));
        }
        if end < entry.size_bytes {
            let _ = write!(main, "<a href=\"{base}?offset={end}\">next →</a>");
        }
        let _ = write!(main, "<pre id=\"content\">{}</pre>", esc(&String::from_utf8_lossy(&text)));
    } else {
        let (matches, stopped) = reader::grep(host, session, entry, grep).await?;
        let more = if stopped { format!(" (the first {})", reader::MAX_MATCHES) } else { String::new() };
        let _ = write!(
            main,
            "<p class=\"meta\">{} matching lines{more}</p><table id=\"matches\"><tr><th>line</th><th>text</th></tr>",
            matches.len()
        );
        for m in &matches {
            let _ = write!(main, "<tr><td>{}</td><td><pre>{}</pre></td></tr>", m.line, esc(&m.text));
        }
        main.push_str("</table>");
    }
    Ok(Some(Page { title: format!("{id} · {session}"), main, stamp: None }))
}

/// The loaded plugins: where each comes from, what identifies it, who signed it, its powers,
/// limits and tools.
pub(crate) async fn plugins(host: &Host, specs: &[PluginSpec]) -> anyhow::Result<Page> {
    let counts = host.event_counts().await?;
    let mut main = String::from(
        "<h1>Plugins</h1><p class=\"meta\">In call order. <em>Events</em> counts the failed calls and quota \
         refusals in the sessions' logs, by kind; the counters of every call a serving process made are at \
         <a href=\"/metrics\">/metrics</a> of that process (docs/metrics.md).</p><table id=\"plugins\"><tr><th>plugin</th>\
         <th>source</th><th>identity</th><th>signed by</th><th>grants</th><th>limits</th><th>tools</th><th>events</th></tr>",
    );
    for p in host.plugins() {
        let source = specs.iter().find(|s| s.name == p.name).map_or_else(String::new, |s| match &s.source {
            PluginSource::Embedded(name) => format!("embedded {name}"),
            PluginSource::File(path) => path.display().to_string(),
            PluginSource::Oci(reference) => format!("oci://{reference}"),
            PluginSource::Bytes(_) => "bytes".into(),
            _ => "another source".into(),
        });
        let tools: Vec<String> = p.tools.iter().map(|t| esc(&t.name)).collect();
        let events: Vec<String> = counts
            .iter()
            .filter(|c| c.plugin == p.name)
            .map(|c| format!("{} {}", esc(c.kind.as_str()), c.count))
            .collect();
        let _ = write!(
            main,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{} ms · {} memory · {} storage · \
             {} keys · {} output</td><td>{}</td><td class=\"events\">{}</td></tr>",
            esc(&p.name),
            esc(&source),
            esc(&p.identity),
            esc(p.signed_by.as_deref().unwrap_or("unsigned")),
            esc(&p.grants.join(", ")),
            p.call_timeout_ms,
            bytes(p.memory_bytes),
            bytes(p.storage_quota_bytes),
            p.storage_max_keys,
            bytes(p.output_bytes),
            tools.join(", "),
            if events.is_empty() { "none".to_owned() } else { events.join(", ") }
        );
    }
    main.push_str("</table>");
    Ok(Page { title: "plugins".into(), main, stamp: None })
}
