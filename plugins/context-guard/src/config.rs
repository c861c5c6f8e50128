//! The component's configuration: the JSON object the host hands over through the `config`
//! import (the plugin's table in the host's TOML config). Key names follow the context-pressure policy's JSON.
//!
//! Every key, its type and its default is defined here and only here:
//!
//! | Key                                 | Type                    | Default | Meaning |
//! | ----------------------------------- | ----------------------- | ------- | ------- |
//! | `enabled`                           | bool                    | `true`  | `false`: the component does nothing |
//! | `contextWindow`                     | int ≥ 1                 | none    | window size when the turn does not give one |
//! | `showContext`                       | bool                    | `true`  | the `[Context: 156k/200k tokens (78%)]` line in the system prompt |
//! | `memoryFlush.enabled`               | bool                    | `true`  | the flush prompts |
//! | `memoryFlush.thresholds`            | array of threshold      | 50 / 75 / 90 % (the context-pressure policy) | `{percent, prompt, injectAs}` |
//! | `memoryFlush.actionTools`           | array of string         | `["write", "edit"]` | tools that count as acting on the last flush |
//! | `memoryFlush.actionPathPrefix`      | string                  | `"memory/"` | ... when their `path` argument starts with this |
//! | `compaction.reserveTokens`          | int ≥ 0                 | `4000`  | warn when used ≥ window − reserve |
//! | `compaction.warning`                | string                  | `"flush"` | `"flush"` (the flush's 90 % wording), `"notepad"` (the notepad's), or the text itself |
//! | `checkpoint.enabled`                | `"auto"` or bool        | `"auto"` | `"auto"`: when the host has a summarizer |
//! | `checkpoint.tokenThresholdPercents` | array of int 1..=100    | `[25, 50, 75]` | checkpoint at these context percentages |
//! | `checkpoint.turnThreshold`          | int ≥ 0                 | `15`    | ... or every N user messages (0: off) |
//! | `checkpoint.minTokensForGen`        | int ≥ 0                 | `10000` | no checkpoint below this many tokens |
//!
//! A threshold's `injectAs` is `system` (appended to the system prompt), `user` (a message after
//! the user's) or `marked` (the same, headed `[SYSTEM: memory flush]`); a threshold given
//! without one is `marked`, the delivery the context-pressure policy recommends. Unknown keys and wrongly typed
//! values are errors, all named in one message.

use scratchpad_plugin_sdk::config;
use serde_json::{Map, Value};

/// The context-pressure policy's default flush prompts.
pub const FLUSH_50: &str = "Context at 50%. Consider noting key decisions to memory.";
/// The context-pressure policy's 75 % prompt.
pub const FLUSH_75: &str = "Context at 75%. Write important context to memory/YYYY-MM-DD.md now.";
/// The context-pressure policy's urgent 90 % message, also its pre-compaction warning wording.
pub const FLUSH_90: &str = "[SYSTEM: pre-compaction memory flush]\nContext at 90%. Compaction imminent.\nStore durable \
                            memories now (use memory/YYYY-MM-DD.md; create memory/ if needed).\nIf nothing to store, \
                            reply with NO_REPLY.";
/// The header of a `marked` delivery (the context-pressure policy).
pub const MARK: &str = "[SYSTEM: memory flush]";

/// How a flush prompt reaches the agent (the context-pressure policy's delivery methods).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// In the system prompt.
    System,
    /// As a message of its own after the user's.
    User,
    /// As a message of its own, headed by [`MARK`].
    Marked,
}

impl Delivery {
    fn parse(name: &str) -> Option<Delivery> {
        match name {
            "system" => Some(Delivery::System),
            "user" => Some(Delivery::User),
            "marked" => Some(Delivery::Marked),
            _ => None,
        }
    }
}

/// One memory-flush threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threshold {
    /// Context usage, in percent of the window, at which it fires.
    pub percent: u8,
    /// The prompt.
    pub prompt: String,
    /// How it is delivered.
    pub inject_as: Delivery,
}

/// The pre-compaction warning's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Warning {
    /// The context-pressure policy's 90 % wording.
    Flush,
    /// The session notepad's wording (for agents that use the notepad surface).
    Notepad,
    /// A text of the operator's.
    Text(String),
}

/// Whether rolling checkpoints are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointMode {
    /// When the host has a summarizer.
    Auto,
    /// Always: the component refuses to load on a host without a summarizer.
    On,
    /// Never.
    Off,
}

/// The parsed configuration. [`Config::default`] is the configuration of `{}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Whether the component does anything.
    pub enabled: bool,
    /// The window size used when a turn does not give one.
    pub context_window: Option<u64>,
    /// Whether the context line is shown.
    pub show_context: bool,
    /// Whether flush prompts are given.
    pub flush_enabled: bool,
    /// Flush thresholds, sorted by percent.
    pub thresholds: Vec<Threshold>,
    /// Tools whose call on [`Config::action_path_prefix`] counts as acting on the urgent flush.
    pub action_tools: Vec<String>,
    /// The path prefix of memory files.
    pub action_path_prefix: String,
    /// Tokens kept free for the reply: compaction is due at window − reserve.
    pub reserve_tokens: u64,
    /// The pre-compaction warning.
    pub warning: Warning,
    /// Rolling checkpoints.
    pub checkpoints: CheckpointMode,
    /// Context percentages at which a checkpoint is made, sorted.
    pub checkpoint_percents: Vec<u8>,
    /// A checkpoint every this many user messages (0: off).
    pub checkpoint_turns: u32,
    /// No checkpoint below this many tokens.
    pub min_tokens_for_gen: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            context_window: None,
            show_context: true,
            flush_enabled: true,
            thresholds: vec![
                Threshold { percent: 50, prompt: FLUSH_50.into(), inject_as: Delivery::System },
                Threshold { percent: 75, prompt: FLUSH_75.into(), inject_as: Delivery::System },
                Threshold { percent: 90, prompt: FLUSH_90.into(), inject_as: Delivery::User },
            ],
            action_tools: vec!["write".into(), "edit".into()],
            action_path_prefix: "memory/".into(),
            reserve_tokens: 4000,
            warning: Warning::Flush,
            checkpoints: CheckpointMode::Auto,
            checkpoint_percents: vec![25, 50, 75],
            checkpoint_turns: 15,
            min_tokens_for_gen: 10_000,
        }
    }
}

const KEYS: &[&str] = &["enabled", "contextWindow", "showContext", "memoryFlush", "compaction", "checkpoint"];
const FLUSH_KEYS: &[&str] = &["enabled", "thresholds", "actionTools", "actionPathPrefix"];
const COMPACTION_KEYS: &[&str] = &["reserveTokens", "warning"];
const CHECKPOINT_KEYS: &[&str] = &["enabled", "tokenThresholdPercents", "turnThreshold", "minTokensForGen"];

impl Config {
    /// Parses the config object text. `Err` names every offending key in one message.
    pub fn from_json(text: &str) -> Result<Config, String> {
        let map = config::object(text, "context-guard")?;
        let mut config = Config::default();
        let mut errors = Vec::new();
        for (key, value) in &map {
            let result = match key.as_str() {
                "enabled" => config::boolean(key, value).map(|b| config.enabled = b),
                "contextWindow" => {
                    config::integer(key, value, 1, config::MAX_INTEGER).map(|n| config.context_window = Some(n))
                }
                "showContext" => config::boolean(key, value).map(|b| config.show_context = b),
                "memoryFlush" => section(key, value, FLUSH_KEYS, &mut errors, |k, v| config.apply_flush(k, v)),
                "compaction" => section(key, value, COMPACTION_KEYS, &mut errors, |k, v| config.apply_compaction(k, v)),
                "checkpoint" => section(key, value, CHECKPOINT_KEYS, &mut errors, |k, v| config.apply_checkpoint(k, v)),
                _ => Err(format!("unknown key `{key}` (known keys: {})", KEYS.join(", "))),
            };
            if let Err(e) = result {
                errors.push(e);
            }
        }
        if errors.is_empty() { Ok(config) } else { Err(format!("invalid context-guard config: {}", errors.join("; "))) }
    }

    fn apply_flush(&mut self, key: &str, value: &Value) -> Result<(), String> {
        match key {
            "enabled" => self.flush_enabled = config::boolean(&format!("memoryFlush.{key}"), value)?,
            "thresholds" => self.thresholds = thresholds(value)?,
            "actionTools" => self.action_tools = config::strings("memoryFlush.actionTools", value)?,
            "actionPathPrefix" => {
                // An empty prefix would count a write anywhere as acting on the flush.
                self.action_path_prefix = value
                    .as_str()
                    .filter(|prefix| !prefix.is_empty())
                    .ok_or_else(|| format!("`memoryFlush.actionPathPrefix` must be a non-empty string, got {value}"))?
                    .to_owned()
            }
            _ => unreachable!("section() checked the key"),
        }
        Ok(())
    }

    fn apply_compaction(&mut self, key: &str, value: &Value) -> Result<(), String> {
        match key {
            "reserveTokens" => self.reserve_tokens = count(&format!("compaction.{key}"), value)?,
            "warning" => {
                self.warning = match value.as_str() {
                    Some("flush") => Warning::Flush,
                    Some("notepad") => Warning::Notepad,
                    Some(text) if !text.trim().is_empty() => Warning::Text(text.to_owned()),
                    _ => {
                        return Err(format!(
                            "`compaction.warning` must be \"flush\", \"notepad\" or a non-empty text, got {value}"
                        ));
                    }
                }
            }
            _ => unreachable!("section() checked the key"),
        }
        Ok(())
    }

    fn apply_checkpoint(&mut self, key: &str, value: &Value) -> Result<(), String> {
        match key {
            "enabled" => {
                self.checkpoints = match value {
                    Value::Bool(true) => CheckpointMode::On,
                    Value::Bool(false) => CheckpointMode::Off,
                    Value::String(s) if s == "auto" => CheckpointMode::Auto,
                    _ => return Err(format!("`checkpoint.enabled` must be true, false or \"auto\", got {value}")),
                }
            }
            "tokenThresholdPercents" => {
                let wrong = || {
                    format!("`checkpoint.tokenThresholdPercents` must be an array of integers 1 to 100, got {value}")
                };
                let items = value.as_array().ok_or_else(wrong)?;
                let mut percents = Vec::with_capacity(items.len());
                for item in items {
                    let percent = percent(item).ok_or_else(wrong)?;
                    if percents.contains(&percent) {
                        return Err(format!("`checkpoint.tokenThresholdPercents` repeats {percent}, got {value}"));
                    }
                    percents.push(percent);
                }
                percents.sort_unstable();
                self.checkpoint_percents = percents;
            }
            "turnThreshold" => self.checkpoint_turns = config::integer_u32("checkpoint.turnThreshold", value, 0)?,
            "minTokensForGen" => self.min_tokens_for_gen = count("checkpoint.minTokensForGen", value)?,
            _ => unreachable!("section() checked the key"),
        }
        Ok(())
    }

    /// The window size for a turn that says `from_turn`.
    pub fn window(&self, from_turn: Option<u64>) -> Option<u64> {
        from_turn.filter(|&w| w > 0).or(self.context_window)
    }
}

/// Applies every key of the object `value` with `apply`, collecting errors; unknown keys are
/// errors naming the section's known keys.
fn section(
    name: &str,
    value: &Value,
    known: &[&str],
    errors: &mut Vec<String>,
    mut apply: impl FnMut(&str, &Value) -> Result<(), String>,
) -> Result<(), String> {
    let map: &Map<String, Value> =
        value.as_object().ok_or_else(|| format!("`{name}` must be an object, got {value}"))?;
    for (key, value) in map {
        let result = if known.contains(&key.as_str()) {
            apply(key, value)
        } else {
            Err(format!("unknown key `{name}.{key}` (known keys: {})", known.join(", ")))
        };
        if let Err(e) = result {
            errors.push(e);
        }
    }
    Ok(())
}

fn thresholds(value: &Value) -> Result<Vec<Threshold>, String> {
    let shape = "an array of {percent, prompt, injectAs}";
    let items = value.as_array().ok_or_else(|| format!("`memoryFlush.thresholds` must be {shape}, got {value}"))?;
    let mut out: Vec<Threshold> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("memoryFlush.thresholds[{i}]");
        let map = item.as_object().ok_or_else(|| format!("`{at}` must be an object {{percent, prompt, injectAs}}"))?;
        if let Some(key) = map.keys().find(|k| !["percent", "prompt", "injectAs"].contains(&k.as_str())) {
            return Err(format!("unknown key `{at}.{key}` (known keys: percent, prompt, injectAs)"));
        }
        let percent = map
            .get("percent")
            .and_then(percent)
            .ok_or_else(|| format!("`{at}.percent` must be an integer from 1 to 100"))?;
        let prompt = match map.get("prompt").and_then(Value::as_str) {
            Some(p) if !p.trim().is_empty() => p.to_owned(),
            _ => return Err(format!("`{at}.prompt` must be a non-empty string")),
        };
        let inject_as = match map.get("injectAs") {
            None => Delivery::Marked,
            Some(v) => v
                .as_str()
                .and_then(Delivery::parse)
                .ok_or_else(|| format!("`{at}.injectAs` must be \"system\", \"user\" or \"marked\", got {v}"))?,
        };
        if out.iter().any(|t| t.percent == percent) {
            return Err(format!("`{at}.percent` repeats {percent}; each threshold needs its own percentage"));
        }
        out.push(Threshold { percent, prompt, inject_as });
    }
    out.sort_by_key(|t| t.percent);
    Ok(out)
}

fn percent(value: &Value) -> Option<u8> {
    value.as_u64().filter(|n| (1..=100).contains(n)).map(|n| n as u8)
}

fn count(key: &str, value: &Value) -> Result<u64, String> {
    config::integer(key, value, 0, config::MAX_INTEGER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_object_gives_the_specified_defaults() {
        let config = Config::from_json("{}").unwrap();
        assert_eq!(config, Config::default());
        let percents: Vec<u8> = config.thresholds.iter().map(|t| t.percent).collect();
        assert_eq!(percents, [50, 75, 90]);
        assert_eq!(config.thresholds[2].inject_as, Delivery::User);
        assert!(config.thresholds[2].prompt.starts_with("[SYSTEM: pre-compaction memory flush]\nContext at 90%."));
        assert_eq!(config.checkpoint_percents, [25, 50, 75]);
        assert_eq!((config.checkpoint_turns, config.min_tokens_for_gen, config.reserve_tokens), (15, 10_000, 4000));
        assert_eq!(config.checkpoints, CheckpointMode::Auto);
        assert_eq!(config.action_tools, ["write", "edit"]);
    }

    #[test]
    fn a_threshold_without_a_delivery_is_marked_and_thresholds_are_sorted() {
        let config = Config::from_json(
            r#"{"memoryFlush": {"thresholds": [{"percent": 80, "prompt": "b"}, {"percent": 60, "prompt": "a", "injectAs": "system"}]}}"#,
        )
        .unwrap();
        assert_eq!(
            config.thresholds,
            [
                Threshold { percent: 60, prompt: "a".into(), inject_as: Delivery::System },
                Threshold { percent: 80, prompt: "b".into(), inject_as: Delivery::Marked },
            ]
        );
    }

    #[test]
    fn every_key_is_read() {
        let config = Config::from_json(
            r#"{"enabled": false, "contextWindow": 1000, "showContext": false,
                "memoryFlush": {"enabled": false, "actionTools": ["save"], "actionPathPrefix": "notes/"},
                "compaction": {"reserveTokens": 10, "warning": "notepad"},
                "checkpoint": {"enabled": true, "tokenThresholdPercents": [60, 30], "turnThreshold": 0, "minTokensForGen": 5}}"#,
        )
        .unwrap();
        assert!(!config.enabled && !config.show_context && !config.flush_enabled);
        assert_eq!(config.context_window, Some(1000));
        assert_eq!(
            (config.action_tools.as_slice(), config.action_path_prefix.as_str()),
            (&["save".to_owned()][..], "notes/")
        );
        assert_eq!((config.reserve_tokens, &config.warning), (10, &Warning::Notepad));
        assert_eq!(config.checkpoints, CheckpointMode::On);
        assert_eq!(config.checkpoint_percents, [30, 60]);
        assert_eq!((config.checkpoint_turns, config.min_tokens_for_gen), (0, 5));
        let custom = Config::from_json(r#"{"compaction": {"warning": "Save now."}, "checkpoint": {"enabled": false}}"#);
        let custom = custom.unwrap();
        assert_eq!(custom.warning, Warning::Text("Save now.".into()));
        assert_eq!(custom.checkpoints, CheckpointMode::Off);
    }

    #[test]
    fn every_offending_key_is_named_in_one_message() {
        let err = Config::from_json(
            r#"{"enabled": 1, "contextWindow": 0, "colour": "red",
                "memoryFlush": {"thresholds": [{"percent": 120, "prompt": "x"}], "sound": true},
                "compaction": {"reserveTokens": -1, "warning": ""},
                "checkpoint": {"enabled": "sometimes", "tokenThresholdPercents": [0]}}"#,
        )
        .unwrap_err();
        for key in [
            "`enabled`",
            "`contextWindow`",
            "`colour`",
            "`memoryFlush.thresholds[0].percent`",
            "`memoryFlush.sound`",
            "`compaction.reserveTokens`",
            "`compaction.warning`",
            "`checkpoint.enabled`",
            "`checkpoint.tokenThresholdPercents`",
        ] {
            assert!(err.contains(key), "{key} missing from: {err}");
        }
    }

    #[test]
    fn thresholds_must_be_well_formed() {
        let err = |json: &str| Config::from_json(json).unwrap_err();
        assert!(err(r#"{"memoryFlush": {"thresholds": [{"percent": 50}]}}"#).contains("prompt` must be a non-empty"));
        assert!(
            err(r#"{"memoryFlush": {"thresholds": [{"percent": 50, "prompt": "a", "injectAs": "shout"}]}}"#)
                .contains("injectAs")
        );
        assert!(
            err(r#"{"memoryFlush": {"thresholds": [{"percent": 50, "prompt": "a"}, {"percent": 50, "prompt": "b"}]}}"#)
                .contains("repeats 50")
        );
        assert!(
            err(r#"{"memoryFlush": {"thresholds": [{"percent": 50, "prompt": "a", "when": 1}]}}"#)
                .contains("unknown key `memoryFlush.thresholds[0].when`")
        );
        assert!(err("[]").contains("JSON object"));
        // Repeats are refused alike for the checkpoint percentages.
        assert!(err(r#"{"checkpoint": {"tokenThresholdPercents": [25, 50, 25]}}"#).contains("repeats 25"));
        // An empty prefix would count a write anywhere as acting on the flush.
        assert!(err(r#"{"memoryFlush": {"actionPathPrefix": ""}}"#).contains("non-empty string"));
    }

    #[test]
    fn the_turns_window_wins_over_the_configured_one() {
        let config = Config { context_window: Some(100), ..Config::default() };
        assert_eq!(config.window(Some(200)), Some(200));
        assert_eq!(config.window(None), Some(100));
        assert_eq!(config.window(Some(0)), Some(100));
        assert_eq!(Config::default().window(None), None);
    }
}
