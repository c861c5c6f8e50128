//! The README's Rust embedding example is `host/examples/embed.rs`, and it runs: the suite
//! runs the example's `main` here (`tests/tests/embedding_examples.rs` checks the README shows
//! lines of that very file).

#[path = "../examples/embed.rs"]
mod example;

#[test]
fn the_embedding_example_runs_a_whole_session() {
    example::main().expect("the example runs to the end");
}

#[test]
fn the_plan_the_example_sets_in_turn_one_is_in_turn_twos_system_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let rendered = runtime.block_on(example::run(&dir.path().join("agent.db"))).unwrap();
    // The session's guidance follows the runtime's system prompt; the scratchpad with the plan
    // comes before the user's message, which ends the turn unchanged.
    assert!(rendered.system.starts_with("You are a coding agent.\n\n## Session Scratchpad"), "{}", rendered.system);
    assert!(rendered.user.contains("1. Fix X\n2. Test Y"), "the plan is injected: {}", rendered.user);
    assert!(rendered.user.ends_with("\n\ncontinue with step 2"), "{}", rendered.user);
}
