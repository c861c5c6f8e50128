//! The host's side of fresh instances made ahead (`warm.rs` is the pool): a call takes one,
//! and after the call a task drops the used instance and makes its successor.

use wasmtime::Store;

use crate::capabilities::call::CallState;
use crate::host::Host;
use crate::sandbox::Fresh;

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
