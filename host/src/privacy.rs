//! What never reaches a project's search index: applied by the host to every document a plugin
//! indexes, before anything is stored, so no plugin can keep a secret for another session to
//! find. `docs/recall.md` lists the same rules for a reader.
//!
//! 1. Private spans: everything from `<private>` to `</private>` (tags in any case; an unclosed
//!    span runs to the end of the text) is removed.
//! 2. Secrets are replaced by [`REDACTED`]: PEM private-key blocks; the token formats of the
//!    major providers (Anthropic, OpenAI, GitHub, GitLab, AWS, Google, Slack, Stripe,
//!    Hugging Face, npm, PyPI), JSON Web Tokens, credentials in URLs; the value of an
//!    assignment whose name says it is secret (`API_KEY=…`, `"password": "…"`); and any other
//!    token of 32 or more characters of letters, digits and `+/_-=` that mixes letters and digits
//!    with a Shannon entropy of at least 4 bits per character (random keys; a hex digest, at
//!    most 4 bits, and ordinary words are kept).

use std::sync::LazyLock;

use regex::Regex;

/// What a secret is replaced by.
pub const REDACTED: &str = "[redacted]";

/// `<private>` … `</private>`, or to the end when unclosed.
static PRIVATE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?is)<private>.*?(?:</private>|\z)").expect("a valid pattern"));

/// Secrets with a known shape, each replaced whole.
static KNOWN: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // PEM private keys of any algorithm (an unclosed block runs to the end).
        r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|\z)",
        // Anthropic and OpenAI API keys (`sk-ant-…`, `sk-proj-…`, `sk-…`).
        r"\bsk-[A-Za-z0-9_-]{20,}",
        // GitHub tokens (classic and fine-grained), GitLab personal tokens.
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{22,}",
        r"\bglpat-[A-Za-z0-9_-]{20,}",
        // AWS access key ids.
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
        // Google API keys.
        r"\bAIza[0-9A-Za-z_-]{35}",
        // Slack tokens.
        r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        // Stripe secret and restricted keys.
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
        // Hugging Face, npm and PyPI tokens.
        r"\bhf_[A-Za-z0-9]{30,}",
        r"\bnpm_[A-Za-z0-9]{36}",
        r"\bpypi-[A-Za-z0-9_-]{50,}",
        // JSON Web Tokens.
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        // The password of a URL's credentials (`scheme://user:password@host`).
        r"(?i)\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]+@",
    ]
    .iter()
    .map(|pattern| Regex::new(pattern).expect("a valid pattern"))
    .collect()
});

/// An assignment whose name says its value is secret: the value (group `value`) is redacted,
/// the name kept so the note still reads.
static ASSIGNED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)(?P<name>\b[a-z0-9_.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|passwd|credential|auth)[a-z0-9_.-]*["']?\s*[:=]\s*)(?P<value>"[^"\s]{6,}"|'[^'\s]{6,}'|[^\s"',;]{6,})"#,
    )
    .expect("a valid pattern")
});

/// Candidates for the entropy rule: long runs of key-like characters.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_=-]{32,}").expect("a valid pattern"));

/// Shortest token the entropy rule looks at.
const ENTROPY_MIN_LEN: usize = 32;
/// Bits per character from which a mixed token counts as random.
const ENTROPY_BITS: f64 = 4.0;

/// `text` as it may be indexed: private spans removed, then secrets redacted.
pub fn scrub(text: &str) -> String {
    let text = PRIVATE.replace_all(text, "");
    let mut text = text.into_owned();
    for pattern in KNOWN.iter() {
        if pattern.is_match(&text) {
            text = pattern.replace_all(&text, REDACTED).into_owned();
        }
    }
    if ASSIGNED.is_match(&text) {
        text = ASSIGNED
            .replace_all(&text, |caps: &regex::Captures<'_>| {
                let value = &caps["value"];
                if value.contains(REDACTED) { caps[0].to_owned() } else { format!("{}{REDACTED}", &caps["name"]) }
            })
            .into_owned();
    }
    if TOKEN.is_match(&text) {
        text = TOKEN
            .replace_all(&text, |caps: &regex::Captures<'_>| {
                let token = &caps[0];
                if random(token) { REDACTED.to_owned() } else { token.to_owned() }
            })
            .into_owned();
    }
    text
}

/// Whether `token` looks like a random key: long, letters and digits mixed, high entropy.
fn random(token: &str) -> bool {
    if token.len() < ENTROPY_MIN_LEN
        || !token.bytes().any(|b| b.is_ascii_digit())
        || !token.bytes().any(|b| b.is_ascii_alphabetic())
    {
        return false;
    }
    let mut counts = [0u32; 256];
    for b in token.bytes() {
        counts[b as usize] += 1;
    }
    let len = token.len() as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| {
            let p = f64::from(n) / len;
            -p * p.log2()
        })
        .sum();
    entropy >= ENTROPY_BITS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_spans_are_removed_closed_or_not_in_any_case() {
        assert_eq!(scrub("keep <private>drop this</private> keep"), "keep  keep");
        assert_eq!(scrub("a <PRIVATE>x\ny</Private> b"), "a  b");
        assert_eq!(scrub("a <private>never closed\nstill private"), "a ");
        assert_eq!(scrub("one <private>x</private> two <private>y</private> three"), "one  two  three");
    }

    #[test]
    fn every_listed_provider_format_is_redacted() {
        let secrets = [
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx",
            "ghp_0123456789abcdefghijABCDEFGHIJklmnop",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "glpat-abcdefghij0123456789",
            "AKIAIOSFODNN7EXAMPLE",
            "AIzaSyA-0123456789abcdefghijklmnopqrstu",
            "xoxb-123456789012-abcdefghijkl",
            "sk_live_0123456789abcdefABCD",
            "hf_abcdefghijklmnopqrstuvwxyz0123456789",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ];
        for secret in secrets {
            let text = format!("the key is {secret} here");
            assert_eq!(scrub(&text), format!("the key is {REDACTED} here"), "{secret}");
        }
    }

    #[test]
    fn private_keys_assignments_and_url_credentials_are_redacted() {
        let pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----";
        assert_eq!(scrub(&format!("key:\n{pem}\nend")), format!("key:\n{REDACTED}\nend"));
        assert_eq!(scrub("export API_KEY=hunter2hunter2"), format!("export API_KEY={REDACTED}"));
        assert_eq!(scrub(r#"{"password": "correct-horse"}"#), format!(r#"{{"password": {REDACTED}}}"#));
        let url = scrub("db at postgres://app:s3cretpw@db.internal/prod");
        assert!(!url.contains("s3cretpw") && url.contains("db.internal/prod"), "{url}");
    }

    #[test]
    fn random_tokens_go_and_ordinary_text_stays() {
        let random = "Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu";
        assert_eq!(scrub(&format!("token {random}")), format!("token {REDACTED}"));
        let kept = [
            "commit 9747987d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a69 fixed the flaky test",
            "see host/src/store/sqlite/operation.rs line 42",
            "the test_two_hosts_on_one_database_file_lose_no_update test",
            "a passage that mentions the token budget and the secret of good tests",
        ];
        for text in kept {
            assert_eq!(scrub(text), text);
        }
    }
}
