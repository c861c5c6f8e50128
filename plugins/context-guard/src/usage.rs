//! How full the context is: the runtime's figure when it gives one, else an estimate (the context-pressure policy's
//! two-pronged token tracking), and the `[Context: 156k/200k tokens (78%)]` line.

/// Where a token figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The runtime said so (its API's reported usage): always wins.
    Runtime,
    /// Estimated with the host's tokenizer: the last known figure plus what was added since.
    Estimate,
}

/// Tokens in use against a context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Tokens the conversation uses.
    pub tokens: u64,
    /// Where `tokens` comes from.
    pub source: Source,
}

impl Usage {
    /// The runtime's figure when there is one, else `base` plus `added` (both estimates).
    pub fn new(from_runtime: Option<u64>, base: Option<u64>, added: impl FnOnce() -> u64) -> Usage {
        match from_runtime {
            Some(tokens) => Usage { tokens, source: Source::Runtime },
            None => Usage { tokens: base.unwrap_or(0).saturating_add(added()), source: Source::Estimate },
        }
    }

    /// Whole percent of `window` in use (see [`percent_of`]).
    pub fn percent(&self, window: u64) -> u64 {
        percent_of(self.tokens, window)
    }
}

/// Whole percent of `window` that `tokens` fill, rounded down (so a threshold is never claimed
/// early); 0 for an empty window, saturating instead of overflowing.
pub fn percent_of(tokens: u64, window: u64) -> u64 {
    if window == 0 {
        return 0;
    }
    let percent = u128::from(tokens) * 100 / u128::from(window);
    u64::try_from(percent).unwrap_or(u64::MAX)
}

/// The highest of `percents` at or below `percent`, unless it was already given in this
/// compaction cycle (`fired`). Every percentage at or below `percent` counts as given
/// afterwards, so a jump from 40 % to 92 % fires once (at 90), not three times, and each
/// threshold fires at most once per cycle.
pub fn newly_crossed(percents: &[u8], fired: &mut Vec<u8>, percent: u64) -> Option<u8> {
    let crossed: Vec<u8> = percents.iter().copied().filter(|p| u64::from(*p) <= percent).collect();
    let highest = *crossed.iter().max()?;
    let is_new = !fired.contains(&highest);
    for p in crossed {
        if !fired.contains(&p) {
            fired.push(p);
        }
    }
    fired.sort_unstable();
    is_new.then_some(highest)
}

/// The context-pressure policy's context line: `[Context: 156k/200k tokens (78%)]`.
pub fn context_line(usage: Usage, window: u64) -> String {
    format!("[Context: {}/{} tokens ({}%)]", thousands(usage.tokens), thousands(window), usage.percent(window))
}

/// `156000` → `156k` (to the nearest thousand); below a thousand, the number itself.
fn thousands(n: u64) -> String {
    if n < 1000 { n.to_string() } else { format!("{}k", n.saturating_add(500) / 1000) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtimes_figure_wins_over_the_estimate() {
        let mut estimated = false;
        let usage = Usage::new(Some(156_000), Some(1), || {
            estimated = true;
            5
        });
        assert_eq!(usage, Usage { tokens: 156_000, source: Source::Runtime });
        assert!(!estimated, "no estimate is made when the runtime gives its figure");
        assert_eq!(Usage::new(None, Some(100), || 7), Usage { tokens: 107, source: Source::Estimate });
        assert_eq!(Usage::new(None, None, || 7).tokens, 7);
    }

    #[test]
    fn the_context_line_reads_like_the_specified_example() {
        let usage = Usage { tokens: 156_000, source: Source::Runtime };
        assert_eq!(context_line(usage, 200_000), "[Context: 156k/200k tokens (78%)]");
        let small = Usage { tokens: 850, source: Source::Estimate };
        assert_eq!(context_line(small, 8_000), "[Context: 850/8k tokens (10%)]");
    }

    #[test]
    fn percentages_round_down() {
        let usage = Usage { tokens: 179_999, source: Source::Runtime };
        assert_eq!(usage.percent(200_000), 89);
        assert_eq!(Usage { tokens: 180_000, ..usage }.percent(200_000), 90);
        assert_eq!(usage.percent(0), 0);
        assert_eq!(Usage { tokens: u64::MAX, ..usage }.percent(1), u64::MAX, "saturates instead of wrapping");
    }
}
