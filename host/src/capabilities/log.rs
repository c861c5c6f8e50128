//! The `log` import: plugin log records into the host's `tracing`, tagged with the plugin.

use crate::bindings::scratchpad::plugin::log::{Host, Level};
use crate::capabilities::CallState;

/// Longest message kept, in bytes; longer ones are cut on a character boundary.
const MAX_MESSAGE_BYTES: usize = 64 << 10;

impl Host for CallState {
    fn log(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        let message = cut(&message, MAX_MESSAGE_BYTES);
        let plugin = self.plugin.name.as_str();
        match level {
            Level::Trace => tracing::trace!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Debug => tracing::debug!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Info => tracing::info!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Warn => tracing::warn!(target: "scratchpad::plugin", plugin, "{message}"),
            Level::Error => tracing::error!(target: "scratchpad::plugin", plugin, "{message}"),
        }
        Ok(())
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    #[test]
    fn cutting_never_splits_a_character() {
        assert_eq!(super::cut("héllo", 2), "h");
        assert_eq!(super::cut("héllo", 3), "hé");
        assert_eq!(super::cut("hi", 10), "hi");
    }
}
