//! Signatures of third-party components: OpenSSH signatures (PROTOCOL.sshsig) over the
//! component's bytes, in the namespace [`NAMESPACE`], made with
//! `ssh-keygen -Y sign -f KEY -n scratchpad-plugin FILE.wasm` (which writes `FILE.wasm.sig`).
//!
//! Why this format: `ssh-keygen` is on every developer's machine, publishers already have keys
//! and publish them (GitHub serves every user's at `/USER.keys`), the format is documented and
//! namespaced (a signature made for git or for a file cannot be replayed as a plugin's), and
//! verifying needs no online service, transparency log or certificate authority. The verifier
//! is RustCrypto's `ssh-key`; Ed25519 and ECDSA P-256 keys are accepted.

use std::fmt;

use ssh_key::{HashAlg, PublicKey, SshSig};

/// The namespace a plugin's signature is made in (`ssh-keygen -n`).
pub const NAMESPACE: &str = "scratchpad-plugin";

/// A publisher the operator trusts: a name and an OpenSSH public key.
#[derive(Clone)]
pub struct Publisher {
    /// The operator's name for it (`[[publisher]] name`).
    pub name: String,
    key: PublicKey,
}

impl fmt::Debug for Publisher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Publisher").field("name", &self.name).field("key", &self.fingerprint()).finish()
    }
}

impl Publisher {
    /// The publisher `name` with the key on an OpenSSH public key line
    /// (`ssh-ed25519 AAAA… comment`).
    pub fn parse(name: &str, line: &str) -> Result<Self, String> {
        let key = PublicKey::from_openssh(line.trim())
            .map_err(|e| format!("not an OpenSSH public key line (`ssh-ed25519 AAAA… comment`): {e}"))?;
        Ok(Publisher { name: name.to_owned(), key })
    }

    /// The key's fingerprint as `ssh-keygen -l` prints it: `SHA256:…`.
    pub fn fingerprint(&self) -> String {
        self.key.fingerprint(HashAlg::Sha256).to_string()
    }
}

/// Why a signature was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// There is no signature.
    #[error("no signature; expected an SSH signature (namespace {NAMESPACE}) by {expected}")]
    Missing {
        /// Who was expected to sign.
        expected: String,
    },
    /// The signature is not an SSH signature.
    #[error("the signature is not an SSH signature (`-----BEGIN SSH SIGNATURE-----`): {0}")]
    Malformed(String),
    /// It was made in another namespace.
    #[error("the signature was made for the namespace `{found}`, not `{NAMESPACE}` (sign with `-n {NAMESPACE}`)")]
    WrongNamespace {
        /// The namespace it names.
        found: String,
    },
    /// It was made by a key no trusted publisher has.
    #[error("the signature is by the key {found}, which is not a trusted publisher's; expected {expected}")]
    UnknownKey {
        /// The signing key's fingerprint.
        found: String,
        /// Who was expected to sign.
        expected: String,
    },
    /// It does not verify over these bytes.
    #[error(
        "the signature by publisher `{publisher}` does not match the component's bytes (the component was altered, \
         or the signature is another file's)"
    )]
    Mismatch {
        /// The publisher whose key made it.
        publisher: String,
    },
}

/// Checks `signature` (the `.sig` file's content) over `bytes` against the `trusted` publishers,
/// and returns the name of the one who signed.
pub fn verify(bytes: &[u8], signature: Option<&[u8]>, trusted: &[&Publisher]) -> Result<String, SignatureError> {
    let expected = expected(trusted);
    let signature = signature.ok_or_else(|| SignatureError::Missing { expected: expected.clone() })?;
    let signature = SshSig::from_pem(signature).map_err(|e| SignatureError::Malformed(e.to_string()))?;
    if signature.namespace() != NAMESPACE {
        return Err(SignatureError::WrongNamespace { found: signature.namespace().to_owned() });
    }
    let signer = signature.public_key();
    let Some(publisher) = trusted.iter().find(|p| p.key.key_data() == signer) else {
        return Err(SignatureError::UnknownKey { found: signer.fingerprint(HashAlg::Sha256).to_string(), expected });
    };
    publisher
        .key
        .verify(NAMESPACE, bytes, &signature)
        .map_err(|_| SignatureError::Mismatch { publisher: publisher.name.clone() })?;
    Ok(publisher.name.clone())
}

/// Who may sign, as a message names them.
fn expected(trusted: &[&Publisher]) -> String {
    if trusted.is_empty() {
        return "a configured publisher, and none is configured (add a [[publisher]] with its key)".to_owned();
    }
    let names: Vec<String> = trusted.iter().map(|p| format!("`{}` ({})", p.name, p.fingerprint())).collect();
    format!("one of: {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    //! Keys and signatures made with the real `ssh-keygen`, so the format is the one publishers
    //! produce.

    use std::path::Path;
    use std::process::Command;

    use super::{Publisher, SignatureError, verify};

    /// A fresh Ed25519 key in `dir` named `name`: (private key path, public key line).
    fn keygen(dir: &Path, name: &str) -> (std::path::PathBuf, String) {
        let key = dir.join(name);
        let status = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
            .arg(&key)
            .status()
            .expect("ssh-keygen (OpenSSH) must be installed to run these tests");
        assert!(status.success());
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        (key, public)
    }

    /// `ssh-keygen -Y sign` of `bytes` with `key` in `namespace`: the `.sig` file's content.
    fn sign(dir: &Path, key: &Path, namespace: &str, bytes: &[u8]) -> Vec<u8> {
        let file = dir.join("component.wasm");
        std::fs::write(&file, bytes).unwrap();
        let _ = std::fs::remove_file(dir.join("component.wasm.sig"));
        let status = Command::new("ssh-keygen")
            .args(["-q", "-Y", "sign", "-n", namespace, "-f"])
            .arg(key)
            .arg(&file)
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read(dir.join("component.wasm.sig")).unwrap()
    }

    #[test]
    fn a_signature_made_by_ssh_keygen_verifies_and_every_wrong_one_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let (acme_key, acme_line) = keygen(dir.path(), "acme");
        let (other_key, other_line) = keygen(dir.path(), "other");
        let acme = Publisher::parse("acme", &acme_line).unwrap();
        let other = Publisher::parse("other", &other_line).unwrap();
        let bytes = b"\0asm component bytes";
        let signature = sign(dir.path(), &acme_key, super::NAMESPACE, bytes);

        assert_eq!(verify(bytes, Some(&signature), &[&other, &acme]).unwrap(), "acme");

        let tampered = verify(b"\0asm component bytez", Some(&signature), &[&acme]).unwrap_err();
        assert_eq!(tampered, SignatureError::Mismatch { publisher: "acme".into() });
        let wrong_key = verify(bytes, Some(&sign(dir.path(), &other_key, super::NAMESPACE, bytes)), &[&acme]);
        let message = wrong_key.unwrap_err().to_string();
        assert!(message.contains(&other.fingerprint()) && message.contains(&acme.fingerprint()), "{message}");
        let git = verify(bytes, Some(&sign(dir.path(), &acme_key, "git", bytes)), &[&acme]).unwrap_err();
        assert_eq!(git, SignatureError::WrongNamespace { found: "git".into() });
        let missing = verify(bytes, None, &[&acme]).unwrap_err().to_string();
        assert!(missing.starts_with("no signature") && missing.contains("`acme`"), "{missing}");
        assert!(verify(bytes, None, &[]).unwrap_err().to_string().contains("none is configured"));
        assert!(matches!(verify(bytes, Some(b"junk"), &[&acme]), Err(SignatureError::Malformed(_))));
        assert!(Publisher::parse("x", "not a key").unwrap_err().contains("OpenSSH public key line"));
    }
}
