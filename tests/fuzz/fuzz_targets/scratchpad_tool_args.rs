//! Any bytes as a sequence of scratchpad tool calls: never a panic, the budgets hold after
//! every call, and a refused call changes nothing.
//!
//! The limits are small (notes 40 chars, plan 20, refs 5, a token budget of 12) and the state
//! carries over from call to call, so the fuzzer reaches the edges — appends that exactly fit
//! or overflow, refs at capacity, truncation of multibyte text — not just argument parsing.
//! Input: calls separated by 0xFF bytes; each call's first byte picks the tool and whether
//! the token budget is on, the rest is its arguments text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scratchpad_plugin_sdk::{MemoryStorage, Tokenizer, Turn};

/// A tokenizer whose counts do not grow monotonically with a prefix (like BPE inside a word).
struct Lumpy;

impl Tokenizer for Lumpy {
    fn count(&self, text: &str) -> u32 {
        text.split_whitespace().map(|w| if w.len() % 3 == 0 { 1 } else { w.len().div_ceil(4) }).sum::<usize>() as u32
    }
}

const TOOLS: [&str; 5] = ["session.scratchpad", "read_notepad", "write_notepad", "update_notepad", "nope"];
const NOTES: usize = 40;
const PLAN: usize = 20;
const REFS: usize = 5;
const TOKENS: u32 = 12;

/// The small limits, with the token budget off (`[0]`) and on (`[1]`), parsed once.
fn configs() -> &'static [scratchpad_guest::Config; 2] {
    static CONFIGS: std::sync::OnceLock<[scratchpad_guest::Config; 2]> = std::sync::OnceLock::new();
    CONFIGS.get_or_init(|| {
        [false, true].map(|token_budget| {
            scratchpad_guest::Config::from_json(&format!(
                r#"{{"notesMaxChars": {NOTES}, "planMaxChars": {PLAN}, "refsMaxItems": {REFS},
                    "tokenBudget": {token_budget}, "maxTokens": {TOKENS}, "surfaces": ["scratchpad", "notepad"]}}"#
            ))
            .unwrap()
        })
    })
}

fuzz_target!(|data: &[u8]| {
    let mut storage = MemoryStorage::default();
    for (index, call) in data.split(|&b| b == 0xFF).take(16).enumerate() {
        let Some((&selector, rest)) = call.split_first() else { continue };
        let token_budget = selector & 0x80 != 0;
        let config = &configs()[usize::from(token_budget)];
        let turn = Turn {
            session_id: "s".into(),
            turn_id: format!("t{index}"),
            turn_index: index as u32,
            tokens_used: None,
            context_window: None,
        };
        let arguments = String::from_utf8_lossy(rest);
        let mut pad = scratchpad_guest::Scratchpad::new(&mut storage, &Lumpy, config);
        let before = pad.spaces();
        let result = pad.call_tool(&turn, TOOLS[(selector & 0x7F) as usize % TOOLS.len()], &arguments);
        let after = pad.spaces();
        assert!(after.notes.chars().count() <= NOTES, "notes over budget: {:?}", after.notes);
        assert!(after.plan.chars().count() <= PLAN, "plan over budget: {:?}", after.plan);
        assert!(after.refs.len() <= REFS && after.refs.iter().all(|r| !r.is_empty()), "refs: {:?}", after.refs);
        // Notes written while the budget was off may be over it; an edit that does not grow them
        // is allowed then. Notes within the budget must stay within it.
        if token_budget && Lumpy.count(&before.notes) <= TOKENS {
            assert!(Lumpy.count(&after.notes) <= TOKENS, "notes over the token budget: {:?}", after.notes);
        }
        if result.is_err() {
            assert_eq!(before, after, "a refused call changed the scratchpad");
        }
    }
});
