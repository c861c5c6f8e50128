//! The context-pressure policy's rolling-checkpoint triggers: 25 / 50 / 75 % of the window or every 15 user
//! messages, whichever comes first, never below `minTokensForGen`.

use scratchpad_plugin_sdk::Trigger;

use crate::config::Config;
use crate::state::GuardState;
use crate::usage::{newly_crossed, percent_of};

/// The trigger of the checkpoint due now, if one is. `tokens` is the conversation's size,
/// `window` the context window when known, `messages` the user messages so far. Updates the
/// cycle's given thresholds; the caller records `messages` as the last checkpoint's count when
/// the request goes through.
pub fn due(
    config: &Config,
    state: &mut GuardState,
    tokens: u64,
    window: Option<u64>,
    messages: u32,
) -> Option<Trigger> {
    if tokens < config.min_tokens_for_gen {
        return None;
    }
    let by_tokens = window.and_then(|window| {
        let percent = percent_of(tokens, window);
        newly_crossed(&config.checkpoint_percents, &mut state.checkpoint_fired, percent).map(Trigger::TokenPercent)
    });
    let since = messages.saturating_sub(state.messages_at_checkpoint);
    let by_messages =
        (config.checkpoint_turns > 0 && since >= config.checkpoint_turns).then_some(Trigger::MessageCount(since));
    by_tokens.or(by_messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config { min_tokens_for_gen: 10_000, ..Config::default() }
    }

    fn percent(trigger: Option<Trigger>) -> Option<u8> {
        match trigger {
            Some(Trigger::TokenPercent(p)) => Some(p),
            _ => None,
        }
    }

    #[test]
    fn token_thresholds_fire_once_per_cycle() {
        let (config, mut state) = (config(), GuardState::default());
        assert_eq!(percent(due(&config, &mut state, 40_000, Some(200_000), 1)), None);
        assert_eq!(percent(due(&config, &mut state, 50_000, Some(200_000), 2)), Some(25));
        assert_eq!(percent(due(&config, &mut state, 60_000, Some(200_000), 3)), None);
        assert_eq!(percent(due(&config, &mut state, 160_000, Some(200_000), 4)), Some(75));
        assert_eq!(state.checkpoint_fired, [25, 50, 75]);
    }

    #[test]
    fn every_fifteen_user_messages_a_checkpoint_is_due() {
        let (config, mut state) = (config(), GuardState::default());
        assert!(due(&config, &mut state, 20_000, None, 14).is_none());
        assert!(matches!(due(&config, &mut state, 20_000, None, 15), Some(Trigger::MessageCount(15))));
        state.messages_at_checkpoint = 15;
        assert!(due(&config, &mut state, 20_000, None, 29).is_none());
        assert!(matches!(due(&config, &mut state, 20_000, None, 30), Some(Trigger::MessageCount(15))));
    }

    #[test]
    fn nothing_is_due_below_min_tokens_for_gen() {
        let (config, mut state) = (config(), GuardState::default());
        assert!(due(&config, &mut state, 9_999, Some(20_000), 100).is_none());
        assert!(state.checkpoint_fired.is_empty(), "a skipped threshold is still due later");
    }

    #[test]
    fn tokens_win_when_both_triggers_are_due() {
        let (config, mut state) = (config(), GuardState::default());
        assert_eq!(percent(due(&config, &mut state, 110_000, Some(200_000), 20)), Some(50));
    }

    #[test]
    fn a_zero_turn_threshold_turns_the_message_trigger_off() {
        let config = Config { checkpoint_turns: 0, ..config() };
        assert!(due(&config, &mut GuardState::default(), 20_000, None, 1000).is_none());
    }
}
