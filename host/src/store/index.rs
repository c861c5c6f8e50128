//! The records of a project's search index (the contract's `index` import, `wit/index.wit`)
//! as they cross the storage contract, and what both backends share about searching: how a
//! query's text becomes words ([`words`]), so no character of it is ever the backend's search
//! syntax; the ranking ([`rank`]: BM25 over the candidates a backend's full-text index finds,
//! [`CANDIDATES_PER_WORD`] at most per word); and the snippet shown with a hit ([`snippet`]).

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

/// Most candidates one word of a query brings to the ranking: the newest-written documents
/// holding it. A word in fewer documents (a rare, telling word) brings all of them; a common
/// word, whose documents rank low anyway (its inverse document frequency is low), only its
/// newest. This bounds a search's work by the query's words, not by the project's size.
pub(crate) const CANDIDATES_PER_WORD: u32 = 64;

/// What a backend answers a search with: the candidate documents (each once) and how many
/// documents the searched scope holds (the ranking's `N`).
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    pub(crate) documents: Vec<IndexedDocument>,
    pub(crate) in_scope: u64,
}

/// BM25's term-frequency saturation and length normalisation (Robertson's usual values).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The words of `text` as the ranking counts them: its runs of letters and digits (the query's
/// own rule, [`words`]), compared without case by [`counts_as`].
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty())
}

/// Whether the document word `token` counts as the query word `word` (lowercase): the same
/// word, or for a word of [`PREFIX_MIN_CHARS`] or more, a word it starts; without case.
fn counts_as(token: &str, word: &str) -> bool {
    if token.is_ascii() {
        let head = token.get(..word.len()).filter(|_| token.len() == word.len() || prefix(word));
        return head.is_some_and(|head| head.eq_ignore_ascii_case(word));
    }
    let token = token.to_lowercase();
    token == word || (prefix(word) && token.starts_with(word))
}

/// How often each of `words` occurs in `document` (a title word counting twice), and its
/// length in words (the title's twice).
fn frequencies(words: &[String], document: &IndexedDocument) -> (Vec<u32>, usize) {
    let mut tf = vec![0u32; words.len()];
    let mut len = 0;
    for (text, weight) in [(document.title.as_str(), 2), (document.text.as_str(), 1)] {
        for token in tokens(text) {
            len += weight;
            for (count, word) in tf.iter_mut().zip(words) {
                if counts_as(token, word) {
                    *count += weight as u32;
                }
            }
        }
    }
    (tf, len)
}

/// The `limit` best of `candidates` for `words`, each with its BM25 score (higher is better),
/// ties newest first: every backend ranks with this one function, so both answer alike. A
/// word's document frequency is counted over the candidates, and `N` is the scope's size.
pub(crate) fn rank(words: &[String], candidates: Candidates, limit: usize) -> Vec<(IndexedDocument, f64)> {
    let Candidates { documents, in_scope } = candidates;
    let counted: Vec<(Vec<u32>, usize)> = documents.iter().map(|document| frequencies(words, document)).collect();
    let n = (in_scope as f64).max(documents.len() as f64).max(1.0);
    let average = (counted.iter().map(|(_, len)| *len).sum::<usize>() as f64 / counted.len().max(1) as f64).max(1.0);
    let idf: Vec<f64> = (0..words.len())
        .map(|w| {
            let df = counted.iter().filter(|(tf, _)| tf[w] > 0).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut scored: Vec<(IndexedDocument, f64)> = documents
        .into_iter()
        .zip(counted)
        .map(|(document, (tf, len))| {
            let norm = K1 * (1.0 - B + B * len as f64 / average);
            let score =
                tf.iter().zip(&idf).map(|(&tf, idf)| idf * f64::from(tf) * (K1 + 1.0) / (f64::from(tf) + norm)).sum();
            (document, score)
        })
        .collect();
    scored.sort_by(|(a, x), (b, y)| y.total_cmp(x).then(b.at_ms.cmp(&a.at_ms)).then_with(|| a.id.cmp(&b.id)));
    scored.truncate(limit);
    scored
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

    fn note(id: &str, text: &str, at_ms: i64) -> IndexedDocument {
        IndexedDocument {
            project: "p".into(),
            plugin: "a".into(),
            id: id.into(),
            kind: "note".into(),
            title: String::new(),
            text: text.into(),
            at_ms,
            session: "s".into(),
        }
    }

    #[test]
    fn a_rare_word_outranks_a_common_one_and_ties_go_newest_first() {
        let words = vec!["timezone".to_owned(), "cache".to_owned()];
        let mut documents: Vec<IndexedDocument> =
            (0..20).map(|i| note(&format!("c{i}"), "the cache was cold again", i)).collect();
        documents.push(note("tz", "the timezone offset is applied twice", 0));
        documents.push(note("both", "the timezone cache", 1));
        let ranked = rank(&words, Candidates { documents, in_scope: 1000 }, 4);
        let ids: Vec<&str> = ranked.iter().map(|(d, _)| d.id.as_str()).collect();
        assert_eq!(ids, ["both", "tz", "c19", "c18"], "{ranked:?}");
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1));
    }

    #[test]
    fn prefixes_count_and_short_words_match_whole() {
        let ranked = rank(
            &["pars".to_owned(), "go".to_owned()],
            Candidates { documents: vec![note("a", "Parser and PARSING", 0), note("b", "google", 0)], in_scope: 2 },
            5,
        );
        assert!(ranked[0].1 > 0.0 && ranked[0].0.id == "a", "{ranked:?}");
        assert_eq!(ranked[1].1, 0.0, "`go` is too short to be a prefix: {ranked:?}");
    }
}
