//! The Rust side of the contract's resources, which the bindings name (`bindgen!`'s `with`):
//! an observation (a tool result the host holds) and what the host computed about it.
//!
//! Everything the host knows about an observation (kind, length in characters, whether it is
//! ASCII) is computed once, natively, before any plugin runs, so it never counts against a
//! plugin's deadline; the SHA-256 is computed on first use and shared.

use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

use crate::types::{self, Observation};

/// Largest slice one `read` returns.
pub(crate) const MAX_READ_BYTES: u32 = 1 << 20;

/// An observation's bytes and what the host computed about them.
pub struct ObservationFacts {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) kind: types::ContentKind,
    pub(crate) size_chars: u64,
    pub(crate) ascii: bool,
    pub(crate) metadata: String,
    sha256: OnceLock<String>,
}

impl ObservationFacts {
    /// Text when the runtime says so *and* the bytes are valid UTF-8 (or when the runtime did
    /// not say and they are); binary otherwise.
    pub(crate) fn new(observation: &Observation) -> Self {
        let bytes = observation.bytes.clone();
        let utf8 = std::str::from_utf8(&bytes).is_ok();
        let kind = match observation.kind {
            Some(types::ContentKind::Binary) => types::ContentKind::Binary,
            _ if utf8 => types::ContentKind::Text,
            _ => types::ContentKind::Binary,
        };
        let ascii = bytes.is_ascii();
        let size_chars = match kind {
            types::ContentKind::Text if !ascii => bytes.iter().filter(|b| (**b & 0xC0) != 0x80).count() as u64,
            _ => bytes.len() as u64,
        };
        ObservationFacts {
            bytes,
            kind,
            size_chars,
            ascii,
            metadata: observation.metadata.to_string(),
            sha256: OnceLock::new(),
        }
    }

    /// SHA-256 of the bytes, lowercase hex, computed once.
    pub(crate) fn sha256(&self) -> &str {
        self.sha256.get_or_init(|| hex::encode(Sha256::digest(&self.bytes)))
    }

    /// Up to `len` bytes from `offset` (capped at [`MAX_READ_BYTES`]).
    pub(crate) fn slice(&self, offset: u64, len: u32) -> &[u8] {
        let size = self.bytes.len() as u64;
        let start = offset.min(size) as usize;
        let end = offset.saturating_add(u64::from(len.min(MAX_READ_BYTES))).min(size) as usize;
        &self.bytes[start..end]
    }
}

/// The resource handed to `after-tool-result`: a shared handle on the facts.
pub struct ObservationData(pub(crate) Arc<ObservationFacts>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_count_characters_and_distrust_a_text_claim_on_invalid_utf8() {
        let text = ObservationFacts::new(&Observation::text("héllo"));
        assert_eq!((text.kind, text.size_chars, text.ascii), (types::ContentKind::Text, 5, false));
        let mut claimed = Observation::bytes(vec![0xff, 0xfe, b'a']);
        claimed.kind = Some(types::ContentKind::Text);
        let binary = ObservationFacts::new(&claimed);
        assert_eq!((binary.kind, binary.size_chars), (types::ContentKind::Binary, 3));
        assert_eq!(binary.slice(1, 10), &[0xfe, b'a']);
        assert!(binary.slice(9, 10).is_empty());
    }
}
