//! The `tokens` import: token counts with a real BPE tokenizer (tiktoken's encodings).

use tiktoken_rs::CoreBPE;

use crate::bindings::scratchpad::plugin::tokens::Host;
use crate::capabilities::CallState;
use crate::config::Encoding;

/// A loaded BPE encoding. Loading takes tens of milliseconds, so hosts load it once (lazily)
/// and share it across calls.
pub struct Tokenizer {
    encoding: Encoding,
    bpe: &'static CoreBPE,
}

impl Tokenizer {
    /// The tokenizer for `encoding`, loaded on first use and shared process-wide.
    pub fn new(encoding: Encoding) -> Self {
        let bpe = match encoding {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        };
        Tokenizer { encoding, bpe }
    }

    /// Tokens in `text`. Special-token markers in the text count as ordinary text.
    pub fn count(&self, text: &str) -> u32 {
        self.bpe.encode_ordinary(text).len() as u32
    }

    /// The encoding's name.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("encoding", &self.encoding).finish()
    }
}

impl Host for CallState {
    fn count(&mut self, text: String) -> wasmtime::Result<u32> {
        Ok(self.tokenizer.count(&text))
    }

    fn encoding(&mut self) -> wasmtime::Result<String> {
        Ok(self.tokenizer.encoding().as_str().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_known_cl100k_values() {
        let t = Tokenizer::new(Encoding::Cl100kBase);
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("hello world"), 2);
        // "tiktoken is great!" is 6 tokens in cl100k_base (OpenAI's cookbook example).
        assert_eq!(t.count("tiktoken is great!"), 6);
    }
}
