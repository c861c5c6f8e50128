//! Component digests: the hex SHA-256 of a component's bytes (what the compile cache and the
//! precompiled directory find a component by, and what an identity names), and the
//! `sha256:<hex>` form identities and upgrades are written in.

use sha2::{Digest, Sha256};

/// The hex SHA-256 of a component's bytes.
pub(crate) fn sha256_hex(wasm: &[u8]) -> String {
    hex::encode(Sha256::digest(wasm))
}

/// Whether `text` is a digest as identities write them: `sha256:` and 64 lowercase hex digits.
pub(crate) fn is_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}
