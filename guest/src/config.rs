//! The component's configuration: the JSON object the host hands over through the `config`
//! import (the plugin's table in the host's TOML config, `{}` when there is none).
//!
//! Every key, its type and its default is defined here and only here:
//!
//! | Key                      | Type            | Default             | Meaning |
//! | ------------------------ | --------------- | ------------------- | ------- |
//! | `enabled`                | bool            | `true`              | `false`: no tools, no injection, no guidance |
//! | `notesMaxChars`          | int ≥ 1         | `4000`              | limit of the notes space (also the notepad) |
//! | `planMaxChars`           | int ≥ 1         | `2000`              | limit of the plan space |
//! | `refsMaxItems`           | int ≥ 1         | `50`                | capacity of the refs space |
//! | `tokenBudget`            | bool            | `false`             | also limit notes to `maxTokens` tokens |
//! | `maxTokens`              | int ≥ 1         | `2000`              | the token budget of notes when `tokenBudget` is on |
//! | `surfaces`               | array of string | `["scratchpad"]`    | tools offered: `scratchpad`, `notepad` |
//! | `placement`              | string          | `"prepend-context"` | where the block goes (any WIT placement) |
//! | `nudgeAfterTurns`        | int ≥ 0         | `0` (off)           | hint when still empty after N turns |
//! | `nudgeOnPlanDetected`    | int ≥ 0         | `0` (off)           | hint when a reply has a plan and all is empty |
//! | `nudgeAfterCompaction`   | int ≥ 0         | `0` (off)           | hint after each compaction |
//! | `nudgeTurnsSinceLastUse` | int ≥ 0         | `0` (off)           | hint when not updated for N turns |
//! | `recall.enabled`         | bool            | `true`              | `false`: no indexing, no recall block, no recall tools |
//! | `recall.budgetTokens`    | int 0..=8000    | `600`               | tokens of the first turn's recall block (`0`: no block) |
//! | `recall.maxHits`         | int 1..=50      | `8`                 | most lines in the recall block |
//!
//! `recall` is a table (`{"recall": {"budgetTokens": 400}}`); its keys are camelCase like the
//! others.
//!
//! Unknown keys and wrongly typed values are errors; [`Config::from_json`] collects every one
//! of them into a single message so a user fixes the config in one pass.

use scratchpad_plugin_sdk::{Placement, config};
use serde_json::Value;

/// A set of tools the component can offer to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `session.scratchpad` with its actions (the session scratchpad and the scratchpad extension).
    Scratchpad,
    /// `read_notepad`, `write_notepad`, `update_notepad` (the session notepad).
    Notepad,
}

impl Surface {
    /// The name used for this surface in the config.
    pub fn name(self) -> &'static str {
        match self {
            Surface::Scratchpad => "scratchpad",
            Surface::Notepad => "notepad",
        }
    }

    fn parse(name: &str) -> Option<Surface> {
        [Surface::Scratchpad, Surface::Notepad].into_iter().find(|s| s.name() == name)
    }
}

/// Nudge thresholds of the session scratchpad. `0` means off everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Nudges {
    /// Hint once when every space is still empty at turn index ≥ N.
    pub after_turns: u32,
    /// Any value > 0: hint when a reply contains a plan while every space is empty.
    pub on_plan_detected: u32,
    /// Any value > 0: hint on the turn after each compaction.
    pub after_compaction: u32,
    /// Hint once per stretch of N turns in which the non-empty scratchpad was not updated.
    pub turns_since_last_use: u32,
}

/// Recall settings: what earlier sessions of the project left (see `recall.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecallConfig {
    /// Whether the component indexes what the agent saves, injects the recall block and offers
    /// the recall tools.
    pub enabled: bool,
    /// Tokens (host tokenizer) the first turn's recall block may use; `0`: no block.
    pub budget_tokens: u32,
    /// Most lines (documents) in the recall block.
    pub max_hits: u32,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig { enabled: true, budget_tokens: 600, max_hits: 8 }
    }
}

/// Largest `recall.budgetTokens`.
pub const RECALL_MAX_BUDGET_TOKENS: u64 = 8000;
/// Largest `recall.maxHits` (the most the host's index returns at once).
pub const RECALL_MAX_HITS: u64 = 50;

/// The parsed configuration. [`Config::default`] is the configuration of `{}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Whether the component does anything at all.
    pub enabled: bool,
    /// Limit of the notes space in chars (Unicode scalar values).
    pub notes_max_chars: usize,
    /// Limit of the plan space in chars.
    pub plan_max_chars: usize,
    /// Capacity of the refs space in items.
    pub refs_max_items: usize,
    /// Whether `max_tokens` limits notes on top of `notes_max_chars`.
    pub token_budget: bool,
    /// Token budget of notes (counted with the host's tokenizer) when `token_budget` is on.
    pub max_tokens: u32,
    /// The tool surfaces offered to the model, without duplicates, in config order.
    pub surfaces: Vec<Surface>,
    /// Where the scratchpad block and the hints are injected.
    pub placement: Placement,
    /// Nudge thresholds.
    pub nudges: Nudges,
    /// Recall settings.
    pub recall: RecallConfig,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            notes_max_chars: 4000,
            plan_max_chars: 2000,
            refs_max_items: 50,
            token_budget: false,
            max_tokens: 2000,
            surfaces: vec![Surface::Scratchpad],
            placement: Placement::PrependContext,
            nudges: Nudges::default(),
            recall: RecallConfig::default(),
        }
    }
}

/// Every accepted key, in documentation order (used in the unknown-key message).
const KEYS: &[&str] = &[
    "enabled",
    "notesMaxChars",
    "planMaxChars",
    "refsMaxItems",
    "tokenBudget",
    "maxTokens",
    "surfaces",
    "placement",
    "nudgeAfterTurns",
    "nudgeOnPlanDetected",
    "nudgeAfterCompaction",
    "nudgeTurnsSinceLastUse",
    "recall",
];

/// Every accepted key of the `recall` table.
const RECALL_KEYS: &[&str] = &["enabled", "budgetTokens", "maxHits"];

const PLACEMENTS: &[(&str, Placement)] = &[
    ("prepend-system", Placement::PrependSystem),
    ("append-system", Placement::AppendSystem),
    ("prepend-context", Placement::PrependContext),
    ("append-context", Placement::AppendContext),
];

impl Config {
    /// Parses the config object text. `Err` names every offending key in one message.
    pub fn from_json(text: &str) -> Result<Config, String> {
        let map = config::object(text, "scratchpad")?;
        let mut config = Config::default();
        let mut errors = Vec::new();
        for (key, value) in &map {
            let result =
                if key == "recall" { config.apply_recall(value, &mut errors) } else { config.apply(key, value) };
            if let Err(e) = result {
                errors.push(e);
            }
        }
        if errors.is_empty() { Ok(config) } else { Err(format!("invalid scratchpad config: {}", errors.join("; "))) }
    }

    fn apply(&mut self, key: &str, value: &Value) -> Result<(), String> {
        match key {
            "enabled" => self.enabled = config::boolean(key, value)?,
            "notesMaxChars" => self.notes_max_chars = positive(key, value)? as usize,
            "planMaxChars" => self.plan_max_chars = positive(key, value)? as usize,
            "refsMaxItems" => self.refs_max_items = positive(key, value)? as usize,
            "tokenBudget" => self.token_budget = config::boolean(key, value)?,
            "maxTokens" => self.max_tokens = positive(key, value)?,
            "surfaces" => self.surfaces = surfaces(key, value)?,
            "placement" => self.placement = placement(key, value)?,
            "nudgeAfterTurns" => self.nudges.after_turns = count(key, value)?,
            "nudgeOnPlanDetected" => self.nudges.on_plan_detected = count(key, value)?,
            "nudgeAfterCompaction" => self.nudges.after_compaction = count(key, value)?,
            "nudgeTurnsSinceLastUse" => self.nudges.turns_since_last_use = count(key, value)?,
            _ => {
                return Err(format!("unknown key `{key}` (known keys: {})", KEYS.join(", ")));
            }
        }
        Ok(())
    }

    /// Applies the `recall` table, pushing an error for each offending key.
    fn apply_recall(&mut self, value: &Value, errors: &mut Vec<String>) -> Result<(), String> {
        let table = value.as_object().ok_or_else(|| format!("`recall` must be a table (an object), got {value}"))?;
        for (key, value) in table {
            let name = format!("recall.{key}");
            let recall = &mut self.recall;
            let result = match key.as_str() {
                "enabled" => config::boolean(&name, value).map(|b| recall.enabled = b),
                "budgetTokens" => {
                    config::integer(&name, value, 0, RECALL_MAX_BUDGET_TOKENS).map(|n| recall.budget_tokens = n as u32)
                }
                "maxHits" => config::integer(&name, value, 1, RECALL_MAX_HITS).map(|n| recall.max_hits = n as u32),
                _ => Err(format!("unknown key `{name}` (known keys of `recall`: {})", RECALL_KEYS.join(", "))),
            };
            if let Err(e) = result {
                errors.push(e);
            }
        }
        Ok(())
    }

    /// Whether `surface` is offered to the model.
    pub fn offers(&self, surface: Surface) -> bool {
        self.surfaces.contains(&surface)
    }

    /// The notes token budget, when the token budget is on.
    pub fn notes_max_tokens(&self) -> Option<u32> {
        self.token_budget.then_some(self.max_tokens)
    }
}

fn count(key: &str, value: &Value) -> Result<u32, String> {
    config::integer_u32(key, value, 0)
}

fn positive(key: &str, value: &Value) -> Result<u32, String> {
    config::integer_u32(key, value, 1)
}

fn surfaces(key: &str, value: &Value) -> Result<Vec<Surface>, String> {
    let wrong = || format!("`{key}` must be an array of \"scratchpad\" and/or \"notepad\", got {value}");
    let items = value.as_array().ok_or_else(wrong)?;
    let mut surfaces = Vec::new();
    for item in items {
        let surface = item.as_str().and_then(Surface::parse).ok_or_else(wrong)?;
        if !surfaces.contains(&surface) {
            surfaces.push(surface);
        }
    }
    Ok(surfaces)
}

fn placement(key: &str, value: &Value) -> Result<Placement, String> {
    let name = value.as_str().unwrap_or_default();
    PLACEMENTS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p).ok_or_else(|| {
        let names: Vec<&str> = PLACEMENTS.iter().map(|(n, _)| *n).collect();
        format!("`{key}` must be one of {}, got {value}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_object_gives_every_default() {
        let config = Config::from_json("{}").unwrap();
        assert_eq!(config, Config::default());
        assert!(config.enabled);
        assert_eq!((config.notes_max_chars, config.plan_max_chars, config.refs_max_items), (4000, 2000, 50));
        assert!(!config.token_budget);
        assert_eq!(config.max_tokens, 2000);
        assert_eq!(config.surfaces, vec![Surface::Scratchpad]);
        assert_eq!(config.placement, Placement::PrependContext);
        assert_eq!(config.nudges, Nudges::default());
        assert_eq!(config.notes_max_tokens(), None);
        assert_eq!(config.recall, RecallConfig { enabled: true, budget_tokens: 600, max_hits: 8 });
    }

    #[test]
    fn every_key_is_read() {
        let config = Config::from_json(
            r#"{"enabled": false, "notesMaxChars": 10, "planMaxChars": 20, "refsMaxItems": 3,
                "tokenBudget": true, "maxTokens": 7, "surfaces": ["notepad", "scratchpad", "notepad"],
                "placement": "append-system", "nudgeAfterTurns": 5, "nudgeOnPlanDetected": 1,
                "nudgeAfterCompaction": 1, "nudgeTurnsSinceLastUse": 4}"#,
        )
        .unwrap();
        assert!(!config.enabled);
        assert_eq!((config.notes_max_chars, config.plan_max_chars, config.refs_max_items), (10, 20, 3));
        assert_eq!(config.notes_max_tokens(), Some(7));
        assert_eq!(config.surfaces, vec![Surface::Notepad, Surface::Scratchpad]);
        assert_eq!(config.placement, Placement::AppendSystem);
        assert_eq!(
            config.nudges,
            Nudges { after_turns: 5, on_plan_detected: 1, after_compaction: 1, turns_since_last_use: 4 }
        );
    }

    #[test]
    fn the_recall_table_is_read_and_partial_tables_keep_the_other_defaults() {
        let config = Config::from_json(r#"{"recall": {"enabled": false, "budgetTokens": 0, "maxHits": 50}}"#).unwrap();
        assert_eq!(config.recall, RecallConfig { enabled: false, budget_tokens: 0, max_hits: 50 });
        let config = Config::from_json(r#"{"recall": {"budgetTokens": 8000}}"#).unwrap();
        assert_eq!(config.recall, RecallConfig { budget_tokens: 8000, ..RecallConfig::default() });
    }

    #[test]
    fn every_offending_recall_key_is_named_with_its_table() {
        let err = Config::from_json(
            r#"{"recall": {"enabled": 1, "budgetTokens": 8001, "maxHits": 0, "depth": 2}, "planMaxChars": 0}"#,
        )
        .unwrap_err();
        for key in ["`recall.enabled`", "`recall.budgetTokens`", "`recall.maxHits`", "`recall.depth`", "`planMaxChars`"]
        {
            assert!(err.contains(key), "{key} missing from: {err}");
        }
        assert!(Config::from_json(r#"{"recall": {"maxHits": 51}}"#).unwrap_err().contains("from 1 to 50"));
        assert!(Config::from_json(r#"{"recall": true}"#).unwrap_err().contains("`recall` must be a table"));
    }

    #[test]
    fn all_four_placements_are_accepted() {
        for (name, placement) in PLACEMENTS {
            let config = Config::from_json(&format!(r#"{{"placement": "{name}"}}"#)).unwrap();
            assert_eq!(config.placement, *placement);
        }
    }

    #[test]
    fn every_offending_key_is_named_in_one_message() {
        let err = Config::from_json(
            r#"{"enabled": "yes", "notesMaxChars": 0, "surfaces": ["notes"], "placement": "top",
                "nudgeAfterTurns": -1, "colour": "blue"}"#,
        )
        .unwrap_err();
        for key in ["`enabled`", "`notesMaxChars`", "`surfaces`", "`placement`", "`nudgeAfterTurns`", "`colour`"] {
            assert!(err.contains(key), "{key} missing from: {err}");
        }
    }

    #[test]
    fn non_object_and_non_json_configs_are_errors() {
        assert!(Config::from_json("[]").unwrap_err().contains("JSON object"));
        assert!(Config::from_json("{").unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn fractional_and_oversized_numbers_are_rejected() {
        assert!(Config::from_json(r#"{"maxTokens": 1.5}"#).unwrap_err().contains("`maxTokens`"));
        assert!(Config::from_json(r#"{"refsMaxItems": 99999999999}"#).unwrap_err().contains("`refsMaxItems`"));
    }

    #[test]
    fn an_empty_surface_list_offers_no_tools() {
        let config = Config::from_json(r#"{"surfaces": []}"#).unwrap();
        assert!(!config.offers(Surface::Scratchpad) && !config.offers(Surface::Notepad));
    }
}
