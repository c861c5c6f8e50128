//! How long an operation may wait for another process's lock on the database.
//!
//! SQLite has one writer at a time per file: while another process holds the write lock (a
//! second host, a `sqlite3` shell in `BEGIN EXCLUSIVE`, a long `VACUUM`), a commit waits for
//! it, up to the connection's busy timeout (30 s). Where a person waits on the answer — a
//! prompt's injection, a coding agent's hook — that is far too long: [`waiting_at_most`] bounds
//! every such wait inside a piece of work, which then fails with [`Error::Busy`] having
//! changed nothing, and the caller goes on without it.
//!
//! The bound travels with the work (a task-local deadline), so no API needs a parameter for
//! it; the SQLite backend reads it on the blocking thread that runs each statement.

use std::future::Future;
use std::time::{Duration, Instant};

#[cfg(doc)]
use crate::Error;

tokio::task_local! {
    static UNTIL: Instant;
}

/// Runs `work` with every wait for another process's database lock inside it ending `bound`
/// from now: work that would wait longer fails with [`Error::Busy`] instead, nothing of it
/// kept. An enclosing bound that ends sooner still holds.
pub async fn waiting_at_most<F: Future>(bound: Duration, work: F) -> F::Output {
    let mut until = Instant::now() + bound;
    if let Some(outer) = until_now() {
        until = until.min(outer);
    }
    UNTIL.scope(until, work).await
}

/// When the waits of the work running now must end, if it is bounded.
pub(crate) fn until_now() -> Option<Instant> {
    UNTIL.try_with(|until| *until).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_bound_travels_with_the_work_and_the_sooner_one_holds() {
        assert_eq!(until_now(), None);
        let start = Instant::now();
        waiting_at_most(Duration::from_secs(10), async {
            let outer = until_now().unwrap();
            assert!(outer >= start + Duration::from_secs(10));
            waiting_at_most(Duration::from_secs(60), async { assert_eq!(until_now(), Some(outer)) }).await;
            waiting_at_most(Duration::from_secs(1), async { assert!(until_now().unwrap() < outer) }).await;
        })
        .await;
        assert_eq!(until_now(), None);
    }
}
