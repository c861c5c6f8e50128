//! Being asked to stop: SIGTERM (a service manager, an agent runtime ending its session) or
//! Ctrl-C. The long-running servers stop taking requests, answer every request they already
//! took (its operation commits or rolls back whole, never half) and exit 0; a one-shot command
//! such as the hook finishes the operation it is in, bounded by its own deadlines, instead of
//! dying in the middle of it.

/// A request to stop, listened for from the moment this is made: from then on (tokio keeps a
/// signal's handler for the life of the process) neither signal ends the process by itself.
pub(crate) struct Shutdown {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl Shutdown {
    pub(crate) fn listen() -> anyhow::Result<Shutdown> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Shutdown { terminate: signal(SignalKind::terminate())?, interrupt: signal(SignalKind::interrupt())? })
        }
        #[cfg(not(unix))]
        Ok(Shutdown {})
    }

    /// Resolves when the process is asked to stop.
    pub(crate) async fn requested(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}
