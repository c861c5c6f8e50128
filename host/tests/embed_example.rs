//! The README's Rust embedding example is `host/examples/embed.rs`, and it runs: the suite
//! runs the example's `main` here (`tests/tests/embedding_examples.rs` checks the README shows
//! lines of that very file).

#[path = "../examples/embed.rs"]
mod example;

#[test]
fn the_embedding_example_runs_a_whole_session() {
    example::main().expect("the example runs to the end");
}
