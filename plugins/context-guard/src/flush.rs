//! The context-pressure policy's multi-threshold memory flush: which prompt is due, how it is delivered, and
//! whether a tool call acts on the urgent one (`flushActioned`).

use scratchpad_plugin_sdk::args::Args;
use scratchpad_plugin_sdk::{Injection, Placement, ToolCall};

use crate::config::{Config, Delivery, MARK, Threshold};
use crate::usage::newly_crossed;

/// The flush prompt due at `percent` of the window, if any (see [`newly_crossed`]).
pub fn due<'a>(thresholds: &'a [Threshold], fired: &mut Vec<u8>, percent: u64) -> Option<&'a Threshold> {
    let percents: Vec<u8> = thresholds.iter().map(|t| t.percent).collect();
    let due = newly_crossed(&percents, fired, percent)?;
    thresholds.iter().find(|t| t.percent == due)
}

/// Whether `threshold` is the urgent one (the highest configured; the context-pressure policy's 90 %), after
/// which the agent's memory writes are tracked.
pub fn is_urgent(thresholds: &[Threshold], threshold: &Threshold) -> bool {
    thresholds.last().is_some_and(|last| last.percent == threshold.percent)
}

/// The prompt as an injection: `system` goes into the system prompt, `user` and `marked` after
/// the user's message as a message of their own (`marked` headed by `[SYSTEM: memory flush]`).
pub fn injection(threshold: &Threshold) -> Injection {
    let (placement, text) = match threshold.inject_as {
        Delivery::System => (Placement::AppendSystem, threshold.prompt.clone()),
        Delivery::User => (Placement::AppendContext, threshold.prompt.clone()),
        Delivery::Marked => (Placement::AppendContext, format!("{MARK}\n{}", threshold.prompt)),
    };
    Injection { placement, text }
}

/// Whether `call` writes a memory file: one of the configured write/edit tools with a `path`
/// (or `file_path`) argument under the memory prefix (the context-pressure policy's flush action check).
pub fn is_memory_write(config: &Config, call: &ToolCall) -> bool {
    if !config.action_tools.contains(&call.name) {
        return false;
    }
    let Ok(args) = Args::parse(&call.arguments) else {
        return false;
    };
    ["path", "file_path"].iter().filter_map(|field| args.value(field)?.as_str()).any(|path| {
        let path = path.strip_prefix("./").unwrap_or(path);
        path.starts_with(&config.action_path_prefix)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_threshold_fires_once_as_it_is_crossed() {
        let thresholds = Config::default().thresholds;
        let mut fired = Vec::new();
        assert!(due(&thresholds, &mut fired, 49).is_none());
        assert_eq!(due(&thresholds, &mut fired, 50).map(|t| t.percent), Some(50));
        assert!(due(&thresholds, &mut fired, 60).is_none(), "50 % is not given twice in a cycle");
        assert_eq!(due(&thresholds, &mut fired, 75).map(|t| t.percent), Some(75));
        assert_eq!(due(&thresholds, &mut fired, 95).map(|t| t.percent), Some(90));
        assert!(due(&thresholds, &mut fired, 99).is_none());
        assert_eq!(fired, [50, 75, 90]);
    }

    #[test]
    fn a_jump_past_several_thresholds_gives_only_the_highest() {
        let thresholds = Config::default().thresholds;
        let mut fired = Vec::new();
        assert_eq!(due(&thresholds, &mut fired, 92).map(|t| t.percent), Some(90));
        assert_eq!(fired, [50, 75, 90]);
        assert!(due(&thresholds, &mut fired, 80).is_none(), "lower thresholds count as given");
    }

    #[test]
    fn deliveries_map_onto_placements() {
        let t = |inject_as| Threshold { percent: 50, prompt: "Save.".into(), inject_as };
        let system = injection(&t(Delivery::System));
        assert_eq!((system.placement, system.text.as_str()), (Placement::AppendSystem, "Save."));
        let user = injection(&t(Delivery::User));
        assert_eq!((user.placement, user.text.as_str()), (Placement::AppendContext, "Save."));
        let marked = injection(&t(Delivery::Marked));
        assert_eq!(
            (marked.placement, marked.text.as_str()),
            (Placement::AppendContext, "[SYSTEM: memory flush]\nSave.")
        );
    }

    #[test]
    fn only_the_highest_threshold_is_urgent() {
        let thresholds = Config::default().thresholds;
        assert!(is_urgent(&thresholds, &thresholds[2]));
        assert!(!is_urgent(&thresholds, &thresholds[1]));
    }

    #[test]
    fn memory_writes_are_write_or_edit_calls_under_memory() {
        let config = Config::default();
        let call = |name: &str, arguments: &str| ToolCall { name: name.into(), arguments: arguments.into(), step: 1 };
        assert!(is_memory_write(&config, &call("write", r#"{"path":"memory/2026-11-22.md","content":"x"}"#)));
        assert!(is_memory_write(&config, &call("edit", r#"{"file_path":"./memory/notes.md"}"#)));
        assert!(!is_memory_write(&config, &call("write", r#"{"path":"src/main.rs"}"#)));
        assert!(!is_memory_write(&config, &call("read", r#"{"path":"memory/a.md"}"#)));
        assert!(!is_memory_write(&config, &call("write", "not json")));
        assert!(!is_memory_write(&config, &call("write", r#"{"path": 3}"#)));
    }
}
