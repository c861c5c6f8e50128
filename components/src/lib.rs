//! The first-party scratchpad components, prebuilt: the bytes of three WebAssembly components
//! of the contract `scratchpad:plugin@0.1.3`, so a crate that embeds them (`scratchpad-host`)
//! builds with no wasm toolchain.
//!
//! | name | built from | what it does |
//! | --- | --- | --- |
//! | `scratchpad` | `guest/` | the session scratchpad: notes, plan and references that survive compaction |
//! | `observations` | `plugins/observations` | large tool results offloaded and read back in slices |
//! | `context-guard` | `plugins/context-guard` | context-pressure policy: flush warnings and checkpoints |
//!
//! The `.wasm` files under `wasm/` are committed and are exactly what their sources build:
//! `cargo xtask components` in the repository rebuilds them reproducibly (pinned toolchain,
//! paths remapped) and rewrites `wasm/SHA256SUMS`; the repository's test suite rebuilds them
//! and fails when a committed file differs. This crate has no dependencies and no build
//! script.
//!
//! ```
//! let scratchpad = scratchpad_components::get("scratchpad").unwrap();
//! assert_eq!(&scratchpad.wasm[..4], b"\0asm");
//! assert_eq!(scratchpad.sha256.len(), 64);
//! ```

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// One prebuilt component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component {
    /// The name a host loads it under (`[[plugin]] name = "…"`).
    pub name: &'static str,
    /// The cargo package of the repository it is built from.
    pub package: &'static str,
    /// Its file under `wasm/`.
    pub file: &'static str,
    /// The component's bytes.
    pub wasm: &'static [u8],
    /// The SHA-256 of [`wasm`](Self::wasm), 64 lowercase hex digits, as `wasm/SHA256SUMS`
    /// records it.
    pub sha256: &'static str,
}

/// `wasm/SHA256SUMS`: `sha256sum`'s format (`<hex>  <file>` per line), written by
/// `cargo xtask components`.
pub const SHA256SUMS: &str = include_str!("../wasm/SHA256SUMS");

macro_rules! component {
    ($name:literal, $package:literal) => {
        Component {
            name: $name,
            package: $package,
            file: concat!($name, ".wasm"),
            wasm: include_bytes!(concat!("../wasm/", $name, ".wasm")),
            sha256: recorded_sha256(concat!($name, ".wasm")),
        }
    };
}

/// The scratchpad component: the session scratchpad, the scratchpad extension and the session notepad.
pub const SCRATCHPAD: Component = component!("scratchpad", "scratchpad-guest");
/// The large-observation store (the observations component).
pub const OBSERVATIONS: Component = component!("observations", "observations-plugin");
/// The context-pressure policy (the context-guard component).
pub const CONTEXT_GUARD: Component = component!("context-guard", "context-guard-plugin");

/// Every prebuilt component.
pub const ALL: &[Component] = &[SCRATCHPAD, OBSERVATIONS, CONTEXT_GUARD];

/// The component named `name`, if there is one.
pub fn get(name: &str) -> Option<&'static Component> {
    ALL.iter().find(|component| component.name == name)
}

/// The digest [`SHA256SUMS`] records for `file`; a compile error when it records none.
const fn recorded_sha256(file: &str) -> &'static str {
    let (sums, file) = (SHA256SUMS.as_bytes(), file.as_bytes());
    let mut start = 0;
    while start < sums.len() {
        let mut end = start;
        while end < sums.len() && sums[end] != b'\n' {
            end += 1;
        }
        // A line is `<64 hex>  <file>`.
        let line = sums.split_at(start).1.split_at(end - start).0;
        if line.len() == 66 + file.len() && ends_with(line, file) && line[64] == b' ' && line[65] == b' ' {
            match core::str::from_utf8(line.split_at(64).0) {
                Ok(hex) => return hex,
                Err(_) => panic!("wasm/SHA256SUMS is not UTF-8"),
            }
        }
        start = end + 1;
    }
    panic!("wasm/SHA256SUMS records no digest for a component file; run `cargo xtask components`")
}

const fn ends_with(text: &[u8], suffix: &[u8]) -> bool {
    let offset = text.len() - suffix.len();
    let mut i = 0;
    while i < suffix.len() {
        if text[offset + i] != suffix[i] {
            return false;
        }
        i += 1;
    }
    true
}
