//! Content-addressed cache of what was pulled: manifests, components and signatures, each file
//! named by the SHA-256 of its bytes and checked against it whenever it is read, so a damaged
//! or altered entry is never loaded (it is fetched again).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// `<cache dir>/oci`.
pub(crate) struct Cache {
    root: PathBuf,
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

impl Cache {
    pub(crate) fn new(cache_dir: &Path) -> Self {
        Cache { root: cache_dir.join("oci") }
    }

    fn path(&self, digest: &str) -> Option<PathBuf> {
        crate::reference::is_sha256_digest(digest).then(|| self.root.join("sha256").join(&digest["sha256:".len()..]))
    }

    /// The bytes of `digest`, if cached and intact.
    pub(crate) fn get(&self, digest: &str) -> Option<Vec<u8>> {
        let bytes = std::fs::read(self.path(digest)?).ok()?;
        if digest_of(&bytes) == digest {
            return Some(bytes);
        }
        tracing::warn!(digest, "a cached OCI blob does not match its digest; fetching it again");
        None
    }

    /// Keeps `bytes` (whose digest the caller checked) under their digest: written to a
    /// temporary file and renamed, so a reader never sees half an entry. A cache that cannot be
    /// written costs a pull next time, nothing else.
    pub(crate) fn put(&self, bytes: &[u8]) {
        let digest = digest_of(bytes);
        let Some(path) = self.path(&digest) else { return };
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(path.parent().expect("a blob path has a parent"))?;
            let temporary = path.with_extension(format!("{}.tmp", std::process::id()));
            std::fs::write(&temporary, bytes)?;
            std::fs::rename(&temporary, &path)
        };
        if let Err(error) = write() {
            tracing::warn!(%digest, %error, "could not cache an OCI blob");
        }
    }

    /// The digest of the signature published for the component `component` (a small pointer
    /// file, itself checked through the entry it names).
    pub(crate) fn signature_of(&self, component: &str) -> Option<Vec<u8>> {
        let pointer = self.root.join("signatures").join(component.strip_prefix("sha256:")?);
        let digest = std::fs::read_to_string(pointer).ok()?;
        self.get(digest.trim())
    }

    /// Remembers `signature` as the one published for `component`.
    pub(crate) fn put_signature(&self, component: &str, signature: &[u8]) {
        self.put(signature);
        let Some(hex) = component.strip_prefix("sha256:") else { return };
        let dir = self.root.join("signatures");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            let temporary = dir.join(format!("{hex}.{}.tmp", std::process::id()));
            std::fs::write(&temporary, digest_of(signature))?;
            std::fs::rename(&temporary, dir.join(hex))
        };
        if let Err(error) = write() {
            tracing::warn!(component, %error, "could not cache a signature");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cache, digest_of};

    #[test]
    fn entries_are_found_by_digest_and_a_damaged_one_is_not_served() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let digest = digest_of(b"component");
        assert_eq!(cache.get(&digest), None);
        cache.put(b"component");
        assert_eq!(cache.get(&digest).as_deref(), Some(&b"component"[..]));
        let file = dir.path().join("oci/sha256").join(&digest[7..]);
        std::fs::write(file, b"tampered").unwrap();
        assert_eq!(cache.get(&digest), None, "altered bytes are never served");
        assert_eq!(cache.get("sha256:../../etc/passwd"), None, "only digests name files");
    }

    #[test]
    fn a_signature_is_remembered_for_its_component() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        let component = digest_of(b"component");
        assert_eq!(cache.signature_of(&component), None);
        cache.put_signature(&component, b"-----BEGIN SSH SIGNATURE-----");
        assert_eq!(cache.signature_of(&component).as_deref(), Some(&b"-----BEGIN SSH SIGNATURE-----"[..]));
    }
}
