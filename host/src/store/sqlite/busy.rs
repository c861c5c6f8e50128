//! Waiting for another process's write lock on the file: SQLite calls [`wait`] while the lock
//! it needs is held, and gives up (`SQLITE_BUSY`, named [`Error::Busy`] by `faults.rs`) once it
//! answers `false`: after [`BUSY_TIMEOUT`], or sooner when the work it runs for is bounded
//! ([`crate::waiting_at_most`]). SQLite's own busy timeout cannot end at a deadline that
//! differs per operation; this handler reads the operation's from its blocking thread.

use std::cell::Cell;
use std::time::{Duration, Instant};

#[cfg(doc)]
use crate::Error;

/// How long a connection waits for another writer's lock before giving up, unless the work
/// is bounded sooner.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Pauses between looks at the lock, as SQLite's own busy handler takes them: short at
/// first (most locks are held for a commit's milliseconds), then 100 ms.
const PAUSES_MS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];

thread_local! {
    /// When the lock waits of the statement running on this thread must end, if bounded.
    static UNTIL: Cell<Option<Instant>> = const { Cell::new(None) };
    /// When the current wait began.
    static SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The bound of the work running on this blocking thread, for as long as it lives.
pub(super) struct Bounded(());

impl Bounded {
    pub(super) fn until(until: Option<Instant>) -> Bounded {
        UNTIL.set(until);
        SINCE.set(None);
        Bounded(())
    }
}

impl Drop for Bounded {
    fn drop(&mut self) {
        UNTIL.set(None);
    }
}

/// When a wait for the lock that begins at `since` gives up.
pub(super) fn deadline(since: Instant) -> Instant {
    let longest = since + BUSY_TIMEOUT;
    UNTIL.get().map_or(longest, |until| until.min(longest))
}

/// SQLite's busy handler: `attempts` is how often it was called for this lock before.
pub(super) fn wait(attempts: i32) -> bool {
    let now = Instant::now();
    if attempts == 0 {
        SINCE.set(Some(now));
    }
    let end = deadline(SINCE.get().unwrap_or(now));
    if now >= end {
        return false;
    }
    let pause = Duration::from_millis(PAUSES_MS[(attempts.max(0) as usize).min(PAUSES_MS.len() - 1)]);
    std::thread::sleep(pause.min(end - now));
    true
}

/// How long the current wait for the lock has lasted (0 when none began).
pub(super) fn waited_ms() -> u64 {
    SINCE.get().map_or(0, |since| since.elapsed().as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_wait_gives_up_at_its_bound_and_an_unbounded_one_later() {
        let start = Instant::now();
        assert_eq!(deadline(start), start + BUSY_TIMEOUT);
        {
            let _bounded = Bounded::until(Some(start + Duration::from_millis(30)));
            assert_eq!(deadline(start), start + Duration::from_millis(30));
            let mut attempts = 0;
            while wait(attempts) {
                attempts += 1;
            }
            let waited = start.elapsed();
            assert!(waited >= Duration::from_millis(30) && waited < Duration::from_secs(2), "{waited:?}");
        }
        assert_eq!(deadline(start), start + BUSY_TIMEOUT, "the bound ends with its work");
    }
}
