//! Builds the Extism peer (`bench/extism-peer`) as a `wasm32-unknown-unknown` module and
//! writes its path to `$OUT_DIR/peers.rs`. How and why the build is nested: `build-support`.

use scratchpad_build_support::{Component, build_for, path_constants};

const PEERS: &[Component] = &[Component { constant: "EXTISM_PEER", package: "extism-peer" }];

fn main() {
    let paths = build_for("wasm32-unknown-unknown", PEERS, &["bench/extism-peer", "guest"]);
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("peers.rs");
    std::fs::write(out, path_constants(PEERS, &paths)).unwrap();
}
