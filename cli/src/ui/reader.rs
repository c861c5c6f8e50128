//! Reading an offloaded observation in the viewer without loading it whole: a page of bytes
//! from an offset, or the lines that hold a search text, found by reading the entry one chunk
//! at a time and stopping at [`MAX_MATCHES`].

use scratchpad_host::{BlobEntry, Host};

/// Bytes shown on one page.
pub(crate) const PAGE_BYTES: u64 = 64 << 10;
/// Bytes read per step of a search.
const CHUNK_BYTES: usize = 1 << 20;
/// Matching lines shown at most; the search stops there.
pub(crate) const MAX_MATCHES: usize = 200;
/// Characters of a matching line shown.
const LINE_CHARS: usize = 400;

/// One page of an entry: its bytes from `offset` (at most [`PAGE_BYTES`]).
pub(crate) async fn page(host: &Host, session: &str, entry: &BlobEntry, offset: u64) -> anyhow::Result<Vec<u8>> {
    let offset = offset.min(entry.size_bytes);
    let len = PAGE_BYTES.min(entry.size_bytes - offset) as usize;
    Ok(host.read_observation(session, &entry.plugin, &entry.id, offset, len).await?.unwrap_or_default())
}

/// A line that holds the search text: its 1-based number and its start.
pub(crate) struct Match {
    pub(crate) line: u64,
    pub(crate) text: String,
}

/// The lines of `entry` that hold `needle` (ASCII case folded), in order, at most
/// [`MAX_MATCHES`]; and whether the search stopped there.
pub(crate) async fn grep(
    host: &Host,
    session: &str,
    entry: &BlobEntry,
    needle: &str,
) -> anyhow::Result<(Vec<Match>, bool)> {
    let needle = needle.to_ascii_lowercase();
    let (mut matches, mut offset, mut line, mut carry) = (Vec::new(), 0u64, 1u64, Vec::<u8>::new());
    while offset < entry.size_bytes {
        let chunk =
            host.read_observation(session, &entry.plugin, &entry.id, offset, CHUNK_BYTES).await?.unwrap_or_default();
        if chunk.is_empty() {
            break;
        }
        offset += chunk.len() as u64;
        carry.extend_from_slice(&chunk);
        let last = offset >= entry.size_bytes;
        let mut start = 0;
        while let Some(end) = carry[start..].iter().position(|b| *b == b'\n').map(|i| start + i) {
            if check(&carry[start..end], &needle, line, &mut matches) {
                return Ok((matches, true));
            }
            line += 1;
            start = end + 1;
        }
        carry.drain(..start);
        if last && !carry.is_empty() && check(&carry, &needle, line, &mut matches) {
            return Ok((matches, true));
        }
    }
    Ok((matches, false))
}

/// Adds `bytes` (line `line`) to `matches` when it holds `needle`; whether the list is full.
fn check(bytes: &[u8], needle: &str, line: u64, matches: &mut Vec<Match>) -> bool {
    let text = String::from_utf8_lossy(bytes);
    if text.to_ascii_lowercase().contains(needle) {
        matches.push(Match { line, text: text.chars().take(LINE_CHARS).collect() });
    }
    matches.len() >= MAX_MATCHES
}
