//! The records of a project's search index (the contract's `index` import, `wit/index.wit`)
//! as they cross the storage contract, and what both backends share about searching: how a
//! query's text becomes words ([`words`]), so no character of it is ever the backend's search
//! syntax; the ranking ([`Candidates`]: BM25 over the candidates a backend's full-text index
//! finds, [`CANDIDATES_PER_WORD`] at most per word); and the snippet shown with a hit
//! ([`snippet`]).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

/// Longest query text, in bytes.
pub(crate) const MAX_QUERY_BYTES: usize = 1 << 10;
/// Most words a query may hold.
pub(crate) const MAX_QUERY_WORDS: usize = 32;
/// Most hits (or recent documents) one answer may hold.
pub(crate) const MAX_RESULTS: u32 = 50;
/// Shortest word that also matches as a prefix.
pub(crate) const PREFIX_MIN_CHARS: usize = 3;
/// About how long a hit's snippet is, in bytes.
pub(crate) const SNIPPET_BYTES: usize = 240;

/// A document as kept in a project's index, with the plugin and session it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct IndexedDocument {
    /// The project.
    pub project: String,
    /// The plugin that keeps it.
    pub plugin: String,
    /// The plugin's id for it.
    pub id: String,
    /// What it is (`plan`, `note`, …).
    pub kind: String,
    /// Its title.
    pub title: String,
    /// Its text, as kept (private spans removed, secrets redacted).
    pub text: String,
    /// When what it records happened, Unix milliseconds.
    pub at_ms: i64,
    /// The session whose call kept it.
    pub session: String,
}

impl IndexedDocument {
    /// What the document counts against its plugin's index quota: its id, kind, title and
    /// text, plus 64 bytes.
    pub(crate) fn bytes(&self) -> u64 {
        (self.id.len() + self.kind.len() + self.title.len() + self.text.len() + 64) as u64
    }
}

/// A write a call makes to its project's index, applied when the call commits.
#[derive(Debug, Clone)]
pub(crate) enum IndexWrite {
    /// Keep this document (its `project` and `session` are the call's), replacing one with
    /// the same id.
    Put(IndexedDocument),
    /// Remove the document with this id.
    Remove(String),
}

/// A search of one plugin's index of one project.
#[derive(Debug, Clone)]
pub(crate) struct IndexQuery {
    /// The words to look for (see [`words`]): at least one.
    pub(crate) words: Vec<String>,
    pub(crate) kind: Option<String>,
    pub(crate) session: Option<String>,
    pub(crate) since_ms: Option<i64>,
    /// Leave out this session's documents.
    pub(crate) not_session: Option<String>,
    pub(crate) limit: u32,
}

/// Which documents an operator's command (`scratchpad recall forget`, `export`) means: all of
/// a project's (or of every project), narrowed by each filter given.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct IndexFilter {
    /// Only this project's.
    pub project: Option<String>,
    /// Only those this session kept.
    pub session: Option<String>,
    /// Only those whose time is at least this, Unix milliseconds.
    pub since_ms: Option<i64>,
    /// Only those whose time is before this, Unix milliseconds.
    pub until_ms: Option<i64>,
    /// Only those matching these words (see the contract's `query`).
    pub words: Option<Vec<String>>,
}

/// How much of a project's index one plugin holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IndexUsage {
    /// The project.
    pub project: String,
    /// The plugin.
    pub plugin: String,
    /// Documents kept.
    pub documents: u64,
    /// Bytes counted against the quota.
    pub bytes: u64,
}

/// The words of a query's `text`: its runs of letters and digits, in order, without repeats.
/// Every other character (quotes, `*`, `:`, parentheses, operators of any search syntax)
/// separates words, so none of it reaches a backend. Errors say what is wrong with the text.
pub(crate) fn words(text: &str) -> Result<Vec<String>, String> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(format!("the query is {} bytes; the most is {MAX_QUERY_BYTES}", text.len()));
    }
    let mut words: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let word = word.to_lowercase();
        if !words.contains(&word) {
            words.push(word);
        }
    }
    if words.is_empty() {
        return Err("the query has no words (letters or digits) to look for".into());
    }
    if words.len() > MAX_QUERY_WORDS {
        return Err(format!("the query has {} words; the most is {MAX_QUERY_WORDS}", words.len()));
    }
    Ok(words)
}

/// Whether `word` also matches as a prefix.
pub(crate) fn prefix(word: &str) -> bool {
    word.chars().count() >= PREFIX_MIN_CHARS
}

/// About [`SNIPPET_BYTES`] of `text` around the first place one of `words` starts (the start
/// when none is found), on character boundaries, with `…` where it was cut; line breaks become
/// spaces.
pub(crate) fn snippet(text: &str, words: &[String]) -> String {
    let lower = text.to_lowercase();
    // Lowercasing may change byte lengths: find the word in the lowercase text and map back by
    // characters.
    let found = words.iter().filter_map(|w| lower.find(w.as_str())).min().map(|at| lower[..at].chars().count());
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let center = found.unwrap_or(0).min(chars.len());
    let mut start = center;
    let mut budget = SNIPPET_BYTES / 3;
    while start > 0 && budget >= chars[start - 1].1.len_utf8() {
        start -= 1;
        budget -= chars[start].1.len_utf8();
    }
    let begin = chars.get(start).map_or(text.len(), |&(at, _)| at);
    let mut end = begin;
    for &(at, c) in &chars[start..] {
        if at + c.len_utf8() - begin > SNIPPET_BYTES {
            break;
        }
        end = at + c.len_utf8();
    }
    let body: String = text[begin..end].chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    format!("{}{}{}", if begin > 0 { "…" } else { "" }, body.trim(), if end < text.len() { "…" } else { "" })
}

/// Most candidates one search of one word brings to the ranking: the newest-written documents
/// holding it. A word in fewer documents (a rare, telling word) brings all of them; a common
/// word, whose documents rank low anyway (its inverse document frequency is low), only its
/// newest. This bounds a search's work by the query's words, not by the project's size.
pub(crate) const CANDIDATES_PER_WORD: u32 = 64;

/// Whether a query `word` whose whole-word search found `found` documents is searched again
/// as a prefix (for the newest [`CANDIDATES_PER_WORD`] documents holding a word it starts):
/// only a word of [`PREFIX_MIN_CHARS`] or more that did not fill its candidates whole. A
/// document holding the word itself is the better match, and a word common enough to fill
/// them is often the start of many others ("the" of "then", "there", "these"), whose every
/// document a backend's prefix search reads before it can return the newest.
pub(crate) fn search_as_prefix(word: &str, found: usize) -> bool {
    prefix(word) && found < CANDIDATES_PER_WORD as usize
}

/// What a backend gathers for the ranking while it reads a search's candidates: how often
/// each query word occurs in each candidate and how long it is, never its text, so a
/// candidate that does not rank costs no copy of it; and how many documents the searched
/// scope holds (the ranking's `N`). A candidate is named by its backend's row key, which is
/// higher for a newer write.
#[derive(Debug)]
pub(crate) struct Candidates<'q> {
    words: &'q [String],
    /// Whether each word also matches as a prefix.
    prefixes: Vec<bool>,
    in_scope: u64,
    counted: Vec<Counted>,
    /// The counted candidates' word frequencies, one run of `words.len()` each, in the order
    /// of `counted`.
    tf: Vec<u32>,
    seen: HashSet<i64, BuildHasherDefault<KeyHasher>>,
}

#[derive(Debug)]
struct Counted {
    key: i64,
    at_ms: i64,
    len: usize,
}

impl<'q> Candidates<'q> {
    /// No candidates yet, of a search for `words` in a scope holding `in_scope` documents.
    pub(crate) fn new(words: &'q [String], in_scope: u64) -> Candidates<'q> {
        let prefixes = words.iter().map(|word| prefix(word)).collect();
        // Room for every candidate the words can bring (a word: its whole-word search's and its
        // prefix search's), up to a query of eight words, taken once: a vector doubling as it
        // fills makes several large allocations per search, and each of those makes the C
        // allocator tidy up every small block the full-text index just freed.
        let most = words.len().min(8) * 2 * CANDIDATES_PER_WORD as usize;
        Candidates {
            words,
            prefixes,
            in_scope,
            counted: Vec::with_capacity(most),
            tf: Vec::with_capacity(most * words.len()),
            seen: HashSet::with_capacity_and_hasher(most, BuildHasherDefault::default()),
        }
    }

    /// Whether the candidate with row key `key` is counted already (another word found it).
    pub(crate) fn contains(&self, key: i64) -> bool {
        self.seen.contains(&key)
    }

    /// Counts the candidate with row key `key` (once: a key seen before is left as it was).
    pub(crate) fn count(&mut self, key: i64, at_ms: i64, title: &str, text: &str) {
        if self.seen.insert(key) {
            let at = self.tf.len();
            self.tf.resize(at + self.words.len(), 0);
            let len = frequencies(self.words, &self.prefixes, title, text, &mut self.tf[at..]);
            self.counted.push(Counted { key, at_ms, len });
        }
    }

    /// The row keys of the `limit` best candidates, each with its BM25 score (higher is
    /// better), best first, ties newest first (by time, then by write): every backend ranks
    /// with this one function, so both answer alike. A word's document frequency is counted
    /// over the candidates, and `N` is the scope's size.
    pub(crate) fn rank(self, limit: usize) -> Vec<(i64, f64)> {
        let Candidates { words, in_scope, counted, tf, .. } = self;
        let tf = |c: usize| &tf[c * words.len()..][..words.len()];
        let n = (in_scope as f64).max(counted.len() as f64).max(1.0);
        let average = (counted.iter().map(|c| c.len).sum::<usize>() as f64 / counted.len().max(1) as f64).max(1.0);
        let idf: Vec<f64> = (0..words.len())
            .map(|w| {
                let df = (0..counted.len()).filter(|&c| tf(c)[w] > 0).count() as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let mut scored: Vec<(&Counted, f64)> = counted
            .iter()
            .enumerate()
            .map(|(at, c)| {
                let norm = K1 * (1.0 - B + B * c.len as f64 / average);
                let score = tf(at)
                    .iter()
                    .zip(&idf)
                    .map(|(&tf, idf)| idf * f64::from(tf) * (K1 + 1.0) / (f64::from(tf) + norm))
                    .sum();
                (c, score)
            })
            .collect();
        scored.sort_by(|(a, x), (b, y)| y.total_cmp(x).then(b.at_ms.cmp(&a.at_ms)).then(b.key.cmp(&a.key)));
        scored.into_iter().take(limit).map(|(c, score)| (c.key, score)).collect()
    }
}

/// BM25's term-frequency saturation and length normalisation (Robertson's usual values).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Counts `words` (each also as a prefix where `prefixes` says so) in a document of `title`
/// and `text` into `tf` (a title word counting twice), and returns its length in words (the
/// title's twice). A document's words are its runs of letters and digits (the query's own
/// rule, [`words`]), compared without case.
fn frequencies(words: &[String], prefixes: &[bool], title: &str, text: &str, tf: &mut [u32]) -> usize {
    let mut len = 0;
    for (text, weight) in [(title, 2), (text, 1)] {
        // Most notes are ASCII: the same runs and the same comparison, on bytes.
        if text.is_ascii() {
            for token in text.as_bytes().split(|b| !b.is_ascii_alphanumeric()).filter(|t| !t.is_empty()) {
                len += weight as usize;
                for ((count, word), &prefix) in tf.iter_mut().zip(words).zip(prefixes) {
                    if ascii_counts_as(token, word.as_bytes(), prefix) {
                        *count += weight;
                    }
                }
            }
        } else {
            for token in text.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()) {
                len += weight as usize;
                let token = token.to_lowercase();
                for ((count, word), &prefix) in tf.iter_mut().zip(words).zip(prefixes) {
                    if token == *word || (prefix && token.starts_with(word.as_str())) {
                        *count += weight;
                    }
                }
            }
        }
    }
    len
}

/// Whether the ASCII document word `token` counts as the query word `word` (lowercase; a word
/// with other characters never does): the same word, or with `prefix` a word it starts;
/// without case.
fn ascii_counts_as(token: &[u8], word: &[u8], prefix: bool) -> bool {
    (token.len() == word.len() || (prefix && token.len() > word.len()))
        && token[..word.len()].eq_ignore_ascii_case(word)
}

/// Hashes a candidate's row key (an integer the backend gave it) with one multiplication:
/// the keys are not chosen by anyone who could aim at collisions, and a search hashes each
/// candidate's key twice.
#[derive(Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_words_and_nothing_of_any_search_syntax() {
        let words = words(r#"title:"tz bug" NEAR(a b) * OR fix* (x) -y ^z"#).unwrap();
        assert_eq!(words, ["title", "tz", "bug", "near", "a", "b", "or", "fix", "x", "y", "z"]);
        assert_eq!(super::words("Crème brûlée, crème").unwrap(), ["crème", "brûlée"]);
    }

    #[test]
    fn empty_huge_and_wordy_queries_are_refused_with_the_reason() {
        assert!(words("").unwrap_err().contains("no words"));
        assert!(words("*** () \"\"").unwrap_err().contains("no words"));
        assert!(words(&"a".repeat(MAX_QUERY_BYTES + 1)).unwrap_err().contains("bytes"));
        let many: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
        assert!(words(&many.join(" ")).unwrap_err().contains("40 words"));
    }

    #[test]
    fn a_snippet_is_around_the_first_match_on_char_boundaries() {
        let text = format!("{} the timezone bug is in parse_date {}", "é".repeat(300), "x".repeat(400));
        let cut = snippet(&text, &["timezone".into()]);
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        assert!(cut.contains("the timezone bug"), "{cut}");
        assert!(cut.len() <= SNIPPET_BYTES + 2 * '…'.len_utf8(), "{}", cut.len());
        assert_eq!(snippet("short text", &["absent".into()]), "short text");
        assert_eq!(snippet("line one\nline two", &["two".into()]), "line one line two");
    }

    /// Ranks notes `(text, at_ms)` (their row keys are their positions) for `words`.
    fn rank(words: &[&str], notes: &[(&str, i64)], in_scope: u64, limit: usize) -> Vec<(i64, f64)> {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        let mut candidates = Candidates::new(&words, in_scope);
        for (key, (text, at_ms)) in notes.iter().enumerate() {
            candidates.count(key as i64, *at_ms, "", text);
        }
        candidates.rank(limit)
    }

    /// ASCII text (counted on bytes) and any other text count alike: without case, a word
    /// of three characters or more also as a prefix, a shorter one only whole, a title word
    /// twice.
    #[test]
    fn words_count_alike_in_ascii_and_other_text() {
        let words: Vec<String> = ["parse", "db", "crème"].iter().map(|w| (*w).to_owned()).collect();
        let prefixes: Vec<bool> = words.iter().map(|w| prefix(w)).collect();
        let count = |title: &str, text: &str| {
            let mut tf = vec![0; words.len()];
            let len = frequencies(&words, &prefixes, title, text, &mut tf);
            (tf, len)
        };
        let text = "PARSER parses, parse; sparse db DBs";
        assert_eq!(count("Parse", text), (vec![2 + 3, 1, 0], 2 + 6));
        // The same words beside one that is not ASCII: the other path, the same counts.
        assert_eq!(count("Parse", &format!("{text} Crèmes")), (vec![2 + 3, 1, 1], 2 + 7));
        assert_eq!(count("Pärse", text).0, vec![3, 1, 0]);
    }

    #[test]
    fn a_rare_word_outranks_a_common_one_and_ties_go_newest_first() {
        let mut notes: Vec<(&str, i64)> = (0..20).map(|i| ("the cache was cold again", i)).collect();
        notes.push(("the timezone offset is applied twice", 0));
        notes.push(("the timezone cache", 1));
        let ranked = rank(&["timezone", "cache"], &notes, 1000, 4);
        let keys: Vec<i64> = ranked.iter().map(|(key, _)| *key).collect();
        assert_eq!(keys, [21, 20, 19, 18], "{ranked:?}");
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn equal_scores_and_times_go_newest_written_first() {
        let ranked = rank(&["cache"], &[("cache", 5), ("cache", 5), ("cache", 5)], 10, 3);
        assert_eq!(ranked.iter().map(|(key, _)| *key).collect::<Vec<_>>(), [2, 1, 0]);
    }

    #[test]
    fn a_candidate_found_by_two_words_counts_once() {
        let words = vec!["cache".to_owned(), "cold".to_owned()];
        let mut candidates = Candidates::new(&words, 10);
        candidates.count(7, 0, "", "the cache was cold");
        assert!(candidates.contains(7));
        candidates.count(7, 0, "", "something else entirely");
        let ranked = candidates.rank(5);
        assert_eq!(ranked.len(), 1);
        assert!(ranked[0].1 > 0.0, "the first count stands: {ranked:?}");
    }

    #[test]
    fn prefixes_count_and_short_words_match_whole() {
        let ranked = rank(&["pars", "go"], &[("Parser and PARSING", 0), ("google", 0)], 2, 5);
        assert!(ranked[0].1 > 0.0 && ranked[0].0 == 0, "{ranked:?}");
        assert_eq!(ranked[1].1, 0.0, "`go` is too short to be a prefix: {ranked:?}");
    }

    #[test]
    fn a_title_word_counts_twice() {
        let words = vec!["parser".to_owned()];
        let mut candidates = Candidates::new(&words, 10);
        candidates.count(0, 0, "", "the parser is slow");
        candidates.count(1, 0, "Parser", "is slow");
        assert_eq!(candidates.rank(2)[0].0, 1);
    }
}
