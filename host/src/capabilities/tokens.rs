//! The `tokens` import: token counts with the host's
//! [`Tokenizer`](crate::capabilities::tokenizer::Tokenizer).
//!
//! Counting costs the host about a microsecond per byte, and the plugin chooses the text, so
//! a long text is counted off the executor's threads (on tokio's blocking pool) in steps of
//! [`STEP_BYTES`], checking the call's deadline between steps: a plugin that counts 60 MiB
//! times out at its deadline, like one that loops, and other sessions never wait for it.

use crate::bindings::scratchpad::plugin::tokens::Host;
use crate::capabilities::call::CallState;
use crate::capabilities::tokenizer::STEP_BYTES;

/// Texts up to this many bytes are counted in the call itself (tens of microseconds).
const INLINE_BYTES: usize = 8 << 10;

impl Host for CallState {
    async fn count(&mut self, text: String) -> wasmtime::Result<u32> {
        self.require(crate::grants::Power::Tokens)?;
        if text.len() <= INLINE_BYTES {
            return Ok(self.tokenizer.count(&text));
        }
        let (tokenizer, deadline) = (self.tokenizer.clone(), self.deadline);
        let counted = tokio::task::spawn_blocking(move || tokenizer.count_until(&text, STEP_BYTES, deadline)).await?;
        counted.ok_or_else(|| crate::error::DeadlineExceeded.into())
    }

    fn encoding(&mut self) -> wasmtime::Result<String> {
        self.require(crate::grants::Power::Tokens)?;
        Ok(self.tokenizer.encoding().as_str().to_owned())
    }
}
