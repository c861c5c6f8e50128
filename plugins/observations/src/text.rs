//! UTF-8 at the byte level: slices read from the host may start or end inside a character, and
//! these helpers find the character boundaries so nothing shown to the model is ever split.
//!
//! A character is a Unicode scalar value; in UTF-8 it starts at every byte that is not a
//! continuation byte (`0b10xx_xxxx`), so counting characters is counting those bytes.

/// Whether `byte` starts a character (is not a UTF-8 continuation byte).
pub fn is_char_start(byte: u8) -> bool {
    byte & 0xC0 != 0x80
}

/// Number of characters that start in `bytes` (the number of non-continuation bytes), eight
/// bytes at a time.
pub fn count_chars(bytes: &[u8]) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let words = bytes.chunks_exact(8);
    let rest = words.remainder().iter().filter(|b| is_char_start(**b)).count() as u64;
    let continuations: u64 = words
        .map(|w| {
            let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            // A continuation byte has bit 7 set and bit 6 clear; `w << 1` moves each byte's
            // bit 6 onto its bit 7.
            u64::from((w & !(w << 1) & HIGH).count_ones())
        })
        .sum();
    (bytes.len() - bytes.len() % 8) as u64 - continuations + rest
}

/// Index of the first character start in `bytes` (skips the tail of a character cut at the
/// start; at most 3 bytes).
pub fn start_boundary(bytes: &[u8]) -> usize {
    bytes.iter().take(3).position(|b| is_char_start(*b)).unwrap_or(bytes.len().min(3))
}

/// Length of `bytes` without a character cut at the end (an incomplete last sequence).
pub fn end_boundary(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(4) {
        let lead = bytes[len - back];
        if is_char_start(lead) {
            return if back < sequence_length(lead) { len - back } else { len };
        }
    }
    len
}

/// Bytes of the sequence that `lead` starts (1 for ASCII and for invalid leads).
fn sequence_length(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// `bytes` as text, without the partial characters a slice may have at either end. Text
/// entries are valid UTF-8, so nothing else is ever replaced; invalid bytes (which the host
/// would have classified as binary) become U+FFFD rather than a trap.
pub fn decode_inner(bytes: &[u8]) -> String {
    let start = start_boundary(bytes);
    let end = start + end_boundary(&bytes[start..]);
    decode(&bytes[start..end])
}

/// `bytes` as text; invalid sequences become U+FFFD (never expected for text entries).
pub fn decode(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

/// The first `n` characters of `s` (all of it when shorter).
pub fn first_chars(s: &str, n: u64) -> &str {
    match s.char_indices().nth(n as usize) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The last `n` characters of `s` (all of it when shorter).
pub fn last_chars(s: &str, n: u64) -> &str {
    if n == 0 {
        return "";
    }
    match s.char_indices().rev().nth(n as usize - 1) {
        Some((i, _)) => &s[i..],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIXED: &str = "aé€😀b\nZ";

    #[test]
    fn counting_characters_matches_the_standard_library_at_every_length() {
        let text = MIXED.repeat(5);
        for end in 0..=text.len() {
            let bytes = &text.as_bytes()[..end];
            let expected = bytes.iter().filter(|b| is_char_start(**b)).count() as u64;
            assert_eq!(count_chars(bytes), expected, "prefix of {end} bytes");
        }
        assert_eq!(count_chars(text.as_bytes()), text.chars().count() as u64);
    }

    #[test]
    fn a_slice_cut_anywhere_decodes_to_whole_characters_only() {
        let bytes = MIXED.as_bytes();
        for start in 0..bytes.len() {
            for end in start..=bytes.len() {
                let decoded = decode_inner(&bytes[start..end]);
                assert!(!decoded.contains('\u{FFFD}'), "{start}..{end} gave {decoded:?}");
                assert!(MIXED.contains(&decoded), "{start}..{end} gave {decoded:?}");
            }
        }
    }

    #[test]
    fn end_boundary_keeps_a_complete_last_character() {
        assert_eq!(end_boundary("a😀".as_bytes()), 5);
        assert_eq!(end_boundary(&"a😀".as_bytes()[..4]), 1);
        assert_eq!(end_boundary(&"é".as_bytes()[..1]), 0);
        assert_eq!(end_boundary(b""), 0);
    }

    #[test]
    fn first_and_last_characters_count_characters_not_bytes() {
        assert_eq!(first_chars("é€😀", 2), "é€");
        assert_eq!(last_chars("é€😀", 2), "€😀");
        assert_eq!(first_chars("ab", 5), "ab");
        assert_eq!(last_chars("ab", 5), "ab");
        assert_eq!(last_chars("ab", 0), "");
        assert_eq!(first_chars("ab", 0), "");
    }
}
