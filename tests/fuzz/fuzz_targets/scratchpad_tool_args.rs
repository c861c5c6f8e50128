//! Any bytes as the arguments of any scratchpad tool: never a panic, and the budgets hold.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scratchpad_plugin_sdk::{MemoryStorage, Tokenizer, Turn};

struct Chars;

impl Tokenizer for Chars {
    fn count(&self, text: &str) -> u32 {
        text.chars().count().div_ceil(4) as u32
    }
}

const TOOLS: [&str; 5] = ["session.scratchpad", "read_notepad", "write_notepad", "update_notepad", "nope"];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let arguments = String::from_utf8_lossy(rest);
    let config = scratchpad_guest::Config::default();
    let mut storage = MemoryStorage::default();
    let turn = Turn {
        session_id: "s".into(),
        turn_id: "t".into(),
        turn_index: u32::from(selector),
        tokens_used: None,
        context_window: None,
    };
    let mut pad = scratchpad_guest::Scratchpad::new(&mut storage, &Chars, &config);
    let before = pad.spaces();
    let result = pad.call_tool(&turn, TOOLS[selector as usize % TOOLS.len()], &arguments);
    let after = pad.spaces();
    assert!(after.notes.chars().count() <= 4000 && after.plan.chars().count() <= 2000 && after.refs.len() <= 50);
    if result.is_err() {
        assert_eq!(before, after, "a refused call changed the scratchpad");
    }
});
