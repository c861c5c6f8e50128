//! A real npm registry on loopback for the install tests: verdaccio (pinned in
//! `tests/npm-registry/package-lock.json`, run on the pinned Node 24), serving a temp dir on a
//! free port of 127.0.0.1 with no uplink (nothing reaches the public registry), started by the
//! test and killed by PID when dropped. Packages are published to it with the real `npm
//! publish`, as a user named `ci` it registers itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::runtimes::{npm_package_on_node24, run, system_npm};

/// A running registry.
pub struct NpmRegistry {
    child: Option<Child>,
    port: u16,
    dir: TempDir,
    /// `PATH` with Node 24 first (for `npm` and the registry).
    path: OsString,
    /// An `.npmrc` naming the registry and the `ci` user's token, for publishing.
    publisher_npmrc: PathBuf,
}

impl NpmRegistry {
    /// Starts a registry and waits until it answers; registers the publishing user.
    pub fn start() -> NpmRegistry {
        let (entry, path) = npm_package_on_node24(
            "tests/npm-registry",
            "node_modules/verdaccio/bin/verdaccio",
            "the pinned npm registry (verdaccio)",
        );
        let dir = tempfile::tempdir().expect("a temp dir for the registry");
        let port = crate::process::free_port();
        let config = dir.path().join("config.yaml");
        // No uplinks: a package that is not published here does not exist. The body limit is
        // raised for packages carrying a binary (verdaccio's default is 10 MB).
        std::fs::write(
            &config,
            format!(
                "storage: {}\nauth:\n  htpasswd:\n    file: {}\n    max_users: 10\nuplinks: {{}}\npackages:\n  \
                 '**':\n    access: $all\n    publish: $authenticated\nmax_body_size: 500mb\nlisten: 127.0.0.1:{port}\n\
                 log: {{ type: stdout, format: pretty, level: warn }}\n",
                dir.path().join("storage").display(),
                dir.path().join("htpasswd").display(),
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new(node(&path))
            .arg(&entry)
            .arg("--config")
            .arg(&config)
            .env("PATH", &path)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting verdaccio: {e}"));
        let publisher_npmrc = dir.path().join("publisher.npmrc");
        let registry = NpmRegistry { child: Some(child), port, dir, path, publisher_npmrc };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !registry.answers() {
            assert!(Instant::now() < deadline, "verdaccio did not answer within 60 s:\n{}", registry.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        registry.register_publisher();
        registry
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// `PATH` with Node 24 first (run the system `npm`, [`system_npm`], with it).
    pub fn path(&self) -> &OsString {
        &self.path
    }

    /// Publishes the package tarball `file` with `npm publish`.
    pub fn publish(&self, file: &Path) {
        run(
            Command::new(system_npm("publishing to the test registry"))
                .arg("publish")
                .arg(file)
                .args(["--registry", &self.url(), "--userconfig"])
                .arg(&self.publisher_npmrc)
                .env("PATH", &self.path),
            &format!("npm publish {}", file.display()),
        );
    }

    /// The `.npmrc` of the publishing user `ci` (its token for this registry), for a publisher
    /// run with `NPM_CONFIG_USERCONFIG`.
    pub fn publisher_npmrc(&self) -> &Path {
        &self.publisher_npmrc
    }

    /// Where the registry keeps the tarball of `name` (`@scope/name`) at `version`, as
    /// published: to damage it, as a bad mirror or disk would.
    pub fn stored_tarball(&self, name: &str, version: &str) -> PathBuf {
        let file = format!("{}-{version}.tgz", name.rsplit('/').next().unwrap());
        self.dir.path().join("storage").join(name).join(file)
    }

    /// An `.npmrc` for a user of this registry: it is their default registry.
    pub fn user_npmrc(&self) -> String {
        format!("registry={}\n", self.url())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    fn answers(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let request = format!("GET /-/ping HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n", self.port);
        let mut response = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut response).is_ok()
            && response.starts_with("HTTP/1.1 200")
    }

    /// Registers the user `ci` (CouchDB's user document, which `npm adduser` sends) and
    /// writes its token into [`NpmRegistry::publisher_npmrc`].
    fn register_publisher(&self) {
        let script = r#"
import json, sys, urllib.request
url, out = sys.argv[1], sys.argv[2]
body = json.dumps({"name": "ci", "password": "ci-password", "type": "user", "roles": [], "date": "2026-01-01T00:00:00Z"})
request = urllib.request.Request(url + "-/user/org.couchdb.user:ci", data=body.encode(), method="PUT",
                                 headers={"content-type": "application/json"})
token = json.load(urllib.request.urlopen(request))["token"]
host = url.split("://", 1)[1]
open(out, "w").write(f"registry={url}\n//{host}:_authToken={token}\n")
"#;
        run(
            Command::new("python3").args(["-c", script, &self.url()]).arg(&self.publisher_npmrc),
            "registering the publishing user with verdaccio",
        );
    }
}

/// The `node` of `path` (its first directory holds Node 24).
fn node(path: &OsString) -> PathBuf {
    std::env::split_paths(path).next().expect("PATH has Node 24 first").join("node")
}

impl Drop for NpmRegistry {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
