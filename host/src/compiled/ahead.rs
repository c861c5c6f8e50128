//! Components compiled ahead of time (`crate::precompiled` writes them): the one for a
//! component's digest in the precompiled directory, taken only when no other user can have
//! changed it and wasmtime accepts it for this engine and CPU.

use std::path::Path;

use wasmtime::Engine;
use wasmtime::component::Component;

/// The file name of `digest`'s (hex SHA-256) compiled component.
pub(crate) fn file_name(digest: &str) -> String {
    format!("{digest}.cwasm")
}

/// The component with SHA-256 `digest` compiled ahead of time in `dir`, if it is there and
/// loads into `engine`.
pub(crate) fn load(engine: &Engine, digest: &str, dir: &Path) -> Option<Component> {
    let path = dir.join(file_name(digest));
    if !path.is_file() {
        return None;
    }
    if let Err(why) = private(dir).and_then(|()| private(&path)) {
        tracing::warn!(path = %path.display(), "not using a precompiled component: {why}");
        return None;
    }
    // SAFETY: `dir` is the host's own precompiled directory (set by the embedder, shipped in
    // its package and trusted like its binary; see `crate::precompiled`), and neither
    // it nor the file can be changed by another user (`private`). Wasmtime checks the header
    // and refuses an artifact of another version, target, configuration or CPU, which falls
    // through to compiling.
    match unsafe { super::artifact::deserialize(engine, &path) } {
        Ok(component) => Some(component),
        Err(error) => {
            tracing::debug!(path = %path.display(), error = %format!("{error:#}"), "not using a precompiled component");
            None
        }
    }
}

/// Whether only this process's user (or root) can change `path`: owned by one of them and not
/// writable by group or others, as OpenSSH wants of its keys. A binary unpacked into a shared
/// directory must not pick up machine code another user put beside it.
#[cfg(unix)]
fn private(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if metadata.uid() != me && metadata.uid() != 0 {
        return Err(format!(
            "{} is owned by uid {}, neither this user ({me}) nor root",
            path.display(),
            metadata.uid()
        ));
    }
    if metadata.mode() & 0o022 != 0 {
        return Err(format!("{} is writable by other users (mode {:o})", path.display(), metadata.mode() & 0o7777));
    }
    Ok(())
}

/// On Windows the directory's ACL is not inspected: it is trusted as the binary's folder is.
#[cfg(not(unix))]
fn private(_path: &Path) -> Result<(), String> {
    Ok(())
}
