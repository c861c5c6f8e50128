//! The component's configuration: the JSON object the host hands over through the `config`
//! import (the plugin's table in the host's TOML config, `{}` when there is none).
//!
//! Every key, its type and its default is defined here and only here:
//!
//! | Key                | Type    | Default   | Meaning |
//! | ------------------ | ------- | --------- | ------- |
//! | `enabled`          | bool    | `true`    | `false`: nothing is offloaded, no tool, no reference resolution |
//! | `thresholdBytes`   | int ≥ 0 | `4096`    | observations larger than this (bytes) are offloaded |
//! | `ttlSeconds`       | int ≥ 1 | `3600`    | time to live of an offloaded entry |
//! | `headChars`        | int ≥ 0 | `500`     | characters of the start shown in a text summary |
//! | `tailChars`        | int ≥ 0 | `500`     | characters of the end shown in a text summary |
//! | `defaultReadChars` | int ≥ 1 | `2000`    | `n` of `scratchpad_read` head/tail when not given |
//! | `fullWarnBytes`    | int ≥ 0 | `65536`   | `full` on a larger entry works but the result carries a `warning` |
//! | `grepMaxMatches`   | int ≥ 1 | `20`      | `max_matches` of `scratchpad_read` grep when not given |
//! | `maxReadBytes`     | int ≥ 1 | `262144`  | most content bytes one `scratchpad_read` returns |
//! | `maxArgumentBytes` | int ≥ 1 | `1000000` | most bytes a call's arguments may have after `{{stepN.field}}` is resolved |
//!
//! `thresholdBytes` compares with the observation's size in bytes as the host holds it: when a
//! tool's result is JSON text, that is the size of the JSON text (the large-observation store's
//! `len(json.dumps(observation))`).
//!
//! `maxReadBytes` should stay well below the host's per-call output cap (`output_bytes`, 1 MiB
//! by default): a result is JSON, so newlines and quotes in the content take two bytes and
//! base64 takes four bytes for three. `maxArgumentBytes` must stay below that cap too: the
//! rewritten arguments are `before-tool-call`'s output.
//!
//! Unknown keys and wrongly typed values are errors; [`Config::from_json`] collects every one
//! of them into a single message so a user fixes the config in one pass.

use scratchpad_plugin_sdk::config;
use serde_json::Value;

/// The parsed configuration. [`Config::default`] is the configuration of `{}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Whether the component does anything at all.
    pub enabled: bool,
    /// Observations of more than this many bytes are offloaded; the others pass through.
    pub threshold_bytes: u64,
    /// Time to live of an offloaded entry, in seconds.
    pub ttl_seconds: u64,
    /// Characters of the start of a text observation shown in its summary.
    pub head_chars: u64,
    /// Characters of the end of a text observation shown in its summary.
    pub tail_chars: u64,
    /// `n` of `scratchpad_read` head and tail when the call does not give it.
    pub default_read_chars: u64,
    /// `full` on an entry of more bytes than this carries a warning.
    pub full_warn_bytes: u64,
    /// `max_matches` of `scratchpad_read` grep when the call does not give it.
    pub grep_max_matches: u64,
    /// The most content bytes a single read returns (longer reads are cut, with a note).
    pub max_read_bytes: u64,
    /// The most bytes a call's arguments may have once `{{stepN.field}}` references are
    /// resolved (they are `before-tool-call`'s output, under the host's output cap).
    pub max_argument_bytes: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            enabled: true,
            threshold_bytes: 4096,
            ttl_seconds: 3600,
            head_chars: 500,
            tail_chars: 500,
            default_read_chars: 2000,
            full_warn_bytes: 64 * 1024,
            grep_max_matches: 20,
            max_read_bytes: 256 * 1024,
            max_argument_bytes: 1_000_000,
        }
    }
}

/// Every accepted key, in documentation order (used in the unknown-key message).
const KEYS: &[&str] = &[
    "enabled",
    "thresholdBytes",
    "ttlSeconds",
    "headChars",
    "tailChars",
    "defaultReadChars",
    "fullWarnBytes",
    "grepMaxMatches",
    "maxReadBytes",
    "maxArgumentBytes",
];

impl Config {
    /// Parses the config object text. `Err` names every offending key in one message.
    pub fn from_json(text: &str) -> Result<Config, String> {
        let map = config::object(text, "observations")?;
        let mut config = Config::default();
        let errors: Vec<String> = map.iter().filter_map(|(key, value)| config.apply(key, value).err()).collect();
        if errors.is_empty() { Ok(config) } else { Err(format!("invalid observations config: {}", errors.join("; "))) }
    }

    fn apply(&mut self, key: &str, value: &Value) -> Result<(), String> {
        match key {
            "enabled" => {
                self.enabled = value.as_bool().ok_or_else(|| format!("`{key}` must be true or false, got {value}"))?
            }
            "thresholdBytes" => self.threshold_bytes = integer(key, value, 0)?,
            "ttlSeconds" => self.ttl_seconds = integer(key, value, 1)?,
            "headChars" => self.head_chars = integer(key, value, 0)?,
            "tailChars" => self.tail_chars = integer(key, value, 0)?,
            "defaultReadChars" => self.default_read_chars = integer(key, value, 1)?,
            "fullWarnBytes" => self.full_warn_bytes = integer(key, value, 0)?,
            "grepMaxMatches" => self.grep_max_matches = integer(key, value, 1)?,
            "maxReadBytes" => self.max_read_bytes = integer(key, value, 1)?,
            "maxArgumentBytes" => self.max_argument_bytes = integer(key, value, 1)?,
            _ => return Err(format!("unknown key `{key}` (known keys: {})", KEYS.join(", "))),
        }
        Ok(())
    }
}

fn integer(key: &str, value: &Value, min: u64) -> Result<u64, String> {
    config::integer(key, value, min, config::MAX_INTEGER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_object_gives_every_default() {
        let config = Config::from_json("{}").unwrap();
        assert_eq!(config, Config::default());
        assert!(config.enabled);
        assert_eq!((config.threshold_bytes, config.ttl_seconds), (4096, 3600));
        assert_eq!((config.head_chars, config.tail_chars, config.default_read_chars), (500, 500, 2000));
        assert_eq!((config.full_warn_bytes, config.grep_max_matches, config.max_read_bytes), (65536, 20, 262144));
    }

    #[test]
    fn every_key_is_read() {
        let config = Config::from_json(
            r#"{"enabled": false, "thresholdBytes": 0, "ttlSeconds": 60, "headChars": 10, "tailChars": 0,
                "defaultReadChars": 7, "fullWarnBytes": 100, "grepMaxMatches": 3, "maxReadBytes": 999,
                "maxArgumentBytes": 5000}"#,
        )
        .unwrap();
        let expected = Config {
            enabled: false,
            threshold_bytes: 0,
            ttl_seconds: 60,
            head_chars: 10,
            tail_chars: 0,
            default_read_chars: 7,
            full_warn_bytes: 100,
            grep_max_matches: 3,
            max_read_bytes: 999,
            max_argument_bytes: 5000,
        };
        assert_eq!(config, expected);
    }

    #[test]
    fn every_offending_key_is_named_in_one_message() {
        let err = Config::from_json(
            r#"{"enabled": "yes", "thresholdBytes": -1, "ttlSeconds": 0, "headChars": 1.5, "tailChars": "500",
                "defaultReadChars": 0, "grepMaxMatches": null, "maxReadBytes": 0, "colour": "blue"}"#,
        )
        .unwrap_err();
        for key in [
            "`enabled`",
            "`thresholdBytes`",
            "`ttlSeconds`",
            "`headChars`",
            "`tailChars`",
            "`defaultReadChars`",
            "`grepMaxMatches`",
            "`maxReadBytes`",
            "`colour`",
        ] {
            assert!(err.contains(key), "{key} missing from: {err}");
        }
        assert!(err.contains("known keys: enabled, thresholdBytes"), "{err}");
    }

    #[test]
    fn non_object_and_non_json_configs_are_errors() {
        assert!(Config::from_json("[]").unwrap_err().contains("JSON object"));
        assert!(Config::from_json("{").unwrap_err().contains("not valid JSON"));
    }
}
