//! `scratchpad setup codex`: the integration's fragment (`integrations/codex/config.toml`, the
//! file a user could also append by hand) merged into Codex's `config.toml` with `toml_edit`,
//! so everything already there stays, comments and order included:
//! - `[features] hooks = true` is set in the user's `[features]` (created when missing);
//! - `[mcp_servers.scratchpad]` is replaced whole;
//! - each `[[hooks.<Event>]]` entry of ours is removed, then the fragment's are appended, so the
//!   user's own hooks for the same events stay and ours are there once.
//!
//! Every command names the binary by its absolute path (Codex starts hooks and MCP servers
//! from its own `PATH`). Running it again gives the same file.

use std::path::Path;

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

/// The fragment, as committed (`cli/setup/codex.toml` links `integrations/codex/config.toml`).
const FRAGMENT: &str = include_str!("../../setup/codex.toml");
/// The name the fragment's commands run the binary by, replaced with its path.
const PROGRAM: &str = "scratchpad";

/// `existing` (the text of Codex's configuration, empty when there is none) with the fragment
/// merged in, its commands running `binary`; or why `existing` cannot be edited (its parse
/// error names the line).
pub(crate) fn merge(existing: &str, binary: &Path) -> Result<String, String> {
    let mut doc: DocumentMut = existing.parse().map_err(|e: toml_edit::TomlError| e.to_string())?;
    let fragment = fragment(binary);

    remove_ours(&mut doc);
    let mut position = last_position(doc.as_table()) + 1;
    let mut place = |table: &mut Table| {
        table.set_position(Some(position));
        position += 1;
    };

    match doc.get_mut("features") {
        Some(Item::Table(features)) => {
            features.insert("hooks", value(true));
        }
        Some(other) => return Err(format!("`features` must be a table, not {}", other.type_name())),
        None => {
            let mut features = fragment["features"].as_table().expect("the fragment has [features]").clone();
            place(&mut features);
            doc.insert("features", Item::Table(features));
        }
    }

    let servers = implicit_table(&mut doc, "mcp_servers")?;
    let mut server = fragment["mcp_servers"]["scratchpad"].as_table().expect("the fragment has the server").clone();
    place(&mut server);
    servers.insert("scratchpad", Item::Table(server));

    let fragment_hooks = fragment["hooks"].as_table().expect("the fragment has hooks");
    let hooks = implicit_table(&mut doc, "hooks")?;
    for (event, entries) in fragment_hooks.iter() {
        let entries = entries.as_array_of_tables().expect("each event is an array of tables");
        let list = match hooks.entry(event).or_insert(Item::ArrayOfTables(ArrayOfTables::new())) {
            Item::ArrayOfTables(list) => list,
            other => return Err(format!("`hooks.{event}` must be an array of tables, not {}", other.type_name())),
        };
        for entry in entries.iter() {
            let mut entry = entry.clone();
            place(&mut entry);
            for inner in
                entry.get_mut("hooks").and_then(Item::as_array_of_tables_mut).into_iter().flat_map(|a| a.iter_mut())
            {
                place(inner);
            }
            list.push(entry);
        }
    }
    Ok(doc.to_string())
}

/// The fragment with every command running `binary`.
fn fragment(binary: &Path) -> DocumentMut {
    let mut fragment: DocumentMut = FRAGMENT.parse().expect("the committed fragment is TOML");
    let path = binary.to_string_lossy();
    fragment["mcp_servers"]["scratchpad"]["command"] = value(path.as_ref());
    let quoted = crate::shell::quote(&path);
    for (_, entries) in fragment["hooks"].as_table_mut().expect("the fragment has hooks").iter_mut() {
        for entry in entries.as_array_of_tables_mut().into_iter().flat_map(|a| a.iter_mut()) {
            for hook in entry["hooks"].as_array_of_tables_mut().into_iter().flat_map(|a| a.iter_mut()) {
                let command = hook["command"].as_str().expect("a hook has a command");
                let rest = command.strip_prefix(PROGRAM).expect("the fragment's hooks run `scratchpad`");
                hook["command"] = value(format!("{quoted}{rest}"));
            }
        }
    }
    fragment
}

/// Removes what an earlier setup (or a hand-appended fragment) put in: the server, and every
/// hook entry whose command runs `scratchpad hook`.
fn remove_ours(doc: &mut DocumentMut) {
    if let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_like_mut) {
        servers.remove("scratchpad");
    }
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else { return };
    for (_, entries) in hooks.iter_mut() {
        if let Some(list) = entries.as_array_of_tables_mut() {
            list.retain(|entry| !is_ours(entry));
        }
    }
    let emptied: Vec<String> = hooks
        .iter()
        .filter(|(_, entries)| entries.as_array_of_tables().is_some_and(ArrayOfTables::is_empty))
        .map(|(event, _)| event.to_owned())
        .collect();
    for event in emptied {
        hooks.remove(&event);
    }
}

/// Whether a `[[hooks.<Event>]]` entry runs `scratchpad hook`.
fn is_ours(entry: &Table) -> bool {
    entry.get("hooks").and_then(Item::as_array_of_tables).into_iter().flat_map(|a| a.iter()).any(|hook| {
        hook.get("command").and_then(Item::as_str).is_some_and(|command| {
            let program = command.split(" hook ").next().unwrap_or_default().trim_matches(['\'', '"']);
            command.contains(" hook ") && (program.ends_with(PROGRAM) || program.ends_with("scratchpad.exe"))
        })
    })
}

/// The table `key` of `doc`, created implicit (no header of its own) when missing.
fn implicit_table<'a>(doc: &'a mut DocumentMut, key: &str) -> Result<&'a mut Table, String> {
    let item = doc.entry(key).or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let type_name = item.type_name();
    item.as_table_mut().ok_or_else(|| format!("`{key}` must be a table, not {type_name}"))
}

/// The highest position of any table in `table`, recursively (0 when none has one).
fn last_position(table: &Table) -> isize {
    let mut last = table.position().unwrap_or(0);
    for (_, item) in table.iter() {
        match item {
            Item::Table(inner) => last = last.max(last_position(inner)),
            Item::ArrayOfTables(list) => {
                for inner in list.iter() {
                    last = last.max(last_position(inner));
                }
            }
            _ => {}
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    const BINARY: &str = "/home/u/.local/share/scratchpad/bin/scratchpad";

    fn merged(existing: &str) -> String {
        merge(existing, Path::new(BINARY)).unwrap()
    }

    #[test]
    fn an_empty_file_gets_the_fragment_with_the_binarys_path() {
        let out = merged("");
        let doc: DocumentMut = out.parse().unwrap();
        assert_eq!(doc["features"]["hooks"].as_bool(), Some(true));
        assert_eq!(doc["mcp_servers"]["scratchpad"]["command"].as_str(), Some(BINARY));
        let start = &doc["hooks"]["SessionStart"].as_array_of_tables().unwrap();
        assert_eq!(start.len(), 1);
        assert_eq!(
            start.get(0).unwrap()["hooks"].as_array_of_tables().unwrap().get(0).unwrap()["command"].as_str(),
            Some(format!("{BINARY} hook --runtime codex --tool-prefix mcp__scratchpad__ --no-guidance").as_str())
        );
    }

    #[test]
    fn what_is_there_stays_and_a_second_run_changes_nothing() {
        let existing = "# my settings\nmodel = \"o5\"\n\n[features]\nweb_search = true\n\n[mcp_servers.other]\ncommand = \"other\"\n\n\
                        [[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"notify-send done\"\n";
        let once = merged(existing);
        let doc: DocumentMut = once.parse().unwrap();
        assert!(once.starts_with("# my settings\nmodel = \"o5\"\n"), "{once}");
        assert_eq!(doc["features"]["web_search"].as_bool(), Some(true));
        assert_eq!(doc["features"]["hooks"].as_bool(), Some(true));
        assert_eq!(doc["mcp_servers"]["other"]["command"].as_str(), Some("other"));
        let stop = doc["hooks"]["Stop"].as_array_of_tables().unwrap();
        assert_eq!(stop.len(), 2, "the user's Stop hook and ours: {once}");
        assert_eq!(stop.get(0).unwrap()["hooks"][0]["command"].as_str(), Some("notify-send done"));
        assert_eq!(merged(&once), once, "idempotent");
    }

    #[test]
    fn a_hand_appended_fragment_is_replaced_not_doubled() {
        let appended = format!("model = \"o5\"\n{FRAGMENT}");
        let out = merged(&appended);
        let doc: DocumentMut = out.parse().unwrap();
        assert_eq!(doc["hooks"]["PreToolUse"].as_array_of_tables().unwrap().len(), 1, "{out}");
        assert_eq!(doc["mcp_servers"]["scratchpad"]["command"].as_str(), Some(BINARY));
        assert_eq!(merged(&out), out);
    }

    #[test]
    fn a_path_with_spaces_is_quoted_for_the_shell() {
        let out = merge("", Path::new("/Users/A B/bin/scratchpad")).unwrap();
        assert!(out.contains("command = \"'/Users/A B/bin/scratchpad' hook --runtime codex"), "{out}");
        let doc: DocumentMut = out.parse().unwrap();
        assert_eq!(doc["mcp_servers"]["scratchpad"]["command"].as_str(), Some("/Users/A B/bin/scratchpad"));
    }

    #[test]
    fn a_malformed_file_is_refused_naming_the_line() {
        let error = merge("model = \"o5\"\n[features\nhooks = true\n", Path::new(BINARY)).unwrap_err();
        assert!(error.contains("line 2"), "{error}");
    }

    #[test]
    fn a_features_key_that_is_not_a_table_is_refused() {
        let error = merge("features = 3\n", Path::new(BINARY)).unwrap_err();
        assert!(error.contains("`features` must be a table, not integer"), "{error}");
    }
}
