//! The lock file: each tag reference pinned to the manifest digest it first resolved to, so a
//! tag moved to another component is refused instead of loaded (the operator accepts the new
//! one by deleting its pin or by naming `@sha256:` in the configuration).
//!
//! ```toml
//! [[pin]]
//! reference = "oci://ghcr.io/acme/redactor:1.0"
//! digest = "sha256:…"
//! pinned_at_unix_ms = 1795578216283
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Longest lock file read, in bytes (a pin is about 200 bytes).
const MAX_LOCK_BYTES: u64 = 4 << 20;

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LockFile {
    #[serde(default)]
    pin: Vec<Pin>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pin {
    reference: String,
    digest: String,
    pinned_at_unix_ms: u64,
}

/// The lock file at a path (created on the first pin).
pub(crate) struct Lock {
    path: PathBuf,
}

impl Lock {
    pub(crate) fn new(path: PathBuf) -> Self {
        Lock { path }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<LockFile, String> {
        let place = self.path.display();
        match std::fs::metadata(&self.path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LockFile::default()),
            Err(e) => return Err(format!("reading the lock file {place}: {e}")),
            Ok(meta) if meta.len() > MAX_LOCK_BYTES => {
                return Err(format!("the lock file {place} is {} bytes; the most is {MAX_LOCK_BYTES}", meta.len()));
            }
            Ok(_) => {}
        }
        let text = std::fs::read_to_string(&self.path).map_err(|e| format!("reading the lock file {place}: {e}"))?;
        toml::from_str(&text).map_err(|e| format!("the lock file {place} is not valid: {e}"))
    }

    /// The digest `reference` is pinned to, if any.
    pub(crate) fn pinned(&self, reference: &str) -> Result<Option<String>, String> {
        Ok(self.read()?.pin.into_iter().find(|p| p.reference == reference).map(|p| p.digest))
    }

    /// Pins `reference` to `digest` (a reference already pinned keeps its pin). Written to a
    /// temporary file and renamed: a reader sees the old file or the new one.
    pub(crate) fn pin(&self, reference: &str, digest: &str) -> Result<(), String> {
        let mut file = self.read()?;
        if file.pin.iter().any(|p| p.reference == reference) {
            return Ok(());
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
        file.pin.push(Pin {
            reference: reference.to_owned(),
            digest: digest.to_owned(),
            pinned_at_unix_ms: now as u64,
        });
        let text = toml::to_string(&file).map_err(|e| format!("writing the lock file: {e}"))?;
        let header = "# Tags of OCI plugin sources, pinned to the digest they first resolved to (scratchpad).\n\
                      # A tag that moves is refused; delete its pin to accept the new digest.\n";
        let write = || -> std::io::Result<()> {
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            let temporary = self.path.with_extension(format!("lock.{}.tmp", std::process::id()));
            std::fs::write(&temporary, format!("{header}\n{text}"))?;
            std::fs::rename(&temporary, &self.path)
        };
        write().map_err(|e| format!("writing the lock file {}: {e}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::Lock;

    #[test]
    fn a_pin_is_kept_and_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let lock = Lock::new(dir.path().join("plugins.lock"));
        assert_eq!(lock.pinned("oci://r/a:1").unwrap(), None);
        lock.pin("oci://r/a:1", "sha256:aa").unwrap();
        lock.pin("oci://r/a:1", "sha256:bb").unwrap();
        lock.pin("oci://r/b:1", "sha256:cc").unwrap();
        assert_eq!(lock.pinned("oci://r/a:1").unwrap().as_deref(), Some("sha256:aa"));
        assert_eq!(lock.pinned("oci://r/b:1").unwrap().as_deref(), Some("sha256:cc"));
        std::fs::write(dir.path().join("plugins.lock"), "[[pin]]\nreference = 1\n").unwrap();
        assert!(lock.pinned("oci://r/a:1").unwrap_err().contains("is not valid"));
    }
}
