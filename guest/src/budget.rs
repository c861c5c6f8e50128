//! Size limits of the text spaces: counting, truncation, over-limit checks and the usage line.
//!
//! "Chars" are Unicode scalar values (`str::chars`), so a truncation never splits a
//! character. Tokens are counted with the host's tokenizer through [`Tokenizer`]; the token
//! budget applies to notes only, on top of the char limit (the scratchpad extension's `maxTokens` caps its
//! single scratchpad text, which is the notes space here).

use scratchpad_plugin_sdk::Tokenizer;

use crate::config::Config;

/// The limits of one text space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextLimit {
    /// Maximum length in chars.
    pub max_chars: usize,
    /// Maximum length in tokens, when a token budget applies.
    pub max_tokens: Option<u32>,
}

impl TextLimit {
    /// The limits of notes (the notepad).
    pub fn notes(config: &Config) -> TextLimit {
        TextLimit { max_chars: config.notes_max_chars, max_tokens: config.notes_max_tokens() }
    }

    /// The limits of the plan.
    pub fn plan(config: &Config) -> TextLimit {
        TextLimit { max_chars: config.plan_max_chars, max_tokens: None }
    }
}

/// Number of chars (Unicode scalar values) in `text`.
pub fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// The longest prefix of `text` with at most `max` chars.
pub fn truncate_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// Longest word (chars, with the whitespace before it) whose every prefix [`truncate_tokens`]
/// tries; in a longer one (a URL, a hash, base64) it searches.
const SCANNED_WORD_CHARS: usize = 32;

/// The longest prefix of `text`, cut at a char boundary, that counts at most `max` tokens.
///
/// Prefix counts of a BPE tokenizer grow with the prefix at word ends, but not inside a word:
/// a cut word can count more tokens than the whole word (in cl100k_base "fiv" is two tokens,
/// "five" one), so a binary search over every char can stop inside a word that fits whole.
/// Hence a binary search over word ends for the last one within the budget (about log2(words)
/// tokenizer calls), then the longest prefix of the next word that fits: every prefix of it,
/// longest first, or a binary search in a word longer than [`SCANNED_WORD_CHARS`].
pub fn truncate_tokens<'s>(text: &'s str, max: u32, tokens: &impl Tokenizer) -> &'s str {
    if tokens.count(text) <= max {
        return text;
    }
    let fits = |end: usize| tokens.count(&text[..end]) <= max;
    // Byte offsets where a word ends (a non-whitespace char followed by whitespace).
    let word_ends = text
        .char_indices()
        .zip(text.chars().skip(1))
        .filter_map(|((at, c), next)| (!c.is_whitespace() && next.is_whitespace()).then_some(at + c.len_utf8()));
    let cuts: Vec<usize> = [0].into_iter().chain(word_ends).chain([text.len()]).collect();
    let word = last_fitting(&cuts, fits);
    let (start, end) = (cuts[word], cuts[word + 1]);
    // The next word's char boundaries: `start` fits, `end` does not.
    let chars: Vec<usize> = text[start..end].char_indices().map(|(i, _)| start + i).chain([end]).collect();
    let kept = if chars.len() - 1 <= SCANNED_WORD_CHARS {
        chars.iter().rev().skip(1).copied().find(|&cut| cut == start || fits(cut)).unwrap_or(start)
    } else {
        chars[last_fitting(&chars, fits)]
    };
    &text[..kept]
}

/// The index of the last of `cuts` (increasing; the first fits, the last does not) that fits,
/// by binary search.
fn last_fitting(cuts: &[usize], fits: impl Fn(usize) -> bool) -> usize {
    let (mut fitting, mut too_long) = (0, cuts.len() - 1);
    while too_long - fitting > 1 {
        let mid = fitting + (too_long - fitting) / 2;
        if fits(cuts[mid]) {
            fitting = mid;
        } else {
            too_long = mid;
        }
    }
    fitting
}

/// What a truncation cut off, for the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Chars of the text as given.
    pub original_chars: usize,
    /// Tokens of the text as given (when a token budget applies).
    pub original_tokens: Option<u32>,
    /// Whether the char limit cut the text.
    pub by_chars: bool,
    /// Whether the token budget cut the text.
    pub by_tokens: bool,
}

impl Cut {
    /// The scratchpad extension's truncation warning about `subject` ("Scratchpad", "Notes", ...), e.g.
    /// `Scratchpad truncated to 2000 tokens (original: 3200). Consider summarizing.`
    pub fn message(&self, subject: &str, limit: &TextLimit) -> String {
        let chars = format!("{} chars (original: {})", limit.max_chars, self.original_chars);
        let tokens = format!(
            "{} tokens (original: {})",
            limit.max_tokens.unwrap_or_default(),
            self.original_tokens.unwrap_or_default()
        );
        let what = match (self.by_chars, self.by_tokens) {
            (true, true) => format!("{chars} and {tokens}"),
            (false, true) => tokens,
            _ => chars,
        };
        format!("{subject} truncated to {what}. Consider summarizing.")
    }
}

/// `text` fitted into `limit`: the kept prefix and, when something was cut, what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit<'s> {
    /// The kept prefix.
    pub kept: &'s str,
    /// `Some` when the text was truncated.
    pub cut: Option<Cut>,
}

/// Truncates `text` to the char limit, then to the token budget if one applies.
pub fn fit<'s>(text: &'s str, limit: &TextLimit, tokens: &impl Tokenizer) -> Fit<'s> {
    let by_chars_kept = truncate_chars(text, limit.max_chars);
    let by_chars = by_chars_kept.len() < text.len();
    let (kept, original_tokens) = match limit.max_tokens {
        None => (by_chars_kept, None),
        Some(max) => (truncate_tokens(by_chars_kept, max, tokens), Some(tokens.count(text))),
    };
    let by_tokens = kept.len() < by_chars_kept.len();
    let cut =
        (by_chars || by_tokens).then(|| Cut { original_chars: char_count(text), original_tokens, by_chars, by_tokens });
    Fit { kept, cut }
}

/// Why a growing edit does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Over {
    /// `"char"` or `"token"`: the limit that the result breaks.
    pub unit: &'static str,
    /// The limit.
    pub max: u64,
    /// Size of the current text.
    pub current: u64,
    /// Size of the text being added.
    pub added: u64,
    /// Size the result would have.
    pub result: u64,
}

/// Checks that `result` (the text after an edit of `current` that adds `added`) fits `limit`:
/// the char limit first, then the token budget. An edit that does not grow a text already
/// over a limit (stored before the limit was lowered) passes that limit: it can only help, and
/// refusing it would leave a full rewrite as the only way back under the limit.
pub fn check(current: &str, added: &str, result: &str, limit: &TextLimit, tokens: &impl Tokenizer) -> Result<(), Over> {
    let result_chars = char_count(result);
    if result_chars > limit.max_chars && result_chars > char_count(current) {
        return Err(Over {
            unit: "char",
            max: limit.max_chars as u64,
            current: char_count(current) as u64,
            added: char_count(added) as u64,
            result: result_chars as u64,
        });
    }
    if let Some(max) = limit.max_tokens {
        let result_tokens = tokens.count(result);
        if result_tokens > max && result_tokens > tokens.count(current) {
            return Err(Over {
                unit: "token",
                max: max.into(),
                current: tokens.count(current).into(),
                added: tokens.count(added).into(),
                result: result_tokens.into(),
            });
        }
    }
    Ok(())
}

/// The usage of a text space, e.g. `notes 812/4000 chars` or, with a token budget,
/// `notes 812/4000 chars, 203/2000 tokens`.
pub fn text_usage(label: &str, text: &str, limit: &TextLimit, tokens: &impl Tokenizer) -> String {
    format!("{label} {}", text_budget(text, limit, tokens))
}

/// A text space's use of its budget without its name, e.g. `812/4000 chars` (what the
/// component's view shows beside the space).
pub fn text_budget(text: &str, limit: &TextLimit, tokens: &impl Tokenizer) -> String {
    let mut usage = format!("{}/{} chars", char_count(text), limit.max_chars);
    if let Some(max) = limit.max_tokens {
        usage.push_str(&format!(", {}/{max} tokens", tokens.count(text)));
    }
    usage
}

/// The usage of the refs space, e.g. `refs 3/50 items`.
pub fn refs_usage(count: usize, max: usize) -> String {
    format!("refs {}", refs_budget(count, max))
}

/// The refs space's use of its capacity without its name, e.g. `3/50 items`.
pub fn refs_budget(count: usize, max: usize) -> String {
    format!("{count}/{max} items")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{ChattyTokenizer, PartialWordTokenizer, WordTokenizer};

    const CHARS: TextLimit = TextLimit { max_chars: 5, max_tokens: None };

    #[test]
    fn char_truncation_never_splits_a_multibyte_char() {
        let text = "aé€𝄞😀ü";
        for max in 0..8 {
            let kept = truncate_chars(text, max);
            assert_eq!(char_count(kept), max.min(6));
            assert!(text.starts_with(kept));
        }
        assert_eq!(truncate_chars("€€€€€€", 5), "€€€€€");
    }

    #[test]
    fn token_truncation_keeps_the_longest_prefix_within_budget_on_char_boundaries() {
        let text = "één twéé drie vier vijf";
        let kept = truncate_tokens(text, 3, &WordTokenizer);
        assert_eq!(WordTokenizer.count(kept), 3);
        assert!(kept.starts_with("één twéé drie"));
        assert!(text.is_char_boundary(kept.len()));
        assert_eq!(truncate_tokens("a b", 5, &WordTokenizer), "a b");
    }

    #[test]
    fn token_truncation_of_multibyte_text_lands_on_a_char_boundary() {
        // one token per char with this tokenizer
        let text = "😀😀😀😀😀";
        let kept = truncate_tokens(text, 2, &ChattyTokenizer);
        assert_eq!(kept, "😀😀");
    }

    #[test]
    fn token_truncation_keeps_a_whole_word_that_fits_though_its_cut_prefixes_count_more() {
        // Like cl100k_base's "fiv" (2 tokens) and "five" (1): a cut word costs more than the whole.
        let text = "aa bb cc dddd eeeee";
        assert_eq!(PartialWordTokenizer.count("aa bb cc ddd"), 8);
        assert_eq!(PartialWordTokenizer.count("aa bb cc dddd"), 7);
        assert_eq!(truncate_tokens(text, 7, &PartialWordTokenizer), "aa bb cc dddd");
        assert_eq!(truncate_tokens(text, 9, &PartialWordTokenizer), "aa bb cc dddd eeee");
    }

    #[test]
    fn token_truncation_inside_a_long_word_keeps_a_prefix_within_the_budget() {
        let text = "x".repeat(SCANNED_WORD_CHARS * 3 + 1);
        let kept = truncate_tokens(&text, 1, &PartialWordTokenizer);
        assert!(!kept.is_empty() && text.starts_with(kept));
        assert_eq!(PartialWordTokenizer.count(kept), 1);
        // The search stops at a boundary: one more char would not fit.
        assert_eq!(PartialWordTokenizer.count(&text[..kept.len() + 1]), 2);
        // Where counts grow with the prefix (as they do over a long word), it finds the longest.
        assert_eq!(truncate_tokens(&text, 40, &ChattyTokenizer).len(), 40);
    }

    #[test]
    fn fitting_text_is_kept_whole() {
        let fit = fit("héllo", &CHARS, &WordTokenizer);
        assert_eq!(fit, Fit { kept: "héllo", cut: None });
    }

    #[test]
    fn over_long_text_is_cut_to_the_char_limit_with_the_original_size() {
        let fit = fit("ééééééé", &CHARS, &WordTokenizer);
        assert_eq!(fit.kept, "ééééé");
        let cut = fit.cut.unwrap();
        assert_eq!(cut.message("Notes", &CHARS), "Notes truncated to 5 chars (original: 7). Consider summarizing.");
    }

    #[test]
    fn the_token_budget_cuts_after_the_char_limit_with_001s_message() {
        let limit = TextLimit { max_chars: 100, max_tokens: Some(2) };
        let fit = fit("a b c d", &limit, &WordTokenizer);
        assert_eq!(fit.kept, "a b ");
        let cut = fit.cut.unwrap();
        assert_eq!(
            cut.message("Scratchpad", &limit),
            "Scratchpad truncated to 2 tokens (original: 4). Consider summarizing."
        );
    }

    #[test]
    fn both_limits_cutting_are_both_reported() {
        let limit = TextLimit { max_chars: 5, max_tokens: Some(1) };
        let fit = fit("a b c d", &limit, &WordTokenizer);
        assert_eq!(fit.kept, "a ");
        assert_eq!(
            fit.cut.unwrap().message("Notes", &limit),
            "Notes truncated to 5 chars (original: 7) and 1 tokens (original: 4). Consider summarizing."
        );
    }

    #[test]
    fn check_reports_the_char_limit_before_the_token_budget() {
        let limit = TextLimit { max_chars: 5, max_tokens: Some(1) };
        let over = check("ab", "cdef", "ab\ncdef", &limit, &WordTokenizer).unwrap_err();
        assert_eq!(over, Over { unit: "char", max: 5, current: 2, added: 4, result: 7 });
        let over = check("a", "b", "a\nb", &limit, &WordTokenizer).unwrap_err();
        assert_eq!(over, Over { unit: "token", max: 1, current: 1, added: 1, result: 2 });
        assert!(check("a", "", "a", &limit, &WordTokenizer).is_ok());
    }

    #[test]
    fn an_edit_that_does_not_grow_a_text_over_a_lowered_limit_passes() {
        let limit = TextLimit { max_chars: 5, max_tokens: Some(1) };
        assert!(check("a b c d", "", "a b c", &limit, &WordTokenizer).is_ok(), "shrinks");
        assert!(check("a b c d", "x", "a b c x", &limit, &WordTokenizer).is_ok(), "same size");
        let over = check("a b c d", "xx", "a b c xx", &limit, &WordTokenizer).unwrap_err();
        assert_eq!(over, Over { unit: "char", max: 5, current: 7, added: 2, result: 8 });
        let over = check("abcdef", "g", "abcdef g", &TextLimit { max_chars: 50, max_tokens: Some(1) }, &WordTokenizer);
        assert_eq!(over.unwrap_err().unit, "token", "grows in tokens");
    }

    #[test]
    fn usage_lines_show_current_over_limit() {
        assert_eq!(text_usage("notes", "héllo", &CHARS, &WordTokenizer), "notes 5/5 chars");
        let limit = TextLimit { max_chars: 4000, max_tokens: Some(2000) };
        assert_eq!(text_usage("notes", "a b", &limit, &WordTokenizer), "notes 3/4000 chars, 2/2000 tokens");
        assert_eq!(refs_usage(3, 50), "refs 3/50 items");
    }
}
