//! What a hostile plugin reaches for and does not get: the filesystem, the environment, the
//! network, another plugin's or another session's keys. Each test first proves the data is
//! really there for its owner, so "denied" cannot mean "there was nothing to find". And
//! components that do not implement the contract are refused at load, saying which and why.

use std::io::ErrorKind;
use std::net::{TcpListener, TcpStream};
use std::process::Command;

use scratchpad_host::{Error, Host, InstanceAllocation, Origin, ToolErrorKind};
use scratchpad_tests::{Fixture, components, dump, probe, scratchpad, trusted, turn};
use serde_json::json;

async fn beside_scratchpad(fx: &Fixture) -> Host {
    let host = fx.open(vec![scratchpad(json!({})), probe("probe", "p")]).await;
    host.create_session("s", Origin::New).await.unwrap();
    host
}

#[tokio::test]
async fn the_filesystem_is_denied() {
    let fx = Fixture::new();
    let secret = fx.dir.path().join("secret.txt");
    std::fs::write(&secret, "the host's secret").unwrap();
    let host = beside_scratchpad(&fx).await;
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    for path in [secret.to_str().unwrap(), fx.db().to_str().unwrap(), manifest, "/etc/passwd"] {
        assert!(!std::fs::read(path).unwrap().is_empty(), "{path} is really there for the host");
        let out = host.call_tool(&turn("s", "t1"), "p.fs", &json!({ "path": path }).to_string()).await.unwrap();
        assert!(out.content.starts_with("denied:"), "{path}: {}", out.content);
    }
}

const SECRET_VAR: &str = "SCRATCHPAD_TEST_SECRET";

/// The host process's environment holds a secret (set before the child test process starts,
/// so no thread races `setenv`), and the plugin sees no environment at all.
#[test]
fn the_environment_is_denied() {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            &scratchpad_tests::test_name(module_path!(), "environment_probe_in_a_child_process"),
            "--test-threads=1",
        ])
        .env(SECRET_VAR, "hunter2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 passed"), "the child test must have run: {stdout}");
}

/// The child half of `the_environment_is_denied`: it runs only in the child process that test
/// starts with the secret in its environment (in the normal run there is no secret to probe).
#[tokio::test]
async fn environment_probe_in_a_child_process() {
    if std::env::var_os(SECRET_VAR).is_none() {
        return;
    }
    assert_eq!(std::env::var(SECRET_VAR).as_deref(), Ok("hunter2"), "the secret is in the host's environment");
    assert!(std::env::var_os("PATH").is_some());
    let fx = Fixture::new();
    let host = beside_scratchpad(&fx).await;
    let out = host.call_tool(&turn("s", "t1"), "p.env", "{}").await.unwrap();
    assert_eq!(out.content, "[]", "the plugin sees no environment variable at all");
}

#[tokio::test]
async fn sockets_are_denied() {
    let fx = Fixture::new();
    let host = beside_scratchpad(&fx).await;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();

    for target in [addr.to_string(), format!("localhost:{}", addr.port())] {
        let out = host.call_tool(&turn("s", "t1"), "p.net", &json!({ "addr": target }).to_string()).await.unwrap();
        assert!(out.content.starts_with("denied:"), "{target}: {}", out.content);
    }
    assert_eq!(listener.accept().map(|_| ()).unwrap_err().kind(), ErrorKind::WouldBlock, "nothing connected");
    // The listener is really there: the host process itself can connect to it.
    let _client = TcpStream::connect(addr).unwrap();
    let accepted = (0..200).find_map(|_| match listener.accept() {
        Ok(_) => Some(()),
        Err(_) => {
            std::thread::sleep(std::time::Duration::from_millis(5));
            None
        }
    });
    assert!(accepted.is_some(), "the test's own connection arrives");
}

#[tokio::test]
async fn another_plugins_and_another_sessions_keys_are_not_found() {
    let fx = Fixture::new();
    let host = fx.open(vec![scratchpad(json!({})), probe("alpha", "a"), probe("beta", "b")]).await;
    host.create_session("s1", Origin::New).await.unwrap();
    host.create_session("s2", Origin::New).await.unwrap();
    let (s1, s2) = (turn("s1", "t1"), turn("s2", "t1"));
    host.call_tool(&s1, "a.write", r#"{"key":"secret","value":"alpha's"}"#).await.unwrap();
    host.call_tool(&s1, "session.scratchpad", r#"{"action":"set_notes","content":"scratchpad's"}"#).await.unwrap();

    let not_found = |result: Result<scratchpad_host::ToolOutput, Error>| {
        assert!(
            matches!(&result, Err(Error::Tool { error, .. }) if error.kind == ToolErrorKind::NotFound),
            "{result:?}"
        )
    };
    // Another plugin in the same session, by every spelling that might escape a scope.
    for key in ["secret", "alpha/secret", "alpha:secret", "../alpha/secret", "s1/alpha/secret", "notes", "%"] {
        not_found(host.call_tool(&s1, "b.read", &json!({ "key": key }).to_string()).await);
    }
    assert_eq!(host.call_tool(&s1, "b.keys", r#"{"prefix":""}"#).await.unwrap().content, "[]");
    // The same plugin in another session.
    not_found(host.call_tool(&s2, "a.read", r#"{"key":"secret"}"#).await);
    assert_eq!(host.call_tool(&s2, "a.keys", r#"{"prefix":""}"#).await.unwrap().content, "[]");

    // The owners still read their data, and it is really stored.
    assert_eq!(host.call_tool(&s1, "a.read", r#"{"key":"secret"}"#).await.unwrap().content, "alpha's");
    let stored = dump(&fx.db(), "s1");
    assert!(stored.contains(&("alpha".into(), "secret".into(), b"alpha's".to_vec())), "{stored:?}");
    assert!(stored.iter().any(|(p, k, _)| p == "scratchpad" && k == "notes"), "{stored:?}");
}

/// Pseudo-random bytes (SplitMix64), reproducible.
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

#[tokio::test]
async fn components_that_do_not_implement_the_contract_are_refused_saying_which_and_why() {
    let fx = Fixture::new();
    let probe_bytes = std::fs::read(components::PROBE_PATH).unwrap();
    let mut header_only = b"\0asm\x0d\x00\x01\x00".to_vec();
    header_only.extend(noise(512, 2));
    let cases: Vec<(&str, Vec<u8>, &[&str])> = vec![
        ("core", b"\0asm\x01\x00\x00\x00".to_vec(), &["core WebAssembly module, not a component", "wasm32-wasip2"]),
        ("random", noise(4096, 1), &["not a WebAssembly file", "magic bytes"]),
        ("empty", Vec::new(), &["the file is empty"]),
        ("text", b"#!/bin/sh\necho hello\n".to_vec(), &["not a WebAssembly file"]),
        ("future-layer", b"\0asm\x0e\x00\x02\x00".to_vec(), &["unsupported WebAssembly version/layer"]),
        ("garbage", header_only, &["not a valid component"]),
        ("truncated", probe_bytes[..probe_bytes.len() / 2].to_vec(), &["not a valid component"]),
        ("alien", std::fs::read(components::ALIEN_PATH).unwrap(), &["does not fit", "alien:spy/secrets"]),
        (
            "future",
            std::fs::read(components::FUTURE_PATH).unwrap(),
            &["built against version 0.2.0", "implements 0.1.3"],
        ),
    ];
    for (name, bytes, needles) in cases {
        let path = fx.dir.path().join(format!("{name}.wasm"));
        std::fs::write(&path, &bytes).unwrap();
        let plugins = vec![scratchpad(json!({})), trusted(&path)];
        let err = Host::open(fx.config(plugins)).await.err().unwrap_or_else(|| panic!("{name} was loaded"));
        let message = err.to_string();
        assert!(matches!(&err, Error::Load { plugin, .. } if plugin == name), "{name}: {message}");
        assert!(message.starts_with(&format!("loading plugin `{name}`: ")), "{message}");
        for needle in needles {
            assert!(message.contains(needle), "{name}: `{needle}` missing from: {message}");
        }
    }
    let missing = trusted(fx.dir.path().join("nowhere.wasm"));
    let err = Host::open(fx.config(vec![scratchpad(json!({})), missing])).await.err().unwrap();
    assert!(matches!(&err, Error::Load { plugin, .. } if plugin == "nowhere"), "{err}");
    assert!(err.to_string().contains("nowhere.wasm") && err.to_string().contains("No such file"), "{err}");
}

#[tokio::test]
async fn nothing_an_instance_keeps_in_its_memory_reaches_a_later_call() {
    // With instances made ahead and without: each call gets an instance no call has used, so a
    // counter in the plugin's own memory reads 1 every time, in any session.
    for warm_instances in [0, 2] {
        let fx = Fixture::new();
        let mut config = fx.config(vec![scratchpad(json!({})), probe("probe", "p")]);
        config.warm_instances = warm_instances;
        let host = Host::open(config).await.unwrap();
        for session in ["s", "other"] {
            host.create_session(session, Origin::New).await.unwrap();
        }
        for (i, session) in ["s", "s", "other", "s"].into_iter().enumerate() {
            let out = host.call_tool(&turn(session, &format!("t{i}")), "p.count", "{}").await.unwrap();
            assert_eq!(out.content, "1", "call {i} with warm_instances = {warm_instances} saw a used instance");
        }
    }
}

#[tokio::test]
async fn a_secret_a_call_leaves_on_its_stack_or_heap_is_not_in_the_next_calls_memory() {
    // Every way instances are made: from the pool (whose slots are reset in place, keeping
    // pages resident) or mapped per instance, made ahead or in the call.
    for allocation in [InstanceAllocation::Pooling, InstanceAllocation::OnDemand] {
        for warm_instances in [0, 2] {
            let fx = Fixture::new();
            let mut config = fx.config(vec![probe("probe", "p")]);
            (config.instance_allocation, config.warm_instances) = (allocation, warm_instances);
            let host = Host::open(config).await.unwrap();
            host.create_session("s", Origin::New).await.unwrap();
            let how = format!("{allocation:?}, warm_instances = {warm_instances}");
            for i in 0..3 {
                let secret = format!("SECRET-{i}-4f9c2a");
                let stash = json!({ "secret": secret }).to_string();
                let out = host.call_tool(&turn("s", &format!("a{i}")), "p.stash", &stash).await.unwrap();
                let stashed: serde_json::Value = serde_json::from_str(&out.content).unwrap();
                assert_eq!(stashed["echo"], json!([secret, secret]), "{how}: the probe reads its own stash back");
                for place in ["stack", "heap"] {
                    let peek = json!({ "addr": stashed[place], "len": stashed["len"] }).to_string();
                    let seen = host.call_tool(&turn("s", &format!("b{i}")), "p.peek", &peek).await.unwrap().content;
                    assert!(!seen.contains("SECRET"), "{how}: call {i} found the last call's {place} secret: {seen:?}");
                }
            }
        }
    }
}

/// A host under memory pressure may swap out the pages a call wrote before its instance's slot
/// is reset. The reset must still give the next instance the image's contents: a written page
/// that is not resident is still written. (wasmtime 48's `PAGEMAP_SCAN` reset looked only for
/// written pages that were resident, and left a swapped-out one to the next instance in the
/// slot, with the last call's data in it; wasmtime PR #14357.)
///
/// The test swaps for real: it turns on a swap file for its duration (as root, like
/// PostgreSQL's set-up here) unless swap is already on, and while the probe's call lingers
/// after stashing its secret, asks the kernel to page out the process's writable memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_on_a_page_swapped_out_before_the_reset_is_not_in_the_next_calls_memory() {
    let _swap = swap::Enabled::ensure();
    for warm_instances in [0, 2] {
        let fx = Fixture::new();
        let limits = scratchpad_host::Limits { call_timeout: std::time::Duration::from_secs(30), ..Default::default() };
        let mut config = fx.config(vec![probe("probe", "p").with_limits(limits)]);
        (config.instance_allocation, config.warm_instances) = (InstanceAllocation::Pooling, warm_instances);
        let host = Host::open(config).await.unwrap();
        host.create_session("s", Origin::New).await.unwrap();
        host.create_session("other", Origin::New).await.unwrap();
        for i in 0..3 {
            let secret = format!("SECRET-{i}-swapped-7d1e");
            let stash = json!({ "secret": secret, "linger": 300_000_000u64 }).to_string();
            let pager = swap::Pager::start();
            let out = host.call_tool(&turn("s", &format!("a{i}")), "p.stash", &stash).await.unwrap();
            let paged = pager.stop();
            assert!(paged > 0, "nothing was paged out while the call lingered");
            let stashed: serde_json::Value = serde_json::from_str(&out.content).unwrap();
            assert_eq!(stashed["echo"], json!([secret, secret]), "the probe reads its own stash back");
            let peek = json!({ "addr": stashed["heap"], "len": stashed["len"] }).to_string();
            let seen = host.call_tool(&turn("other", &format!("b{i}")), "p.peek", &peek).await.unwrap().content;
            assert!(
                !seen.contains("SECRET"),
                "warm_instances = {warm_instances}: another session's call {i} found a swapped-out secret: {seen:?}"
            );
        }
    }
}

mod swap {
    use std::path::PathBuf;
    use std::process::Command;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::thread::JoinHandle;
    use std::time::Duration;

    /// Swap on for as long as it lives: a swap file it made, or swap that was already on.
    pub struct Enabled {
        file: Option<(tempfile::TempDir, PathBuf)>,
    }

    impl Enabled {
        pub fn ensure() -> Self {
            let swaps = std::fs::read_to_string("/proc/swaps").expect("reading /proc/swaps");
            if swaps.lines().count() > 1 {
                return Enabled { file: None };
            }
            // Not in /tmp: swap files cannot live on tmpfs. Beside the build, on a disk.
            let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
            let path = dir.path().join("swap");
            // Allocated, not sparse: swapon refuses a file with holes.
            run(Command::new("fallocate").arg("-l").arg("1G").arg(&path));
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
            run(Command::new("mkswap").arg(&path));
            run(Command::new("swapon").arg(&path));
            Enabled { file: Some((dir, path)) }
        }
    }

    impl Drop for Enabled {
        fn drop(&mut self) {
            if let Some((_dir, path)) = &self.file {
                let _ = Command::new("swapoff").arg(path).status();
            }
        }
    }

    fn run(command: &mut Command) {
        let out = command.output().unwrap_or_else(|e| panic!("running {command:?}: {e}"));
        assert!(
            out.status.success(),
            "{command:?} failed: {}\nThis test swaps memory out for real: it needs swap on, or root to turn a swap file on.",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A thread asking the kernel to page out every writable private mapping of this process
    /// (`MADV_PAGEOUT`), over and over until stopped.
    pub struct Pager {
        stop: Arc<AtomicBool>,
        paged: Arc<AtomicUsize>,
        thread: JoinHandle<()>,
    }

    impl Pager {
        pub fn start() -> Self {
            let (stop, paged) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
            let (flag, count) = (stop.clone(), paged.clone());
            let thread = std::thread::spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    count.fetch_add(page_out_writable(), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(20));
                }
            });
            Pager { stop, paged, thread }
        }

        /// Stops paging; how many times a mapping was paged out.
        pub fn stop(self) -> usize {
            self.stop.store(true, Ordering::Relaxed);
            self.thread.join().unwrap();
            self.paged.load(Ordering::Relaxed)
        }
    }

    fn page_out_writable() -> usize {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("reading /proc/self/maps");
        let mut paged = 0;
        for line in maps.lines() {
            let mut fields = line.split_whitespace();
            let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
            if !perms.starts_with("rw") || !perms.ends_with('p') || line.ends_with("[vsyscall]") {
                continue;
            }
            let Some((start, end)) = range.split_once('-') else { continue };
            let (start, end) = (usize::from_str_radix(start, 16).unwrap(), usize::from_str_radix(end, 16).unwrap());
            // SAFETY: advice only: MADV_PAGEOUT never changes what the memory holds.
            if unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_PAGEOUT) } == 0 {
                paged += 1;
            }
        }
        paged
    }
}
