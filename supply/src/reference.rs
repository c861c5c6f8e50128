//! `oci://HOST[:PORT]/REPO:TAG`, `oci://HOST[:PORT]/REPO@sha256:DIGEST` (or both): where a
//! component lives in a registry.

use std::fmt;
use std::str::FromStr;

/// A component in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    /// `HOST[:PORT]`.
    pub registry: String,
    /// The repository path, e.g. `acme/redactor`.
    pub repository: String,
    /// The tag, when the reference names one.
    pub tag: Option<String>,
    /// `sha256:<64 hex>`, when the reference pins one.
    pub digest: Option<String>,
}

impl Reference {
    /// The scheme every reference starts with.
    pub const SCHEME: &'static str = "oci://";

    /// The repository's last segment: a plugin's default name.
    pub fn name(&self) -> &str {
        self.repository.rsplit('/').next().unwrap_or(&self.repository)
    }

    /// Whether the registry is this machine (`localhost`, 127.0.0.0/8, `::1`), the only place
    /// the host talks plain HTTP to.
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or(rest),
            None => self.registry.split(':').next().unwrap_or(&self.registry),
        };
        host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &str) -> Reference {
        Reference { tag: None, digest: Some(digest.to_owned()), ..self.clone() }
    }

    /// The same repository at `tag`.
    pub fn at_tag(&self, tag: &str) -> Reference {
        Reference { tag: Some(tag.to_owned()), digest: None, ..self.clone() }
    }

    /// The reference as the OCI client takes it.
    #[cfg(feature = "oci")]
    pub(crate) fn to_client(&self) -> oci_client::Reference {
        let (registry, repository) = (self.registry.clone(), self.repository.clone());
        match (&self.digest, &self.tag) {
            (Some(digest), _) => oci_client::Reference::with_digest(registry, repository, digest.clone()),
            (None, Some(tag)) => oci_client::Reference::with_tag(registry, repository, tag.clone()),
            (None, None) => unreachable!("a parsed reference has a tag or a digest"),
        }
    }
}

/// Whether `text` is `sha256:` and 64 lowercase hex digits.
pub(crate) fn is_sha256_digest(text: &str) -> bool {
    text.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

impl FromStr for Reference {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = |why: &str| {
            format!(
                "`{text}` is not an OCI reference ({why}); write oci://HOST[:PORT]/REPO:TAG or oci://HOST[:PORT]/REPO@sha256:DIGEST"
            )
        };
        let rest = text.strip_prefix(Self::SCHEME).ok_or_else(|| bad("it does not start with oci://"))?;
        let (registry, path) = rest.split_once('/').ok_or_else(|| bad("no repository after the host"))?;
        if registry.is_empty() || !registry.bytes().all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b)) {
            return Err(bad("the host is not HOST[:PORT]"));
        }
        let (path, digest) = match path.split_once('@') {
            Some((path, digest)) if is_sha256_digest(digest) => (path, Some(digest.to_owned())),
            Some(_) => return Err(bad("the digest is not sha256: and 64 lowercase hex digits")),
            None => (path, None),
        };
        // A tag follows the last `:` after the last `/`.
        let last_slash = path.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match path[last_slash..].rfind(':') {
            Some(i) => (&path[..last_slash + i], Some(path[last_slash + i + 1..].to_owned())),
            None => (path, None),
        };
        let segment_ok = |s: &str| {
            !s.is_empty()
                && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
                && s.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        };
        if !repository.split('/').all(segment_ok) {
            return Err(bad("the repository must be lowercase path segments of [a-z0-9._-]"));
        }
        if let Some(tag) = &tag {
            let ok = (1..=128).contains(&tag.len())
                && tag.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
                && !tag.starts_with(['.', '-']);
            if !ok {
                return Err(bad("the tag must be 1 to 128 of [A-Za-z0-9._-]"));
            }
        }
        if tag.is_none() && digest.is_none() {
            return Err(bad("it names neither a tag nor a digest"));
        }
        Ok(Reference { registry: registry.to_owned(), repository: repository.to_owned(), tag, digest })
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}/{}", Self::SCHEME, self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Reference;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn references_parse_and_print_back() {
        let tagged: Reference = "oci://127.0.0.1:5000/acme/redactor:1.0".parse().unwrap();
        assert_eq!(
            (tagged.registry.as_str(), tagged.repository.as_str(), tagged.tag.as_deref()),
            ("127.0.0.1:5000", "acme/redactor", Some("1.0"))
        );
        assert_eq!(tagged.name(), "redactor");
        for text in [
            "oci://127.0.0.1:5000/acme/redactor:1.0".to_owned(),
            format!("oci://ghcr.io/acme/redactor@{DIGEST}"),
            format!("oci://ghcr.io/redactor:v2@{DIGEST}"),
        ] {
            assert_eq!(text.parse::<Reference>().unwrap().to_string(), text);
        }
    }

    #[test]
    fn bad_references_say_what_is_wrong() {
        let cases = [
            ("https://ghcr.io/a:1", "does not start with oci://"),
            ("oci://ghcr.io", "no repository"),
            ("oci://ghcr.io/acme/redactor", "neither a tag nor a digest"),
            ("oci://ghcr.io/Acme/redactor:1", "lowercase path segments"),
            ("oci://ghcr.io/acme/redactor@sha256:12", "64 lowercase hex"),
            ("oci://ghcr.io/acme/redactor:", "the tag must be"),
            ("oci://gh cr.io/a:1", "HOST[:PORT]"),
        ];
        for (text, needle) in cases {
            let error = text.parse::<Reference>().unwrap_err();
            assert!(error.contains(needle), "{text}: {error}");
        }
    }

    #[test]
    fn only_this_machine_is_loopback() {
        let loopback = |text: &str| text.parse::<Reference>().unwrap().is_loopback();
        assert!(loopback("oci://127.0.0.1:5000/a:1"));
        assert!(loopback("oci://localhost:5000/a:1"));
        assert!(loopback("oci://[::1]:5000/a:1"));
        assert!(!loopback("oci://ghcr.io/a:1"));
        assert!(!loopback("oci://10.0.0.1:5000/a:1"));
        assert!(!loopback("oci://localhost.evil.example/a:1"));
    }
}
