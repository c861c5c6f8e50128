//! The committed bytes against their recorded digests. (That the bytes are what the sources
//! build now is `cargo xtask components --check`, run by `xtask/tests/components.rs`.)

use sha2::{Digest, Sha256};

#[test]
fn every_component_matches_the_digest_sha256sums_records() {
    for component in scratchpad_components::ALL {
        let actual = hex::encode(Sha256::digest(component.wasm));
        assert_eq!(
            actual, component.sha256,
            "components/wasm/{} does not match wasm/SHA256SUMS; run `cargo xtask components`",
            component.file
        );
    }
}

#[test]
fn every_file_is_a_webassembly_component() {
    for component in scratchpad_components::ALL {
        // The preamble of a component: magic, then version 0x0d and layer 1.
        assert_eq!(&component.wasm[..8], b"\0asm\x0d\x00\x01\x00", "{} is not a component", component.file);
    }
}

#[test]
fn sha256sums_lists_exactly_the_components() {
    let listed: Vec<&str> = scratchpad_components::SHA256SUMS
        .lines()
        .map(|line| line.split_once("  ").expect("`<hex>  <file>`").1)
        .collect();
    let files: Vec<&str> = scratchpad_components::ALL.iter().map(|c| c.file).collect();
    assert_eq!(listed, files);
}

#[test]
fn components_are_found_by_name() {
    assert_eq!(scratchpad_components::get("observations"), Some(&scratchpad_components::OBSERVATIONS));
    assert_eq!(scratchpad_components::get("nope"), None);
}
