//! `cargo xtask <task>`: the repository's own tasks, in Rust so they run wherever cargo does.
//!
//! - `components`: rebuild the first-party components from `guest/` and `plugins/` and write
//!   them, with `SHA256SUMS`, into `components/wasm/` (run it after changing a component, and
//!   commit the result).
//! - `components --check`: rebuild them and fail, naming each file and both digests, when the
//!   committed bytes are not what the sources build now.
//! - `dist [--target TRIPLE]... [--profile NAME] [--out DIR] [--no-assemble]`: every release
//!   artifact (binaries, npm packages, wheels) into `target/dist/` with `SHA256SUMS` (see
//!   `src/dist/mod.rs`); with `--no-assemble`, only the targets' own artifacts.
//! - `dist assemble --from DIR... [--out DIR] [--complete]`: the targets' own artifacts, built
//!   on several machines, put together with the packages that choose among them and
//!   `SHA256SUMS` (see `src/dist/assemble.rs`).
//! - `publish check|crates|npm|wheels|github …`: the release's uploads, each registry's
//!   packages after those they depend on (see `src/publish.rs` and docs/releasing.md).
//! - `release --dry-run …`: the release workflow rehearsed here against a loopback npm registry
//!   and Python index (see `src/release.rs`).

use std::process::ExitCode;

fn usage() -> String {
    format!(
        "usage: cargo xtask components [--check]\n       cargo xtask dist [--target TRIPLE]... [--profile NAME] [--out DIR] \
         [--no-assemble]\n       cargo xtask dist assemble --from DIR... [--out DIR] [--complete]\n{}\n{}",
        xtask::publish::USAGE,
        xtask::release::USAGE
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let workspace = xtask::workspace();
    let outcome = match args.as_slice() {
        ["components"] => xtask::components::regenerate(&workspace).map(|written| {
            for line in written {
                println!("{line}");
            }
        }),
        ["components", "--check"] => xtask::components::check(&workspace).map(|()| {
            println!("the committed components are what their sources build");
        }),
        ["dist", "assemble", rest @ ..] => xtask::dist::assemble::Options::parse(&workspace, rest)
            .and_then(|options| xtask::dist::assemble::assemble(&workspace, &options))
            .map(|files| {
                for file in files {
                    println!("{}", file.display());
                }
            }),
        ["dist", rest @ ..] => xtask::dist::Options::parse(&workspace, rest)
            .and_then(|options| xtask::dist::dist(&workspace, &options))
            .map(|files| {
                for file in files {
                    println!("{}", file.display());
                }
            }),
        ["publish", rest @ ..] => xtask::publish::run(&workspace, rest).map(|lines| {
            for line in lines {
                println!("{line}");
            }
        }),
        ["release", rest @ ..] => xtask::release::run(&workspace, rest).map(|lines| {
            for line in lines {
                println!("{line}");
            }
        }),
        _ => Err(usage()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
