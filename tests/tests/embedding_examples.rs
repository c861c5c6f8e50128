//! The embedding examples for Node (jco) and Python (wasmtime-py) are files the suite
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

/// The code lines of the fenced block that follows `heading` in `page` (named `name`).
fn page_block(name: &str, page: &str, heading: &str, fence: &str) -> Vec<String> {
    let section = &page[page.find(heading).unwrap_or_else(|| panic!("{name} has `{heading}`"))..];
    let start = section.find(fence).expect("the section has a code block") + fence.len();
    let end = start + section[start..].find("```").expect("the code block ends");
    section[start..end].lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

#[test]
fn the_readme_and_the_embedding_guide_show_exactly_the_example_files_the_suite_runs() {
    let readme = ("README.md", include_str!("../../README.md"));
    let guide = ("docs/embedding.md", include_str!("../../docs/embedding.md"));
    for ((name, page), heading, fence, file, source) in [
        (readme, "### Rust", "```rust", "embed.rs", include_str!("../../host/examples/embed.rs")),
        (guide, "### Node / TypeScript via jco", "```js", "example.mjs", include_str!("../embed/node/example.mjs")),
        (guide, "### Python via wasmtime-py", "```python", "example.py", include_str!("../embed/python/example.py")),
    ] {
        let lines: Vec<&str> = source.lines().map(str::trim).collect();
        let block = page_block(name, page, heading, fence);
        assert!(block.len() >= 8, "{name} shows the {file} example");
        for line in block {
            assert!(lines.contains(&line.as_str()), "{name} line not in {file}: {line}");
        }
    }
}
