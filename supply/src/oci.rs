//! Pulling a component from an OCI registry: the artifact `wkg oci push` makes (one layer of
//! media type `application/wasm`), every digest checked, cached by digest, tags pinned.
//!
//! A signature is another artifact in the same repository, tagged `sha256-<hex>.sig` where
//! `<hex>` is the SHA-256 of the component's bytes, with one layer of media type
//! [`SIGNATURE_MEDIA_TYPE`] holding the `ssh-keygen -Y sign` output (see [`crate::signature`]).
//! It is looked up on every pull the registry answers, and served from the cache otherwise.
//!
//! A registry is another party, so everything it sends is bounded: [`MAX_MANIFEST_BYTES`],
//! [`MAX_COMPONENT_BYTES`] (by default), [`MAX_SIGNATURE_BYTES`], [`CONNECT_TIMEOUT`] and
//! [`READ_TIMEOUT`]. Plain HTTP is used only for a registry on this machine
//! ([`Reference::is_loopback`]); any other is spoken to over TLS. Pulls are anonymous.

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use oci_client::Client;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::DigestError;
use oci_client::errors::OciDistributionError;
use oci_client::manifest::{OciDescriptor, OciImageManifest};
use oci_client::secrets::RegistryAuth;

use crate::cache::{Cache, digest_of};
use crate::lock::Lock;
use crate::reference::Reference;

/// The media type of a component layer.
pub const WASM_MEDIA_TYPE: &str = "application/wasm";
/// The media type of a signature layer.
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.scratchpad.sshsig.v1";
/// Longest manifest read, in bytes.
pub const MAX_MANIFEST_BYTES: usize = 4 << 20;
/// Largest component pulled by default, in bytes ([`Fetcher::with_max_component_bytes`]).
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;
/// Largest signature pulled, in bytes (an SSH signature is under 2 KiB).
pub const MAX_SIGNATURE_BYTES: u64 = 64 << 10;
/// How long connecting to a registry may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a registry may go without sending a byte.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

const MANIFEST_MEDIA_TYPES: &[&str] =
    &["application/vnd.oci.image.manifest.v1+json", "application/vnd.docker.distribution.manifest.v2+json"];

/// Pulls components, caching them under a directory and pinning tags in a lock file.
pub struct Fetcher {
    cache: Cache,
    lock: Lock,
    max_component_bytes: u64,
}

/// A pulled component.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The component's bytes, checked against their digest.
    pub bytes: Vec<u8>,
    /// `sha256:<hex>` of `bytes`.
    pub component_digest: String,
    /// The digest of the manifest the reference resolved to.
    pub manifest_digest: String,
    /// The published signature's content, if there is one.
    pub signature: Option<Vec<u8>>,
    /// Whether everything came from the cache (the registry was not needed or not reachable).
    pub from_cache: bool,
}

/// Why a component could not be pulled. The message says what failed, with which reference and
/// digests, and what to do.
#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The registry did not answer, and what was asked is not cached.
    #[error(
        "the registry {registry} could not be reached for {reference} ({cause}), and the component is not in the \
         cache; it loads offline only once pulled"
    )]
    Unreachable {
        /// The registry.
        registry: String,
        /// What was asked.
        reference: String,
        /// The client's error.
        cause: String,
    },
    /// The tag now resolves to another digest than the one pinned.
    #[error(
        "the tag {reference} now points to {now}, but it was pinned to {pinned} in {lock}; it is not loaded. If the \
         new component is one you trust, delete its pin from the lock file (or name it by digest: {reference_at_now})"
    )]
    TagMoved {
        /// The tag reference.
        reference: String,
        /// The pinned digest.
        pinned: String,
        /// The digest the registry answers now.
        now: String,
        /// The same repository at the new digest.
        reference_at_now: String,
        /// The lock file.
        lock: String,
    },
    /// Bytes did not match the digest that names them.
    #[error("the {what} of {reference} does not match its digest: expected {expected}, got {actual}; it is not loaded")]
    DigestMismatch {
        /// Manifest, component or signature.
        what: &'static str,
        /// The reference.
        reference: String,
        /// The digest that names it.
        expected: String,
        /// The digest of the bytes received.
        actual: String,
    },
    /// The artifact is not a plugin component, or is too large.
    #[error("{reference} is not a plugin component: {why}")]
    NotAComponent {
        /// The reference.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
    /// The registry answered with an error (no such tag or repository, say).
    #[error("the registry refused {reference}: {cause}")]
    Registry {
        /// The reference.
        reference: String,
        /// The registry's answer.
        cause: String,
    },
    /// The lock file could not be read or written.
    #[error("{0}")]
    Lock(String),
}

impl Fetcher {
    /// A fetcher caching under `cache_dir/oci` and pinning tags in `lock_file`.
    pub fn new(cache_dir: PathBuf, lock_file: PathBuf) -> Self {
        Fetcher { cache: Cache::new(&cache_dir), lock: Lock::new(lock_file), max_component_bytes: MAX_COMPONENT_BYTES }
    }

    /// The same fetcher refusing components over `bytes`.
    pub fn with_max_component_bytes(mut self, bytes: u64) -> Self {
        self.max_component_bytes = bytes;
        self
    }

    /// Pulls the component `reference` names (see the module docs).
    pub async fn pull(&self, reference: &Reference) -> Result<Pulled, PullError> {
        let client = client_for(reference);
        let shown = reference.to_string();
        let mut offline = false;
        // Which manifest: the digest named, or the tag's, checked against its pin.
        let manifest_digest = match (&reference.digest, &reference.tag) {
            (Some(digest), _) => digest.clone(),
            (None, Some(_)) => {
                let pinned = self.lock.pinned(&shown).map_err(PullError::Lock)?;
                match client.fetch_manifest_digest(&reference.to_client(), &RegistryAuth::Anonymous).await {
                    Ok(now) => {
                        if let Some(pinned) = pinned.filter(|pinned| *pinned != now) {
                            return Err(PullError::TagMoved {
                                reference: shown,
                                reference_at_now: reference.at_digest(&now).to_string(),
                                pinned,
                                now,
                                lock: self.lock.path().display().to_string(),
                            });
                        }
                        now
                    }
                    Err(error) if is_unreachable(&error) => match pinned {
                        Some(pinned) => {
                            offline = true;
                            pinned
                        }
                        None => return Err(unreachable(reference, &error)),
                    },
                    Err(error) => return Err(PullError::Registry { reference: shown, cause: error.to_string() }),
                }
            }
            (None, None) => unreachable!("a parsed reference has a tag or a digest"),
        };
        let (manifest, manifest_cached) = self.manifest(&client, reference, &manifest_digest, offline).await?;
        let layer = component_layer(&manifest, WASM_MEDIA_TYPE, self.max_component_bytes)
            .map_err(|why| PullError::NotAComponent { reference: shown.clone(), why })?;
        let (bytes, component_cached) = match self.cache.get(&layer.digest) {
            Some(bytes) => (bytes, true),
            None if offline => return Err(unreachable_offline(reference)),
            None => {
                let bytes = self.blob(&client, reference, layer, "component", self.max_component_bytes).await?;
                self.cache.put(&bytes);
                (bytes, false)
            }
        };
        if reference.tag.is_some() && reference.digest.is_none() && !offline {
            self.lock.pin(&shown, &manifest_digest).map_err(PullError::Lock)?;
        }
        let component_digest = layer.digest.clone();
        // The signature is looked up afresh whenever the registry answers (a publisher may sign
        // after publishing); the cached one serves only when it does not.
        let signature = match offline {
            true => self.cache.signature_of(&component_digest),
            false => match self.signature(&client, reference, &component_digest).await {
                Err(PullError::Unreachable { .. }) => self.cache.signature_of(&component_digest),
                other => other?,
            },
        };
        let from_cache = manifest_cached && component_cached;
        Ok(Pulled { bytes, component_digest, manifest_digest, signature, from_cache })
    }

    /// The manifest of `digest`, from the cache or the registry, checked; and whether it was
    /// cached.
    async fn manifest(
        &self,
        client: &Client,
        reference: &Reference,
        digest: &str,
        offline: bool,
    ) -> Result<(OciImageManifest, bool), PullError> {
        let shown = reference.to_string();
        let (bytes, cached) = match self.cache.get(digest) {
            Some(bytes) => (bytes, true),
            None if offline => return Err(unreachable_offline(reference)),
            None => {
                let at = reference.at_digest(digest).to_client();
                let (bytes, _) = client
                    .pull_manifest_raw(&at, &RegistryAuth::Anonymous, MANIFEST_MEDIA_TYPES)
                    .await
                    .map_err(|e| classify(reference, "manifest", e))?;
                if bytes.len() > MAX_MANIFEST_BYTES {
                    let why = format!("its manifest is {} bytes; the most is {MAX_MANIFEST_BYTES}", bytes.len());
                    return Err(PullError::NotAComponent { reference: shown, why });
                }
                let actual = digest_of(&bytes);
                if actual != digest {
                    return Err(PullError::DigestMismatch {
                        what: "manifest",
                        reference: shown,
                        expected: digest.to_owned(),
                        actual,
                    });
                }
                self.cache.put(&bytes);
                (bytes.to_vec(), false)
            }
        };
        let manifest = serde_json::from_slice(&bytes).map_err(|e| PullError::NotAComponent {
            reference: shown,
            why: format!("its manifest is not an OCI image manifest: {e}"),
        })?;
        Ok((manifest, cached))
    }

    /// The blob `layer` describes, at most `max` bytes, checked against its digest and size.
    async fn blob(
        &self,
        client: &Client,
        reference: &Reference,
        layer: &OciDescriptor,
        what: &'static str,
        max: u64,
    ) -> Result<Vec<u8>, PullError> {
        let shown = reference.to_string();
        let mut stream = client
            .pull_blob_stream(&reference.to_client(), layer)
            .await
            .map_err(|e| classify(reference, what, e))?
            .stream;
        let mut bytes = Vec::with_capacity(layer.size.clamp(0, max as i64) as usize);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| io_error(reference, what, &layer.digest, e))?;
            if (bytes.len() + chunk.len()) as u64 > max {
                let why = format!("its {what} is over {max} bytes");
                return Err(PullError::NotAComponent { reference: shown, why });
            }
            bytes.extend_from_slice(&chunk);
        }
        let actual = digest_of(&bytes);
        if actual != layer.digest || bytes.len() as i64 != layer.size {
            return Err(PullError::DigestMismatch { what, reference: shown, expected: layer.digest.clone(), actual });
        }
        Ok(bytes)
    }

    /// The signature published for the component `component` (`None` when there is none).
    async fn signature(
        &self,
        client: &Client,
        reference: &Reference,
        component: &str,
    ) -> Result<Option<Vec<u8>>, PullError> {
        let tag = format!("sha256-{}.sig", &component["sha256:".len()..]);
        let at = reference.at_tag(&tag);
        let digest = match client.fetch_manifest_digest(&at.to_client(), &RegistryAuth::Anonymous).await {
            Ok(digest) => digest,
            Err(error) if is_not_found(&error) => return Ok(None),
            Err(error) => return Err(classify(&at, "signature", error)),
        };
        let (manifest, _) = self.manifest(client, &at, &digest, false).await?;
        let layer = component_layer(&manifest, SIGNATURE_MEDIA_TYPE, MAX_SIGNATURE_BYTES)
            .map_err(|why| PullError::NotAComponent { reference: at.to_string(), why })?;
        let signature = self.blob(client, &at, layer, "signature", MAX_SIGNATURE_BYTES).await?;
        self.cache.put_signature(component, &signature);
        Ok(Some(signature))
    }
}

/// The one layer of `media_type` in `manifest`, within `max` bytes.
fn component_layer<'m>(
    manifest: &'m OciImageManifest,
    media_type: &str,
    max: u64,
) -> Result<&'m OciDescriptor, String> {
    let layers: Vec<&OciDescriptor> = manifest.layers.iter().filter(|l| l.media_type == media_type).collect();
    let [layer] = layers[..] else {
        let types: Vec<&str> = manifest.layers.iter().map(|l| l.media_type.as_str()).collect();
        return Err(format!(
            "it has {} layers of media type {media_type} (layers: {types:?}); a plugin artifact has exactly one",
            layers.len()
        ));
    };
    if !crate::reference::is_sha256_digest(&layer.digest) {
        return Err(format!("its layer digest {} is not sha256", layer.digest));
    }
    if layer.size < 0 || layer.size as u64 > max {
        return Err(format!("its layer is {} bytes; the most is {max}", layer.size));
    }
    Ok(layer)
}

/// A client speaking plain HTTP only to a registry on this machine, with the module's timeouts.
fn client_for(reference: &Reference) -> Client {
    // reqwest's rustls takes the process's default crypto provider: ring (see Cargo.toml).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let protocol = if reference.is_loopback() {
        ClientProtocol::HttpsExcept(vec![reference.registry.clone()])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        connect_timeout: Some(CONNECT_TIMEOUT),
        read_timeout: Some(READ_TIMEOUT),
        ..ClientConfig::default()
    })
}

fn is_unreachable(error: &OciDistributionError) -> bool {
    matches!(error, OciDistributionError::RequestError(e) if e.is_connect() || e.is_timeout())
}

fn is_not_found(error: &OciDistributionError) -> bool {
    match error {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::RegistryError { envelope, .. } => {
            envelope.errors.iter().any(|e| format!("{:?}", e.code).to_lowercase().contains("unknown"))
        }
        _ => false,
    }
}

fn unreachable(reference: &Reference, error: &OciDistributionError) -> PullError {
    PullError::Unreachable {
        registry: reference.registry.clone(),
        reference: reference.to_string(),
        cause: error.to_string(),
    }
}

fn unreachable_offline(reference: &Reference) -> PullError {
    PullError::Unreachable {
        registry: reference.registry.clone(),
        reference: reference.to_string(),
        cause: "offline, and the pinned digest's content is missing from the cache".into(),
    }
}

fn io_error(reference: &Reference, what: &'static str, expected: &str, error: std::io::Error) -> PullError {
    match error.get_ref().and_then(|e| e.downcast_ref::<DigestError>()) {
        Some(DigestError::VerificationError { expected, actual }) => PullError::DigestMismatch {
            what,
            reference: reference.to_string(),
            expected: expected.clone(),
            actual: actual.clone(),
        },
        _ => PullError::Registry {
            reference: reference.to_string(),
            cause: format!("reading the {what} ({expected}): {error}"),
        },
    }
}

/// The error of a request for `what`.
fn classify(reference: &Reference, what: &'static str, error: OciDistributionError) -> PullError {
    match error {
        OciDistributionError::DigestError(DigestError::VerificationError { expected, actual }) => {
            PullError::DigestMismatch { what, reference: reference.to_string(), expected, actual }
        }
        error if is_unreachable(&error) => unreachable(reference, &error),
        error => PullError::Registry { reference: reference.to_string(), cause: format!("{what}: {error}") },
    }
}
