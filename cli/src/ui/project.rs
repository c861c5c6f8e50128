//! The viewer's page of one project's recall index: what each plugin keeps there, a search of
//! it, and what the project's next new session would receive in its first prompt (the host's
//! preview, for the message given; nothing is written). Read from the host when asked.

use std::fmt::Write as _;

use scratchpad_host::Host;

use super::html::{esc, time, url};
use super::pages::Page;

/// Most hits a search of the page shows per plugin.
const HITS: u32 = 20;

/// The page of project `key`, with the search `q` and the preview's first `message`.
pub(crate) async fn project(host: &Host, key: &str, q: &str, message: &str) -> anyhow::Result<Option<Page>> {
    if scratchpad_host::check_project(key).is_err() {
        return Ok(None);
    }
    let mut main = format!("<h1>Project {}</h1>", esc(key));
    let usage = host.recall_usage(Some(key)).await?;
    if usage.is_empty() {
        main.push_str("<p class=\"meta\">Nothing kept yet: what the agent saves in this project's sessions is.</p>");
    }
    main.push_str("<table id=\"index\"><tr><th>plugin</th><th>documents</th><th>bytes</th></tr>");
    for plugin in &usage {
        let _ = write!(
            main,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&plugin.plugin),
            plugin.documents,
            plugin.bytes
        );
    }
    main.push_str("</table>");

    let _ = write!(
        main,
        "<h2>Search</h2><form method=\"get\" action=\"/p\"><input type=\"hidden\" name=\"project\" value=\"{0}\">\
         <input name=\"q\" value=\"{1}\" placeholder=\"words\" aria-label=\"search the index\"> \
         <button>search</button></form>",
        esc(key),
        esc(q)
    );
    if !q.is_empty() {
        match host.recall_search(key, q, HITS).await {
            Ok(hits) if hits.is_empty() => main.push_str("<p id=\"hits\">No match.</p>"),
            Ok(hits) => {
                main.push_str("<table id=\"hits\"><tr><th>kind</th><th>session</th><th>when</th><th>text</th></tr>");
                for hit in hits {
                    let d = &hit.document;
                    let _ = write!(
                        main,
                        "<tr><td>{}</td><td><a href=\"/s/{}\">{}</a></td><td>{}</td><td>{}</td></tr>",
                        esc(&d.kind),
                        url(&d.session),
                        esc(&d.session),
                        time(d.at_ms),
                        esc(&hit.snippet)
                    );
                }
                main.push_str("</table>");
            }
            Err(error) => {
                let _ = write!(main, "<p class=\"error\" id=\"hits\">{}</p>", esc(&error.to_string()));
            }
        }
    }

    let _ = write!(
        main,
        "<h2>Next new session</h2><form method=\"get\" action=\"/p\"><input type=\"hidden\" name=\"project\" \
         value=\"{0}\"><input name=\"message\" value=\"{1}\" placeholder=\"its first message\" \
         aria-label=\"first message\"> <button>preview</button></form>",
        esc(key),
        esc(message)
    );
    match host.preview_new_session(key, message).await {
        Ok(prompt) => {
            let text = prompt.render_system_only("");
            let shown = if text.is_empty() { "(nothing)".to_owned() } else { text };
            let _ = write!(
                main,
                "<p class=\"meta\">What its first prompt would carry, as the plugins would inject it now (nothing is \
                 written).</p><pre id=\"next\">{}</pre>",
                esc(&shown)
            );
        }
        Err(error) => {
            let _ = write!(main, "<p class=\"error\" id=\"next\">The preview failed: {}</p>", esc(&error.to_string()));
        }
    }
    Ok(Some(Page { title: format!("project {key}"), main, stamp: None }))
}
