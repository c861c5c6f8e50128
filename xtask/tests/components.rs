//! The committed components (`components/wasm/`) are exactly what their sources build, and a
//! difference is reported with the file, both digests and the command that fixes it.

use std::path::PathBuf;

use scratchpad_components::ALL;
use sha2::{Digest, Sha256};

#[test]
fn the_committed_components_are_what_their_sources_build_now() {
    // Rebuilds the three components (reproducibly) and compares them byte for byte.
    if let Err(message) = xtask::components::check(&xtask::workspace()) {
        panic!("{message}");
    }
}

#[test]
fn a_component_altered_by_one_byte_is_named_with_both_digests_and_the_command() {
    let committed = xtask::workspace().join(xtask::components::DIR);
    // The committed files stand in for a fresh build; a copy of them for what is committed,
    // first as it is, then with one byte changed.
    let built: Vec<_> = ALL.iter().map(|c| (c, committed.join(c.file))).collect::<Vec<(_, PathBuf)>>();
    let altered = tempfile::tempdir().unwrap();
    for file in ALL.iter().map(|c| c.file).chain(["SHA256SUMS"]) {
        std::fs::copy(committed.join(file), altered.path().join(file)).unwrap();
    }
    xtask::components::compare(altered.path(), &built).expect("an unaltered copy matches");

    let file = altered.path().join("observations.wasm");
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&file, &bytes).unwrap();

    let message = xtask::components::compare(altered.path(), &built).unwrap_err();
    let altered_digest = hex::encode(Sha256::digest(&bytes));
    assert!(message.contains("components/wasm/observations.wasm"), "{message}");
    assert!(message.contains(&format!("committed sha256:{altered_digest}")), "{message}");
    assert!(message.contains(&format!("built sha256:{}", scratchpad_components::OBSERVATIONS.sha256)), "{message}");
    assert!(message.contains("cargo xtask components"), "{message}");
    assert!(!message.contains("/scratchpad.wasm") && !message.contains("context-guard.wasm"), "{message}");
}
