//! How much a plugin may write out during one call — the bytes of its stdout and stderr kept,
//! the bytes of log records it may emit — and cutting its text to such a bound on a character
//! boundary.

/// Bytes of guest stdout/stderr kept per call (the rest is dropped) before going to tracing.
pub(crate) const STDIO_CAPTURE: usize = 64 << 10;

/// Bytes of log records one call may emit; later records of the call are dropped (with one
/// warning saying so), so a plugin cannot flood the host's log sink, which may block on a
/// full pipe, from inside one call.
pub(crate) const CALL_BUDGET_BYTES: usize = 256 << 10;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    #[test]
    fn cutting_never_splits_a_character() {
        assert_eq!(super::cut("héllo", 2), "h");
        assert_eq!(super::cut("héllo", 3), "hé");
        assert_eq!(super::cut("hi", 10), "hi");
    }
}
