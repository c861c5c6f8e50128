//! `scratchpad setup gemini`: the integration's fragment (`integrations/gemini/settings.json`,
//! the settings a user could also merge by hand) merged into Gemini CLI's `settings.json`,
//! keeping everything already there in its order:
//! - `mcpServers.scratchpad` is replaced whole;
//! - each hook entry of ours (`hooks.<Event>[]` whose command runs `scratchpad hook`) is
//!   removed, then the fragment's are appended, so the user's own hooks for the same events
//!   stay and ours are there once.
//!
//! Gemini CLI reads its settings with comments allowed; they are not kept (the previous file,
//! comments included, is kept as `settings.json.bak`, and the caller says so). Every command
//! names the binary by its absolute path. Running it again gives the same file.

use std::path::Path;

use super::jsonc::{Json, strip_comments};

/// The fragment, as committed (`cli/setup/gemini.json` links `integrations/gemini/settings.json`).
const FRAGMENT: &str = include_str!("../../setup/gemini.json");
/// The name the fragment's commands run the binary by, replaced with its path.
const PROGRAM: &str = "scratchpad";
/// The MCP server's name, which its tools are named by (`mcp_scratchpad_<tool>`).
const SERVER: &str = "scratchpad";

/// What merging did besides the text.
pub(crate) struct Merged {
    /// The new settings.
    pub(crate) text: String,
    /// The old settings had comments, which the new text does not keep.
    pub(crate) dropped_comments: bool,
}

/// `existing` (the text of Gemini CLI's settings, empty when there are none) with the fragment
/// merged in, its commands running `binary`; or why `existing` cannot be edited (its parse
/// error names the line).
pub(crate) fn merge(existing: &str, binary: &Path) -> Result<Merged, String> {
    let (uncommented, dropped_comments) = strip_comments(existing);
    let mut settings = if uncommented.trim().is_empty() {
        Json::Object(Vec::new())
    } else {
        serde_json::from_str::<Json>(&uncommented).map_err(|e| e.to_string())?
    };
    let Json::Object(top) = &mut settings else { return Err("the settings must be a JSON object".into()) };
    let Json::Object(fragment) = fragment(binary) else { unreachable!("the fragment is an object") };

    let servers = object(top, "mcpServers")?;
    servers.retain(|(name, _)| name != SERVER);
    let ours = get(&fragment, "mcpServers").and_then(|s| get(s.as_object()?, SERVER)).expect("the server").clone();
    servers.push((SERVER.to_owned(), ours));

    let hooks = object(top, "hooks")?;
    for (_, entries) in hooks.iter_mut() {
        if let Json::Array(list) = entries {
            list.retain(|entry| !is_ours(entry));
        }
    }
    hooks.retain(|(_, entries)| !matches!(entries, Json::Array(list) if list.is_empty()));
    let fragment_hooks = get(&fragment, "hooks").and_then(Json::as_object).expect("the fragment has hooks");
    for (event, entries) in fragment_hooks {
        let Json::Array(entries) = entries else { unreachable!("each event is an array") };
        let list = match hooks.iter().position(|(name, _)| name == event) {
            Some(at) => &mut hooks[at].1,
            None => {
                hooks.push((event.clone(), Json::Array(Vec::new())));
                &mut hooks.last_mut().expect("just pushed").1
            }
        };
        match list {
            Json::Array(list) => list.extend(entries.iter().cloned()),
            other => return Err(format!("`hooks.{event}` must be an array, not {}", other.kind())),
        }
    }
    let mut text = serde_json::to_string_pretty(&settings).expect("settings serialize");
    text.push('\n');
    Ok(Merged { text, dropped_comments })
}

/// The fragment with every command running `binary`.
fn fragment(binary: &Path) -> Json {
    let mut fragment: Json = serde_json::from_str(FRAGMENT).expect("the committed fragment is JSON");
    let path = binary.to_string_lossy().into_owned();
    // Gemini CLI runs a hook's command with `bash -c`, on Windows with PowerShell, where a
    // quoted path is a string until `&` calls it (untested there).
    let quoted = match cfg!(windows) {
        true => format!("& '{}'", path.replace('\'', "''")),
        false => crate::shell::quote(&path),
    };
    let Json::Object(top) = &mut fragment else { unreachable!() };
    for (key, value) in top.iter_mut() {
        match key.as_str() {
            "mcpServers" => {
                let server = value.as_object_mut().and_then(|s| get_mut(s, SERVER)).and_then(Json::as_object_mut);
                let command = server.and_then(|s| get_mut(s, "command")).expect("the server has a command");
                *command = Json::Scalar(path.clone().into());
            }
            "hooks" => {
                for (_, entries) in value.as_object_mut().expect("hooks is an object") {
                    for hook in hooks_of(entries) {
                        let command = hook.as_object_mut().and_then(|h| get_mut(h, "command")).expect("a command");
                        let Json::Scalar(serde_json::Value::String(text)) = command else { unreachable!() };
                        let rest = text.strip_prefix(PROGRAM).expect("the fragment's hooks run `scratchpad`");
                        *command = Json::Scalar(format!("{quoted}{rest}").into());
                    }
                }
            }
            _ => {}
        }
    }
    fragment
}

/// The hook handlers (`{"type", "command", …}`) of an event's entries.
fn hooks_of(entries: &mut Json) -> impl Iterator<Item = &mut Json> {
    let list = match entries {
        Json::Array(list) => list.as_mut_slice(),
        _ => &mut [],
    };
    list.iter_mut().filter_map(|entry| entry.as_object_mut().and_then(|e| get_mut(e, "hooks"))).flat_map(|hooks| {
        match hooks {
            Json::Array(hooks) => hooks.as_mut_slice(),
            _ => &mut [],
        }
    })
}

/// Whether an entry of `hooks.<Event>` runs `scratchpad hook`.
fn is_ours(entry: &Json) -> bool {
    let hooks = entry.as_object().and_then(|e| get(e, "hooks"));
    let Some(Json::Array(hooks)) = hooks else { return false };
    hooks.iter().any(|hook| {
        let command = hook.as_object().and_then(|h| get(h, "command"));
        let Some(Json::Scalar(serde_json::Value::String(command))) = command else { return false };
        let program = command.split(" hook ").next().unwrap_or_default().trim_matches(['\'', '"', '&', ' ']);
        command.contains(" hook ") && (program.ends_with(PROGRAM) || program.ends_with("scratchpad.exe"))
    })
}

/// The object under `key` of `top`, created (last) when missing.
fn object<'a>(top: &'a mut Vec<(String, Json)>, key: &str) -> Result<&'a mut Vec<(String, Json)>, String> {
    let at = match top.iter().position(|(name, _)| name == key) {
        Some(at) => at,
        None => {
            top.push((key.to_owned(), Json::Object(Vec::new())));
            top.len() - 1
        }
    };
    let kind = top[at].1.kind();
    top[at].1.as_object_mut().ok_or_else(|| format!("`{key}` must be an object, not {kind}"))
}

fn get<'a>(object: &'a [(String, Json)], key: &str) -> Option<&'a Json> {
    object.iter().find(|(name, _)| name == key).map(|(_, value)| value)
}

fn get_mut<'a>(object: &'a mut [(String, Json)], key: &str) -> Option<&'a mut Json> {
    object.iter_mut().find(|(name, _)| name == key).map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    const BINARY: &str = "/home/u/.local/share/scratchpad/bin/scratchpad";

    fn merged(existing: &str) -> String {
        merge(existing, Path::new(BINARY)).unwrap().text
    }

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn an_empty_file_gets_the_fragment_with_the_binarys_path() {
        let out = parsed(&merged(""));
        assert_eq!(out["mcpServers"]["scratchpad"]["command"], BINARY);
        assert_eq!(out["mcpServers"]["scratchpad"]["trust"], true);
        for event in ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent"] {
            let command = out["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap();
            assert!(command.starts_with(&format!("{BINARY} hook --runtime gemini ")), "{event}: {command}");
            assert!(command.ends_with("; exit 0"), "a missing binary must not deny: {command}");
        }
    }

    #[test]
    fn what_is_there_stays_in_its_order_and_a_second_run_changes_nothing() {
        let existing = r#"{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "model": {"name": "gemini-2.5-flash"},
  "mcpServers": {"other": {"command": "other", "args": ["--x"]}},
  "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
}"#;
        let once = merged(existing);
        let keys: Vec<String> = parsed(&once).as_object().unwrap().keys().cloned().collect();
        assert!(once.find("security").unwrap() < once.find("\"model\"").unwrap(), "{once}");
        assert!(once.find("\"model\"").unwrap() < once.find("mcpServers").unwrap(), "{once}");
        assert_eq!(keys.len(), 4, "{once}");
        let out = parsed(&once);
        assert_eq!(out["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(out["mcpServers"]["other"]["args"][0], "--x");
        let after = out["hooks"]["AfterAgent"].as_array().unwrap();
        assert_eq!(after.len(), 2, "the user's AfterAgent hook and ours: {once}");
        assert_eq!(after[0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(merged(&once), once, "idempotent");
    }

    #[test]
    fn comments_are_read_and_said_to_be_dropped() {
        let existing = "// mine\n{\n  \"a\": \"http://x/*y*/\", /* inline */ \"b\": 1\n}\n";
        let merged = merge(existing, Path::new(BINARY)).unwrap();
        assert!(merged.dropped_comments);
        let out = parsed(&merged.text);
        assert_eq!((out["a"].as_str(), out["b"].as_u64()), (Some("http://x/*y*/"), Some(1)));
        assert!(!merge("{\"a\": \"//not a comment\"}", Path::new(BINARY)).unwrap().dropped_comments);
    }

    #[test]
    fn a_path_with_spaces_is_quoted_for_the_shell() {
        let out = parsed(&merge("", Path::new("/Users/A B/bin/scratchpad")).unwrap().text);
        let command = out["hooks"]["BeforeAgent"][0]["hooks"][0]["command"].as_str().unwrap();
        assert!(command.starts_with("'/Users/A B/bin/scratchpad' hook --runtime gemini"), "{command}");
        assert_eq!(out["mcpServers"]["scratchpad"]["command"], "/Users/A B/bin/scratchpad");
    }

    #[test]
    fn malformed_settings_are_refused_naming_the_line() {
        let error = merge("{\n  \"model\": {\n  \"name\": \n}\n", Path::new(BINARY)).err().unwrap();
        assert!(error.contains("line 4"), "{error}");
        let error = merge("[1]", Path::new(BINARY)).err().unwrap();
        assert!(error.contains("must be a JSON object"), "{error}");
        let error = merge("{\"hooks\": 3}", Path::new(BINARY)).err().unwrap();
        assert!(error.contains("`hooks` must be an object, not a number"), "{error}");
        let error = merge("{\"hooks\": {\"BeforeTool\": {}}}", Path::new(BINARY)).err().unwrap();
        assert!(error.contains("`hooks.BeforeTool` must be an array, not an object"), "{error}");
    }
}
