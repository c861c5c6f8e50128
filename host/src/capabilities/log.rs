//! The `log` import: plugin log records into the host's `tracing`, tagged with the plugin,
//! within the call's log budget.

use crate::bindings::scratchpad::plugin::log::{Host, Level};
use crate::capabilities::call::CallState;
use crate::capabilities::output::{CALL_BUDGET_BYTES, cut};

/// Longest message kept, in bytes; longer ones are cut on a character boundary.
const MAX_MESSAGE_BYTES: usize = 64 << 10;

impl Host for CallState {
    fn log(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        self.require(crate::grants::Power::Log)?;
        if self.log_budget == 0 {
            return Ok(());
        }
        let message = cut(&message, MAX_MESSAGE_BYTES.min(self.log_budget));
        self.log_budget -= message.len().max(1).min(self.log_budget);
        // One record, one line: a plugin's text cannot forge another record or drive a terminal.
        let message = crate::terminal::line(message);
        let plugin = self.plugin.name.as_str();
        match level {
            Level::Trace => tracing::trace!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Debug => tracing::debug!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Info => tracing::info!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Warn => tracing::warn!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Error => tracing::error!(target: "scratchpad::plugin", plugin, "{message}"),
        }
        if self.log_budget == 0 {
            let budget = CALL_BUDGET_BYTES;
            tracing::warn!(target: "scratchpad::plugin", plugin, "the call's log budget of {budget} bytes is used up; its later records are dropped");
        }
        Ok(())
    }
}
