//! The crates a user depends on, as crates.io would serve them: `cargo package` makes the
//! `.crate` files, they are unpacked outside the repository, and a fresh binary crate that
//! depends on them by version (`[patch.crates-io]` points at the unpacked directories), with
//! `default-features = false` (a SQLite-only host: no PostgreSQL, no OCI client), builds and
//! runs the embedding example; `cargo install --locked --path` of the unpacked CLI gives a
//! `scratchpad` whose `demo` works. Both builds use a toolchain with **no wasm target**: a copy
//! of the pinned toolchain (hard links) without any `lib/rustlib/wasm32-*`, run directly, with
//! no rustup proxy on `PATH` that could reach another one.
//!
//! The builds share one target directory, `target/published/build` (see [`PROFILE`]), so the
//! install reuses what the consumer built and a second run reuses the first's; the toolchain
//! copy is kept in `target/published/`. The unpacked crates, the consumer and the install are
//! made fresh each run in a temporary directory outside the repository (whose workspace would
//! otherwise claim the unpacked crates).

use std::path::{Path, PathBuf};
use std::process::Command;

use scratchpad_tests::runtimes::{root, run};

/// The libraries the host is made of, in dependency order: what a runtime's `Cargo.toml` pulls
/// in with `scratchpad-host = "0.1"`.
const LIBRARIES: &[&str] = &["scratchpad-powers", "scratchpad-supply", "scratchpad-components", "scratchpad-host"];
/// Every crate that is published: the libraries, the CLI, and the plugin SDK (packaged here
/// too, though nothing below builds it: it is for plugins, built for `wasm32-wasip2`).
const PUBLISHED: &[&str] = &[
    "scratchpad-powers",
    "scratchpad-supply",
    "scratchpad-components",
    "scratchpad-host",
    "scratchpad-cli",
    "scratchpad-plugin-sdk",
];
/// Their version (one for every crate of the workspace).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The dev profile as a user's fresh crate has it (dependencies unoptimised), without debug
/// info for the dependencies: less to compile and write. This workspace's own test build
/// optimises its dependencies, but its units cannot serve here anyway: a user's crate unifies
/// other features (of serde, log, indexmap, hashbrown, …) into wasmtime and Cranelift than this
/// workspace does, so their whole tree is compiled again for the consumer and again for the CLI.
/// Unoptimised, the consumer built in 5.5 min on a cold target directory instead of 16.9 min at
/// `opt-level = 2` (2026-11-26, this project's 2-core VM); what it costs back is the first
/// start compiling the components with an unoptimised Cranelift (about 18 s).
const PROFILE: &[&str] =
    &["--config", "profile.dev.package.\"*\".debug=false", "--config", "profile.dev.debug=\"line-tables-only\""];

#[test]
fn the_packaged_crates_build_and_run_outside_the_repository_with_no_wasm_target() {
    let work = root().join("target/published");
    // Outside the repository (whose workspace would claim the unpacked crates).
    let outside = tempfile::tempdir().unwrap();
    let crates = package_and_unpack(&work, outside.path());
    let unpacked = |name: &str| crates.join(format!("{name}-{VERSION}"));
    let toolchain = native_only_toolchain(&work);
    // A target directory of their own: `cargo install` leaves its binary in the target
    // directory's `debug/` too, where it would replace the workspace's `scratchpad` that later
    // tests run (and which, unlike this one, has optimised dependencies).
    let target_dir = work.join("build");

    // A fresh binary crate depending on `scratchpad-host = "0.1"`, its dependencies at the
    // versions this workspace locks: the embedding example.
    let consumer = outside.path().join("consumer");
    std::fs::create_dir_all(consumer.join("src")).unwrap();
    let patch: String = LIBRARIES.iter().map(|name| format!("{name} = {{ path = {:?} }}\n", unpacked(name))).collect();
    std::fs::write(
        consumer.join("Cargo.toml"),
        format!(
            "[package]\nname = \"consumer\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\nscratchpad-host = {{ version = \"0.1\", default-features = false }}\ntokio = {{ version = \"1\", features = [\"macros\", \
             \"rt-multi-thread\"] }}\nanyhow = \"1\"\ntempfile = \"3\"\n\n[patch.crates-io]\n{patch}\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::copy(root().join("Cargo.lock"), consumer.join("Cargo.lock")).unwrap();
    // The example the host crate ships, verbatim: the session, `set_plan` through the tool,
    // the next turn's prompt.
    std::fs::copy(unpacked("scratchpad-host").join("examples/embed.rs"), consumer.join("src/main.rs"))
        .expect("the packaged host crate ships examples/embed.rs");
    let mut build = toolchain.cargo(&target_dir);
    build.args(["build", "--quiet"]).args(PROFILE).current_dir(&consumer);
    run(&mut build, "building a crate that depends on the packaged scratchpad-host, with no wasm target");
    // Without the default features the host is SQLite-only: no PostgreSQL client, no OCI
    // client, no TLS in the consumer's tree.
    let mut tree = toolchain.cargo(&target_dir);
    tree.args(["tree", "--quiet", "-e", "normal", "--prefix", "none"]).current_dir(&consumer);
    let tree = run(&mut tree, "cargo tree of the consumer");
    let tree = String::from_utf8_lossy(&tree.stdout);
    for absent in ["tokio-postgres", "deadpool-postgres", "oci-client", "rustls", "reqwest"] {
        assert!(!tree.lines().any(|line| line.starts_with(&format!("{absent} "))), "{absent} in:\n{tree}");
    }
    assert!(tree.lines().any(|line| line.starts_with("rusqlite ")), "{tree}");
    let example = run(&mut Command::new(target_dir.join("debug/consumer")), "running the embedding example");
    let out = String::from_utf8_lossy(&example.stdout);
    assert!(out.contains("tools for the model: [\"session.scratchpad\""), "{out}");
    assert!(out.contains("tool result: "), "{out}");
    let system = out.split("--- system ---").nth(1).expect("the example prints the prompt");
    assert!(system.contains("1. Fix X") && system.contains("2. Test Y"), "the plan is not in the next prompt:\n{out}");

    // `cargo install --locked --path` of the unpacked CLI: the versions its packaged lock file
    // holds (what `cargo install --locked scratchpad-cli` takes from crates.io), its own
    // libraries from the unpacked crates instead of the registry.
    let cli = unpacked("scratchpad-cli");
    point_lock_at_paths(&cli.join("Cargo.lock"));
    let home = tempfile::tempdir().unwrap();
    let mut install = toolchain.cargo(&target_dir);
    install
        .args(["install", "--quiet", "--locked", "--debug", "--path"])
        .arg(&cli)
        .arg("--root")
        .arg(home.path().join("install"))
        .args(PROFILE)
        .current_dir(home.path());
    for name in LIBRARIES {
        install.arg("--config").arg(format!("patch.crates-io.{name}.path={:?}", unpacked(name).display().to_string()));
    }
    run(&mut install, "cargo install --path of the packaged scratchpad-cli, with no wasm target");
    let demo = run(
        Command::new(home.path().join("install/bin/scratchpad"))
            .arg("demo")
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path().join("data"))
            .env("XDG_CACHE_HOME", home.path().join("cache")),
        "the installed scratchpad's demo",
    );
    scratchpad_tests::assert_demo_output(&String::from_utf8_lossy(&demo.stdout));
}

/// Rewrites a packaged lock file so this project's libraries, which it records as crates.io
/// packages (with checksums of the `.crate` files), are the path packages `[patch]` makes them:
/// their `source` and `checksum` lines go, every other entry stays as packaged.
fn point_lock_at_paths(lock: &Path) {
    let text = std::fs::read_to_string(lock).expect("the packaged CLI has a Cargo.lock");
    let mut ours = false;
    let mut rewritten = String::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("name = ") {
            ours = LIBRARIES.iter().any(|library| name == format!("\"{library}\""));
        }
        if ours && (line.starts_with("source = ") || line.starts_with("checksum = ")) {
            continue;
        }
        rewritten.push_str(line);
        rewritten.push('\n');
    }
    std::fs::write(lock, rewritten).unwrap();
}

/// Packages the published crates in one `cargo package` (they resolve against each other) and
/// unpacks them into `outside/crates`; that directory.
fn package_and_unpack(work: &Path, outside: &Path) -> PathBuf {
    let package_target = work.join("package");
    let mut package = Command::new(env!("CARGO"));
    // Not verified here: the build below is the verification, with no wasm target.
    package.args(["package", "--quiet", "--no-verify", "--allow-dirty", "--target-dir"]).arg(&package_target);
    for name in PUBLISHED {
        package.args(["-p", name]);
    }
    run(package.current_dir(root()), "cargo package of the published crates");
    let crates = outside.join("crates");
    std::fs::create_dir_all(&crates).unwrap();
    for name in PUBLISHED {
        let file = package_target.join(format!("package/{name}-{VERSION}.crate"));
        run(
            Command::new("tar").arg("-xzf").arg(&file).arg("-C").arg(&crates),
            &format!("unpacking {}", file.display()),
        );
    }
    crates
}

/// A copy of the pinned toolchain without its wasm targets.
struct Toolchain {
    dir: PathBuf,
}

/// The pinned toolchain (`rustc --print sysroot` here, under `rust-toolchain.toml`) copied to
/// `work/toolchain` as hard links, with every `lib/rustlib/wasm32-*` left out; checked to have
/// no wasm target.
fn native_only_toolchain(work: &Path) -> Toolchain {
    let sysroot = run(Command::new("rustc").args(["--print", "sysroot"]).current_dir(root()), "rustc --print sysroot");
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    let dir = work.join("toolchain");
    let marker = dir.join("copied-from");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(sysroot.to_str().unwrap()) {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // `cp -l` makes hard links: no bytes copied, and a binary run from the copy finds its
        // sysroot (and so its targets) in the copy.
        for part in ["bin", "lib", "libexec"] {
            if sysroot.join(part).exists() {
                run(Command::new("cp").arg("-al").arg(sysroot.join(part)).arg(&dir), "copying the toolchain");
            }
        }
        for entry in std::fs::read_dir(dir.join("lib/rustlib")).unwrap().flatten() {
            if entry.file_name().to_string_lossy().starts_with("wasm32") {
                std::fs::remove_dir_all(entry.path()).unwrap();
            }
        }
        std::fs::write(&marker, sysroot.to_str().unwrap()).unwrap();
    }
    let toolchain = Toolchain { dir };
    let printed = run(toolchain.command("rustc").args(["--print", "sysroot"]), "the copied rustc's sysroot");
    assert_eq!(
        Path::new(String::from_utf8_lossy(&printed.stdout).trim()),
        toolchain.dir,
        "the copy is its own sysroot"
    );
    let targets: Vec<String> = std::fs::read_dir(toolchain.dir.join("lib/rustlib"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!targets.iter().any(|t| t.starts_with("wasm32")), "the copy still has a wasm target: {targets:?}");
    toolchain
}

impl Toolchain {
    /// `name` from the copy, with a `PATH` of the copy's `bin` and the system's directories
    /// only (no `~/.cargo/bin`, whose rustup proxies would pick the full toolchain) and no
    /// variable that points cargo at another toolchain or target directory.
    fn command(&self, name: &str) -> Command {
        let bin = self.dir.join("bin");
        let mut command = Command::new(bin.join(name));
        command.env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()));
        // `LD_LIBRARY_PATH`: cargo runs tests with the full toolchain's `lib` on it, where the
        // copy's rustc would load its compiler library from (and so find that sysroot).
        for var in [
            "LD_LIBRARY_PATH",
            "RUSTUP_TOOLCHAIN",
            "RUSTC",
            "RUSTDOC",
            "RUSTC_WRAPPER",
            "RUSTC_WORKSPACE_WRAPPER",
            "RUSTFLAGS",
        ] {
            command.env_remove(var);
        }
        for (var, _) in std::env::vars_os() {
            let var = var.to_string_lossy();
            if var.starts_with("CARGO_") && var != "CARGO_HOME" {
                command.env_remove(&*var);
            }
        }
        command
    }

    /// The copy's `cargo`, building into `target_dir`.
    fn cargo(&self, target_dir: &Path) -> Command {
        let mut cargo = self.command("cargo");
        cargo.env("CARGO_TARGET_DIR", target_dir).env("RUSTC", self.dir.join("bin/rustc"));
        // As this workspace builds: incremental caches only cost disk and time on a one-off build.
        cargo.env("CARGO_INCREMENTAL", "0");
        cargo
    }
}
