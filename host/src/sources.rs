//! Where a plugin's component comes from, and whether the host may trust it: the bytes of an
//! embedded component, a file, or an OCI registry (through `scratchpad_supply`), each
//! third-party component checked against its signature policy before anything compiles it.

use std::path::PathBuf;
use std::sync::Arc;

#[cfg(feature = "oci")]
use scratchpad_supply::Fetcher;
use scratchpad_supply::Reference;
use scratchpad_supply::signature::{self, Publisher};

use crate::config::{HostConfig, PluginSource, PluginSpec, SignaturePolicy};

/// What a pull gives, in a host built without OCI sources (none is ever made).
#[cfg(not(feature = "oci"))]
struct Pulled {
    bytes: Vec<u8>,
    signature: Option<Vec<u8>>,
}

/// Longest a signature file beside a component may be; an SSH signature is well under 2 KiB.
const MAX_SIGNATURE_BYTES: u64 = 64 << 10;

/// What the host needs to get and check third-party components.
pub(crate) struct Sources {
    #[cfg(feature = "oci")]
    fetcher: Fetcher,
    publishers: Vec<Publisher>,
}

/// A component's bytes and signature as fetched, before any check.
pub(crate) struct Unchecked {
    pub(crate) bytes: Arc<[u8]>,
    pub(crate) signature: Option<Vec<u8>>,
}

/// A component's bytes, checked, and what the check found.
pub(crate) struct Fetched {
    pub(crate) bytes: Arc<[u8]>,
    /// The publisher whose signature was verified, if one was.
    pub(crate) signed_by: Option<String>,
}

impl Sources {
    pub(crate) fn new(config: &HostConfig) -> Self {
        #[cfg(feature = "oci")]
        let fetcher = {
            let cache = config.cache_dir.clone().unwrap_or_else(crate::config::cache_dir);
            Fetcher::new(cache, config.lock_file.clone())
        };
        Sources {
            #[cfg(feature = "oci")]
            fetcher,
            publishers: config.publishers.clone(),
        }
    }

    /// The bytes of `spec`'s component, verified against its signature policy, or why not.
    pub(crate) async fn fetch(&self, spec: &PluginSpec) -> Result<Fetched, String> {
        let unchecked = self.get(spec).await?;
        let signed_by = self.check(spec, &unchecked)?;
        Ok(Fetched { bytes: unchecked.bytes, signed_by })
    }

    /// The bytes of `spec`'s component and its signature, not checked yet.
    pub(crate) async fn get(&self, spec: &PluginSpec) -> Result<Unchecked, String> {
        let (bytes, signature): (Arc<[u8]>, Option<Vec<u8>>) = match &spec.source {
            PluginSource::Embedded(name) => {
                let bytes = crate::embedded::component(name)
                    .ok_or_else(|| format!("no embedded component is named `{name}`"))?;
                (bytes.into(), None)
            }
            PluginSource::File(path) => {
                let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
                (bytes.into(), read_signature_beside(path)?)
            }
            PluginSource::Bytes(bytes) => (bytes.clone(), None),
            PluginSource::Oci(reference) => {
                let pulled = self.pull(reference).await?;
                (pulled.bytes.into(), pulled.signature)
            }
        };
        Ok(Unchecked { bytes, signature })
    }

    #[cfg(feature = "oci")]
    async fn pull(&self, reference: &Reference) -> Result<scratchpad_supply::Pulled, String> {
        self.fetcher.pull(reference).await.map_err(|e| e.to_string())
    }

    #[cfg(not(feature = "oci"))]
    async fn pull(&self, reference: &Reference) -> Result<Pulled, String> {
        Err(format!(
            "`{reference}` is in an OCI registry, and this host was built without OCI sources (the `oci` feature of \
             scratchpad-host); load the component from a file"
        ))
    }

    /// Checks a component's bytes against `spec`'s signature policy: the publisher whose
    /// signature was verified, `None` for a component loaded unsigned by policy, or why not.
    pub(crate) fn check(&self, spec: &PluginSpec, unchecked: &Unchecked) -> Result<Option<String>, String> {
        let (bytes, signature) = (&unchecked.bytes, unchecked.signature.as_deref());
        let trusted: Vec<&Publisher> = match &spec.signature {
            SignaturePolicy::Unsigned => return Ok(None),
            SignaturePolicy::AnyPublisher => self.publishers.iter().collect(),
            SignaturePolicy::Publisher(name) => self.publishers.iter().filter(|p| &p.name == name).collect(),
        };
        let hint = match &spec.source {
            PluginSource::File(path) => format!(" (looked for {})", signature_path(path).display()),
            PluginSource::Oci(_) => " (looked for the tag sha256-<component digest>.sig in its repository)".to_owned(),
            _ => String::new(),
        };
        signature::verify(bytes, signature, &trusted).map(Some).map_err(|e| {
            format!(
                "its signature was not accepted: {e}{hint}. Sign it with `ssh-keygen -Y sign -n {} -f KEY FILE.wasm` \
                 (docs/plugin-authoring.md), or load it unsigned only if you trust it by other means \
                 (`allow_unsigned = true`)",
                signature::NAMESPACE
            )
        })
    }
}

/// `FILE.wasm.sig`: where `ssh-keygen -Y sign` writes the signature of `FILE.wasm`.
pub(crate) fn signature_path(path: &std::path::Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

/// The signature file beside `path`, if there is one (bounded: a plugin's publisher cannot make
/// the host read a huge file).
fn read_signature_beside(path: &std::path::Path) -> Result<Option<Vec<u8>>, String> {
    let path = signature_path(path);
    match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("reading {}: {e}", path.display())),
        Ok(meta) if meta.len() > MAX_SIGNATURE_BYTES => {
            Err(format!("{} is {} bytes; a signature is at most {MAX_SIGNATURE_BYTES}", path.display(), meta.len()))
        }
        Ok(_) => std::fs::read(&path).map(Some).map_err(|e| format!("reading {}: {e}", path.display())),
    }
}
