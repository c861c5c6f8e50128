//! Any bytes as an OpenClaw session file: the reader never panics, and every malformed line
//! is reported with its line number.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let file = scratchpad_host::interop::openclaw::parse("fuzz.jsonl", &text);
    for line in &file.malformed {
        assert!(line.starts_with("fuzz.jsonl:"), "{line}");
    }
});
