//! Getting a third-party plugin's component bytes the host can trust (the plugin supply chain), before it
//! compiles anything:
//!
//! - [`Reference`]: `oci://HOST[:PORT]/REPO:TAG` or `…@sha256:DIGEST`.
//! - [`Fetcher`]: pulls a component from an OCI registry with every digest checked, caches it by
//!   digest (a cached digest loads with no network), and pins each tag to the digest it first
//!   resolved to in a lock file, so a moved tag is refused instead of loaded.
//! - [`signature`]: SSH signatures (`ssh-keygen -Y sign`) over a component's bytes, checked
//!   against the operator's publisher keys.
//!
//! Every bound on what a registry can make the host do is a constant of `oci`, listed in
//! `docs/security.md`. Pulling (`Fetcher`, the module `oci`) is the feature `oci`, on by default;
//! without it a reference still parses and a signature still checks.

#[cfg(feature = "oci")]
mod cache;
#[cfg(feature = "oci")]
mod lock;
#[cfg(feature = "oci")]
pub mod oci;
mod reference;
pub mod signature;

#[cfg(feature = "oci")]
pub use oci::{Fetcher, PullError, Pulled};
pub use reference::Reference;
