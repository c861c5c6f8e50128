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
//! Slots: the pool is sized for the calls in flight (each takes its instance only once it holds
//! its permit) plus `warm_instances` per plugin. For each plugin, instances ready plus tasks at
//! work never exceed that target, and a task holds one slot at a time (the used instance, then
//! the one it makes); when no task may start, the used instance is dropped on the spot.

use std::sync::Mutex;

use wasmtime::Store;

use crate::capabilities::CallState;
use crate::host::Host;
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

    fn take(&self) -> Option<Fresh> {
        self.state.lock().unwrap().ready.pop()
    }

    /// Reserves the making of one more instance, if ready and in-the-making stay within target.
    fn reserve(&self) -> bool {
        let mut pool = self.state.lock().unwrap();
        if pool.ready.len() + pool.making >= self.target {
            return false;
        }
        pool.making += 1;
        true
    }

    /// Ends a reservation, keeping the instance made, if any.
    fn fulfil(&self, fresh: Option<Fresh>) {
        let mut pool = self.state.lock().unwrap();
        pool.making -= 1;
        pool.ready.extend(fresh);
    }
}

impl Host {
    /// A fresh instance of plugin `index` made ahead of time, if one is ready.
    pub(crate) fn take_fresh(&self, index: usize) -> Option<Fresh> {
        self.inner.plugins[index].warm.take()
    }

    /// After a call of plugin `index`: in a task of its own, drops the `used` instance (giving
    /// its slot back) and makes a fresh one for a later call — when the pool is short of its
    /// target; otherwise the used instance is dropped here and now.
    pub(crate) fn recycle(&self, index: usize, used: Option<Store<CallState>>) {
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(runtime) if self.inner.plugins[index].warm.reserve() => runtime,
            _ => return drop(used),
        };
        let host = self.clone();
        runtime.spawn(async move {
            drop(used);
            host.make_one(index).await;
        });
    }

    /// Fills plugin `index`'s pool up to its target (when the host opens).
    pub(crate) async fn warm_up(&self, index: usize) {
        while self.inner.plugins[index].warm.reserve() {
            if !self.make_one(index).await {
                return;
            }
        }
    }

    /// Makes one instance under a reservation; returns whether it could.
    async fn make_one(&self, index: usize) -> bool {
        let loaded = &self.inner.plugins[index];
        match self.inner.sandbox.instantiate(&loaded.pre, &loaded.info).await {
            Ok(fresh) => {
                loaded.warm.fulfil(Some(fresh));
                true
            }
            Err(error) => {
                loaded.warm.fulfil(None);
                // The call that needs one will instantiate it and report the error itself.
                tracing::debug!(plugin = %loaded.info.name, %error, "could not make a fresh instance ahead");
                false
            }
        }
    }
}
