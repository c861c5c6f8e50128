//! A call's memory cap: the limiter wasmtime asks before a linear memory or table grows, and
//! the error a grow past the cap traps with.

/// The error a memory grow past the cap traps with; the host recognises it to report the cap.
#[derive(Debug, thiserror::Error)]
#[error("memory cap of {limit_bytes} bytes exceeded (wanted {wanted_bytes})")]
pub(crate) struct MemoryCapExceeded {
    pub(crate) limit_bytes: u64,
    pub(crate) wanted_bytes: u64,
}

/// Caps a call's linear memory and records its size at instantiation and its peak.
pub(crate) struct MemoryLimiter {
    limit_bytes: u64,
    initial_bytes: Option<u64>,
    peak_bytes: u64,
}

impl MemoryLimiter {
    pub(crate) fn new(limit_bytes: u64) -> Self {
        MemoryLimiter { limit_bytes, initial_bytes: None, peak_bytes: 0 }
    }

    /// (size at instantiation, peak) of the call's linear memory, in bytes.
    pub(crate) fn usage(&self) -> (u64, u64) {
        (self.initial_bytes.unwrap_or(0), self.peak_bytes)
    }
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let desired = desired as u64;
        if desired > self.limit_bytes {
            return Err(MemoryCapExceeded { limit_bytes: self.limit_bytes, wanted_bytes: desired }.into());
        }
        // The first call is the main memory's allocation at instantiation.
        self.initial_bytes.get_or_insert(desired);
        self.peak_bytes = self.peak_bytes.max(desired);
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}
