//! The README's embedding examples for Node (jco) and Python (wasmtime-py) are files the suite
//! runs, `tests/embed/node/example.mjs` and `tests/embed/python/example.py`: each sets a plan
//! in a session and prints what the next turn injects, which must be exactly what the Rust
//! host would inject.

use scratchpad_tests::runtimes;

/// What both examples print: the tool's answer, then the block for turn 2 (the scratchpad extension's format).
const EXPECTED: &str = "Plan set.\n\
                        Usage: notes 0/8000 chars; plan 18/2000 chars; refs 0/50 items\n\
                        prepend-context:\n\
                        [Session Scratchpad - your persistent working memory]\n\
                        ## Plan\n\
                        1. Fix X\n\
                        2. Test Y\n\
                        [End Scratchpad]\n";

fn stdout_of(mut command: std::process::Command) -> String {
    let output = runtimes::run(&mut command, "the example");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_node_example_sets_a_plan_and_gets_the_block_for_the_next_turn() {
    let mut node = runtimes::node();
    node.arg("example.mjs").arg(runtimes::component()).arg(runtimes::generated_dir("jco"));
    assert_eq!(stdout_of(node), EXPECTED);
}

#[test]
fn the_python_example_sets_a_plan_and_gets_the_block_for_the_next_turn() {
    let mut python = runtimes::python();
    python.arg(runtimes::root().join("tests/embed/python/example.py")).arg(runtimes::component());
    assert_eq!(stdout_of(python), EXPECTED);
}

/// The code lines of the README's fenced block that follows `heading`.
fn readme_block(heading: &str, fence: &str) -> Vec<String> {
    let readme = include_str!("../../README.md");
    let section = &readme[readme.find(heading).unwrap_or_else(|| panic!("the README has `{heading}`"))..];
    let start = section.find(fence).expect("the section has a code block") + fence.len();
    let end = start + section[start..].find("```").expect("the code block ends");
    section[start..end].lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

#[test]
fn the_readme_shows_exactly_the_example_files_the_suite_runs() {
    let other = "## Other runtimes: the same component in Node and Python";
    for (heading, fence, file, source) in [
        ("## Embedding from Rust", "```rust", "embed.rs", include_str!("../../host/examples/embed.rs")),
        (other, "```js", "example.mjs", include_str!("../embed/node/example.mjs")),
        (other, "```python", "example.py", include_str!("../embed/python/example.py")),
    ] {
        let lines: Vec<&str> = source.lines().map(str::trim).collect();
        let block = readme_block(heading, fence);
        assert!(block.len() >= 8, "the README shows the {file} example");
        for line in block {
            assert!(lines.contains(&line.as_str()), "README line not in {file}: {line}");
        }
    }
}
