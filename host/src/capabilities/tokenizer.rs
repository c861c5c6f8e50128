//! The tokenizer a host counts with: a real BPE tokenizer (tiktoken's encodings), loaded on its
//! first count and counting a long text in steps that end where no token can span the cut (see
//! [`step_end`]), so a stepped count is exact and can stop at a deadline between steps.

use std::time::Instant;

use tiktoken_rs::CoreBPE;

use crate::config::Encoding;

/// A BPE encoding, loaded on its first count and shared process-wide. Loading takes tens of
/// milliseconds, so a short-lived process that counts nothing (a hook that only reads state)
/// never pays it.
pub struct Tokenizer {
    encoding: Encoding,
}

impl Tokenizer {
    /// The tokenizer for `encoding`; nothing is loaded until the first count.
    pub fn new(encoding: Encoding) -> Self {
        Tokenizer { encoding }
    }

    fn bpe(&self) -> &'static CoreBPE {
        match self.encoding {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        }
    }

    /// Tokens in `text`. Special-token markers in the text count as ordinary text.
    pub fn count(&self, text: &str) -> u32 {
        self.bpe().encode_ordinary(text).len() as u32
    }

    /// Tokens in `text`, counted in steps of about `step` bytes; `None` when `deadline` passes
    /// first.
    pub(crate) fn count_until(&self, text: &str, step: usize, deadline: Option<Instant>) -> Option<u32> {
        let (mut total, mut rest) = (0u32, text);
        while !rest.is_empty() {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return None;
            }
            let (piece, tail) = rest.split_at(step_end(rest, step));
            total = total.saturating_add(self.count(piece));
            rest = tail;
        }
        Some(total)
    }

    /// The encoding's name.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("encoding", &self.encoding).finish()
    }
}

/// Bytes counted between two looks at the deadline (tens of milliseconds at most).
pub(crate) const STEP_BYTES: usize = 64 << 10;

/// Where the next step of at most `max` bytes of `text` ends: before a space that follows a
/// non-whitespace character and precedes another. In both of tiktoken's encodings (cl100k,
/// o200k) no pre-tokenizer piece that starts at a non-whitespace character extends into a
/// following space, and the piece that starts at the space is found the same way whether the
/// text before it is there or not, so counting the two sides apart gives the same total.
/// Only a run of `max / 2` bytes with no such space (not text a model reads) is cut at a
/// character boundary instead, where the count may differ by a token.
fn step_end(text: &str, max: usize) -> usize {
    if text.len() <= max {
        return text.len();
    }
    let bytes = text.as_bytes();
    let safe = |i: usize| {
        bytes[i] == b' '
            && text[..i].chars().next_back().is_some_and(|c| !c.is_whitespace())
            && text[i + 1..].chars().next().is_some_and(|c| !c.is_whitespace())
    };
    if let Some(i) = (max / 2..max).rev().find(|&i| safe(i)) {
        return i;
    }
    (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_known_cl100k_values() {
        let t = Tokenizer::new(Encoding::Cl100kBase);
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("hello world"), 2);
        // "tiktoken is great!" is 6 tokens in cl100k_base (OpenAI's cookbook example).
        assert_eq!(t.count("tiktoken is great!"), 6);
    }

    #[test]
    fn counting_in_steps_gives_the_exact_count() {
        // Text of every kind a model reads: words, contractions, numbers, punctuation, runs of
        // spaces, newlines and tabs, non-Latin scripts and emoji, in a scrambled order.
        let words = [
            "The",
            "plan:",
            "1.",
            "fix",
            "parser.rs",
            "it's",
            "they'll",
            "12345",
            "678,",
            "(see",
            "notes)",
            "ünïcödé",
            "日本語テキスト",
            "🎉🎉",
            "\n\n",
            "  indented",
            "\tand",
            "x  ",
            "mixed-CASE",
            "WordsLike",
            "https://example.com/a/b?c=d",
            "{\"k\":",
            "[1,2,3]}",
            "--flag=value",
            "3.14159",
            "...",
            "—",
            "I'm",
        ];
        let mut text = String::new();
        let mut seed: u32 = 7;
        for _ in 0..6000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            text.push_str(words[(seed >> 16) as usize % words.len()]);
            text.push(' ');
        }
        for encoding in [Encoding::Cl100kBase, Encoding::O200kBase] {
            let t = Tokenizer::new(encoding);
            let whole = t.count(&text);
            for step in [100, 257, 1000, 4096] {
                assert_eq!(t.count_until(&text, step, None), Some(whole), "{encoding:?}, step {step}");
            }
        }
    }

    #[test]
    fn a_run_with_no_safe_cut_is_counted_within_a_token_per_cut() {
        let t = Tokenizer::new(Encoding::Cl100kBase);
        for run in ["a".repeat(3000), " ".repeat(3000), "🎉".repeat(800)] {
            let (whole, stepped) = (t.count(&run), t.count_until(&run, 256, None).unwrap());
            let cuts = run.len().div_ceil(128) as u32;
            assert!(whole.abs_diff(stepped) <= cuts, "{whole} vs {stepped} over {cuts} cuts");
        }
    }

    #[test]
    fn a_passed_deadline_stops_the_count() {
        let t = Tokenizer::new(Encoding::Cl100kBase);
        let past = Instant::now() - std::time::Duration::from_millis(1);
        assert_eq!(t.count_until(&"word ".repeat(1000), 64, Some(past)), None);
        assert_eq!(t.count_until("", 64, Some(past)), Some(0));
    }
}
