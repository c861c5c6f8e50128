//! Fresh instances made ahead of their call.
//!
//! Every call runs in a fresh instance (a plugin's state lives only in host storage, and a
//! call that trapped or exhausted its memory cannot leave a broken instance to the next one).
//! Instantiating is still work — a dozen or so microseconds, more than many hooks take — so the
//! host keeps a few instances of each plugin instantiated and never called. After each call, a
//! background task gives the used instance's slot back (dropping an instance resets its
//! memory, which is work too) and makes the next one. A call then starts on a ready instance,
//! and each instance still serves exactly one call. When none is ready (a burst of calls, or
//! `warm_instances = 0`), the call instantiates one itself.
//!
//! This file is the pool; `instances.rs` is the host's side (taking, recycling, warming up).
//!
//! Slots: the pool is sized for the calls in flight (each takes its instance only once it holds
//! its permit) plus `warm_instances` per plugin. For each plugin, instances ready plus tasks at
//! work never exceed that target, and a task holds one slot at a time (the used instance, then
//! the one it makes); when no task may start, the used instance is dropped on the spot.

use std::sync::Mutex;

use crate::sandbox::Fresh;

/// The fresh instances of one plugin waiting for a call.
pub(crate) struct WarmPool {
    state: Mutex<Pool>,
    target: usize,
}

struct Pool {
    ready: Vec<Fresh>,
    /// Instances being made now.
    making: usize,
}

impl WarmPool {
    /// An empty pool that keeps up to `target` instances ready.
    pub(crate) fn new(target: usize) -> Self {
        WarmPool { state: Mutex::new(Pool { ready: Vec::with_capacity(target), making: 0 }), target }
    }

    pub(crate) fn take(&self) -> Option<Fresh> {
        self.state.lock().unwrap().ready.pop()
    }

    /// Reserves the making of one more instance, if ready and in-the-making stay within target.
    pub(crate) fn reserve(&self) -> bool {
        let mut pool = self.state.lock().unwrap();
        if pool.ready.len() + pool.making >= self.target {
            return false;
        }
        pool.making += 1;
        true
    }

    /// Ends a reservation, keeping the instance made, if any.
    pub(crate) fn fulfil(&self, fresh: Option<Fresh>) {
        let mut pool = self.state.lock().unwrap();
        pool.making -= 1;
        pool.ready.extend(fresh);
    }
}
