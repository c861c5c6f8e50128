//! Fresh instances made ahead of their call.
//!
//! Every call runs in a fresh instance (a plugin's state lives only in host storage, and a
//! call that trapped or exhausted its memory cannot leave a broken instance to the next one).
//! Instantiating is still work — a dozen or so microseconds, more than many hooks take — so the
//! host keeps a few instances of each plugin instantiated and never called, and makes the next
//! one in a background task after each call, together with returning the used instance's slot
//! to the pool. A call then starts on a ready instance, and each instance still serves exactly
//! one call. When none is ready (a burst of calls, or `warm_instances = 0`), the call
//! instantiates one itself.

use std::sync::Mutex;

use wasmtime::Store;

use crate::capabilities::CallState;
use crate::host::Host;
use crate::sandbox::Fresh;

/// The fresh instances of one plugin waiting for a call.
pub(crate) struct WarmPool {
    ready: Mutex<Vec<Fresh>>,
    target: usize,
}

impl WarmPool {
    /// An empty pool that keeps up to `target` instances ready.
    pub(crate) fn new(target: usize) -> Self {
        WarmPool { ready: Mutex::new(Vec::with_capacity(target)), target }
    }

    fn take(&self) -> Option<Fresh> {
        self.ready.lock().unwrap().pop()
    }

    fn wants_more(&self) -> bool {
        self.ready.lock().unwrap().len() < self.target
    }

    /// Keeps `fresh` if the pool is not full; otherwise it is dropped.
    fn offer(&self, fresh: Fresh) {
        let mut ready = self.ready.lock().unwrap();
        if ready.len() < self.target {
            ready.push(fresh);
        }
    }
}

impl Host {
    /// A fresh instance of plugin `index` made ahead of time, if one is ready.
    pub(crate) fn take_fresh(&self, index: usize) -> Option<Fresh> {
        self.inner.plugins[index].warm.take()
    }

    /// After a call of plugin `index`: in a task of its own, drops the `used` instance (which
    /// resets its memory slot for reuse) and instantiates a fresh one for a later call.
    pub(crate) fn recycle(&self, index: usize, used: Option<Store<CallState>>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let host = self.clone();
        runtime.spawn(async move {
            drop(used);
            host.warm_up(index).await;
        });
    }

    /// Fills plugin `index`'s pool up to its target.
    pub(crate) async fn warm_up(&self, index: usize) {
        let loaded = &self.inner.plugins[index];
        while loaded.warm.wants_more() {
            match self.inner.sandbox.instantiate(&loaded.pre, &loaded.info).await {
                Ok(fresh) => loaded.warm.offer(fresh),
                Err(error) => {
                    // The call that needs one will instantiate it and report the error itself.
                    tracing::debug!(plugin = %loaded.info.name, %error, "could not make a fresh instance ahead");
                    return;
                }
            }
        }
    }
}
