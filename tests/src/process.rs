//! The process, port and wait helpers of the tests that run servers and agents: one child
//! process killed by its PID, a free loopback port, a poll with a deadline.

use std::net::TcpListener;
use std::process::Child;
use std::time::{Duration, Instant};

/// A child process killed by its PID when dropped.
pub struct Process(pub Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port of 127.0.0.1 that was free a moment ago: bound on port 0 and released. Another
/// process may take it before the caller binds it.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).expect("binding a free port on 127.0.0.1");
    listener.local_addr().expect("the bound address").port()
}

/// Polls `probe` every 100 ms until it gives a value; panics naming `what` after `timeout`.
pub fn wait_for<T>(timeout: Duration, what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(start.elapsed() < timeout, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
