//! A real OCI registry on loopback for the tests of OCI plugin sources: Debian's
//! `docker-registry` (the CNCF distribution registry, 2.8) serving a temp dir on a free port of
//! 127.0.0.1, started by the test and killed by PID when dropped. Artifacts are pushed with
//! `skopeo` (Debian's, an independent client) from an OCI image layout written here, shaped as
//! `wkg oci push` shapes a component: config `application/vnd.wasm.config.v0+json`, one layer.
//! `.ci/setup/oci.sh` installs both (and `ssh-keygen`, which signs in the tests); [`Registry::start`]
//! runs it when one is missing ([`crate::setup`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tempfile::TempDir;

use crate::process::free_port;

/// The registry binary (Debian's package `docker-registry`).
const REGISTRY: &str = "docker-registry";
/// The push client (Debian's package `skopeo`).
const SKOPEO: &str = "skopeo";

/// A registry serving a temp dir on 127.0.0.1.
pub struct Registry {
    child: Option<Child>,
    port: u16,
    dir: TempDir,
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

impl Registry {
    /// Starts a registry and waits until it answers `GET /v2/`.
    pub fn start() -> Registry {
        crate::setup::ensure_commands(&crate::setup::OCI, &[REGISTRY, SKOPEO, "ssh-keygen"]);
        let dir = tempfile::tempdir().expect("a temp dir for the registry");
        let port = free_port();
        let config = dir.path().join("registry.yml");
        let storage = dir.path().join("storage");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    \
                 enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
                storage.display()
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("registry.log")).unwrap();
        let child = Command::new(REGISTRY)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("starting `{REGISTRY}` failed: {e}"));
        let registry = Registry { child: Some(child), port, dir };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !registry.answers() {
            assert!(Instant::now() < deadline, "the registry did not answer within 20 s: {}", registry.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `oci://127.0.0.1:PORT/` + `path`.
    pub fn reference(&self, path: &str) -> String {
        format!("oci://{}/{path}", self.host())
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("registry.log")).unwrap_or_default()
    }

    fn answers(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else { return false };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let request = format!("GET /v2/ HTTP/1.0\r\nHost: 127.0.0.1:{}\r\n\r\n", self.port);
        let mut answer = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.")
            && answer.split_whitespace().nth(1) == Some("200")
    }

    /// Pushes `wasm` as `repository:tag`, shaped like `wkg oci push`; returns the manifest's
    /// digest.
    pub fn push_component(&self, repository: &str, tag: &str, wasm: &[u8]) -> String {
        self.push(repository, tag, "application/vnd.wasm.config.v0+json", "application/wasm", wasm)
    }

    /// Pushes `signature` (a `.sig` file's content) as the signature of the component `wasm`
    /// in `repository`: the tag `sha256-<hex of wasm>.sig`, one layer
    /// `application/vnd.scratchpad.sshsig.v1`.
    pub fn push_signature(&self, repository: &str, wasm: &[u8], signature: &[u8]) -> String {
        let tag = format!("sha256-{}.sig", &sha256(wasm)["sha256:".len()..]);
        let media = "application/vnd.scratchpad.sshsig.v1";
        self.push(repository, &tag, "application/vnd.oci.empty.v1+json", media, signature)
    }

    /// Writes an OCI image layout holding one artifact and copies it into the registry with
    /// skopeo; returns the manifest's digest.
    fn push(&self, repository: &str, tag: &str, config_type: &str, layer_type: &str, layer: &[u8]) -> String {
        let layout = tempfile::tempdir().unwrap();
        let blobs = layout.path().join("blobs/sha256");
        std::fs::create_dir_all(&blobs).unwrap();
        let blob = |bytes: &[u8]| -> serde_json::Value {
            let digest = sha256(bytes);
            std::fs::write(blobs.join(&digest["sha256:".len()..]), bytes).unwrap();
            serde_json::json!({ "digest": digest, "size": bytes.len() })
        };
        let descriptor = |media: &str, bytes: &[u8]| {
            let mut d = blob(bytes);
            d["mediaType"] = media.into();
            d
        };
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": descriptor(config_type, b"{}"),
            "layers": [descriptor(layer_type, layer)],
        });
        let manifest = serde_json::to_vec(&manifest).unwrap();
        let mut entry = descriptor("application/vnd.oci.image.manifest.v1+json", &manifest);
        entry["annotations"] = serde_json::json!({ "org.opencontainers.image.ref.name": tag });
        std::fs::write(
            layout.path().join("index.json"),
            serde_json::json!({ "schemaVersion": 2, "manifests": [entry] }).to_string(),
        )
        .unwrap();
        std::fs::write(layout.path().join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
        let out = Command::new(SKOPEO)
            .args(["--insecure-policy", "copy", "--quiet", "--dest-tls-verify=false", "--preserve-digests"])
            .arg(format!("oci:{}:{tag}", layout.path().display()))
            .arg(format!("docker://{}/{repository}:{tag}", self.host()))
            .output()
            .unwrap_or_else(|e| panic!("running `{SKOPEO}` failed: {e}"));
        assert!(out.status.success(), "skopeo copy: {}", String::from_utf8_lossy(&out.stderr));
        sha256(&manifest)
    }

    /// Where the registry keeps the blob `digest` (to damage it).
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = &digest["sha256:".len()..];
        self.dir.path().join("storage/docker/registry/v2/blobs/sha256").join(&hex[..2]).join(hex).join("data")
    }

    /// Stops the registry (killed by PID); the object stays for its storage's sake.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The registry's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop();
    }
}
