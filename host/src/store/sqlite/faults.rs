//! The faults of the machine under a SQLite database, named for the caller: another writer
//! holding the lock past the wait ([`Error::Busy`]), a full disk ([`Error::DiskFull`]), a file
//! or directory that cannot be written ([`Error::ReadOnly`]). Each says which database and what
//! to do; anything else stays the database's own error.

use std::path::Path;

use crate::Error;

/// `error` as one of the named faults when it is one, else unchanged.
pub(super) fn named(error: Error, path: &Path) -> Error {
    let Error::Other(inner) = &error else { return error };
    let database = path.display().to_string();
    // A file the store writes beside the database (an observation's content) on a full disk.
    let io_full = inner.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::StorageFull)
    });
    if io_full {
        return Error::DiskFull { database };
    }
    let Some(code) = inner.chain().find_map(|cause| match cause.downcast_ref::<rusqlite::Error>() {
        Some(rusqlite::Error::SqliteFailure(failure, _)) => Some(failure.code),
        _ => None,
    }) else {
        return error;
    };
    use rusqlite::ErrorCode as Code;
    match code {
        Code::DatabaseBusy | Code::DatabaseLocked => Error::Busy { database, waited_ms: super::busy::waited_ms() },
        Code::DiskFull => Error::DiskFull { database },
        Code::ReadOnly => Error::ReadOnly { database },
        // An I/O error is often the filesystem's state: no space left (the write-ahead log's
        // index cannot grow), or mounted read-only.
        Code::SystemIoFailure | Code::CannotOpen => match filesystem(path) {
            Some(Filesystem::Full) => Error::DiskFull { database },
            Some(Filesystem::ReadOnly) => Error::ReadOnly { database },
            None => error,
        },
        _ => error,
    }
}

enum Filesystem {
    Full,
    ReadOnly,
}

/// Whether the filesystem holding `path` is full or mounted read-only, when it is either.
#[cfg(unix)]
fn filesystem(path: &Path) -> Option<Filesystem> {
    use std::os::unix::ffi::OsStrExt;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is a NUL-terminated path and `stat` a writable statvfs.
    if unsafe { libc::statvfs(name.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    if stat.f_flag & libc::ST_RDONLY != 0 {
        return Some(Filesystem::ReadOnly);
    }
    // Less than a page of SQLite's left for an unprivileged writer.
    ((stat.f_bavail as u128 * stat.f_frsize as u128) < 4096).then_some(Filesystem::Full)
}

#[cfg(not(unix))]
fn filesystem(_path: &Path) -> Option<Filesystem> {
    None
}
