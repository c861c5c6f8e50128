//! Any bytes as an OpenClaw session file: the reader never panics, and every malformed line
//! is reported with its line number.
#![no_main]

use libfuzzer_sys::fuzz_target;

// The host's reader itself (pure parsing), compiled here without the host and its build
// script, which needs the wasm target that nightly may lack.
#[path = "../../../host/src/interop/openclaw/jsonl.rs"]
#[allow(dead_code)]
mod jsonl;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let file = jsonl::parse("fuzz.jsonl", &text);
    for line in &file.malformed {
        assert!(line.starts_with("fuzz.jsonl:"), "{line}");
    }
});
