//! Time stamps and record ids as the backends store them: milliseconds since the Unix epoch,
//! and the context-pressure policy's `{unix_ms}_{4 hex}` ids.

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// A record id in the context-pressure policy's format, `{unix_ms}_{4 hex}`: the time, and four hex digits of a
/// hash of `salt`, this process and a per-process sequence number, so ids made in the same
/// millisecond differ (four hex digits can still collide: a caller storing ids under a unique
/// key asks again until it has a free one).
pub(crate) fn record_id(now_ms: i64, salt: &str) -> String {
    use sha2::{Digest, Sha256};
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQUENCE: AtomicU64 = AtomicU64::new(0);
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let digest = Sha256::digest(format!("{salt}/{now_ms}/{}/{sequence}", std::process::id()));
    format!("{now_ms}_{:02x}{:02x}", digest[0], digest[1])
}
