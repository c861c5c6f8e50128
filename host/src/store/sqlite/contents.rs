//! Observation content in files beside the database: `<database>-observations/<entry id>`.
//!
//! An offloaded observation's bytes are written once, read by range and deleted whole, which a
//! file does at the disk's speed; inside SQLite the same bytes cost a WAL frame per 4 KiB page,
//! a checkpoint copying them again, and a walk of the overflow-page chain for a read in the
//! middle of a row (measured in docs/benchmarks.md). The entry's row stays in the database, so
//! listing, quotas, expiry and the version-checked commit are unchanged.
//!
//! Crash safety: the content is written to `<id>.partial`, synced, linked as `<id>` and the
//! directory synced **before** the transaction that inserts the entry's row, so a committed
//! entry always has its whole file. A commit that loses (or fails) removes the files it wrote; a
//! crash in between leaves a file without a row, which [`Contents::sweep`] removes when the
//! database is next opened (only files older than [`ORPHAN_AGE`], so it never races another
//! process's commit in flight). Collection deletes the rows first and the files after, so a
//! crash there leaves orphans too, never a row without its file. A file shorter than its row
//! says is damage, and a read of the missing part is an error, not a shorter read.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::Result;

/// Bytes written between two requests to the kernel to start writing them out, so the disk
/// works while the next piece is copied and the final sync has little left to do.
const WRITE_BEHIND: usize = 8 << 20;

/// How old a file without an entry must be before a sweep removes it.
pub(crate) const ORPHAN_AGE: Duration = Duration::from_secs(3600);

/// The directory of one database's observation files.
pub(crate) struct Contents {
    dir: PathBuf,
}

/// Files written for a commit that has not landed: removed on drop unless [`Written::keep`]
/// says the commit went through.
pub(crate) struct Written<'c> {
    contents: &'c Contents,
    ids: Vec<String>,
}

impl Written<'_> {
    /// The commit landed: the files stay.
    pub(crate) fn keep(mut self) {
        self.ids.clear();
    }
}

impl Drop for Written<'_> {
    fn drop(&mut self) {
        self.contents.remove(&self.ids);
    }
}

impl Contents {
    /// The observation files of the database at `database`.
    pub(crate) fn of(database: &Path) -> Contents {
        let mut dir = database.as_os_str().to_owned();
        dir.push("-observations");
        Contents { dir: PathBuf::from(dir) }
    }

    /// The directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of entry `id`. Ids are the host's hex digits, so one never names anything
    /// but a file in the directory; anything else (a damaged or hand-made row) is refused.
    fn path(&self, id: &str) -> std::io::Result<PathBuf> {
        if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            let message = format!("`{id}` is not an observation id (hex digits)");
            return Err(std::io::Error::new(ErrorKind::InvalidInput, message));
        }
        Ok(self.dir.join(id))
    }

    /// Writes and syncs the content of each `(id, bytes)`, then syncs the directory: after
    /// this returns, every file survives a power loss. On an error nothing written stays.
    pub(crate) fn write<'b>(&self, contents: impl IntoIterator<Item = (&'b str, &'b [u8])>) -> Result<Written<'_>> {
        let mut written = Written { contents: self, ids: Vec::new() };
        for (id, bytes) in contents {
            if written.ids.is_empty() {
                std::fs::create_dir_all(&self.dir).with_context(|| format!("creating {}", self.dir.display()))?;
            }
            let partial = self.dir.join(format!("{id}.partial"));
            let result = (|| -> std::io::Result<()> {
                let path = self.path(id)?;
                let mut file = File::options().write(true).create_new(true).open(&partial)?;
                let mut at = 0;
                for piece in bytes.chunks(WRITE_BEHIND) {
                    file.write_all(piece)?;
                    start_writeback(&file, at, piece.len());
                    at += piece.len();
                }
                file.sync_data()?;
                // A link, not a rename: it never replaces a file already there.
                std::fs::hard_link(&partial, path)?;
                std::fs::remove_file(&partial)
            })();
            if let Err(error) = result {
                let _ = std::fs::remove_file(&partial);
                return Err(anyhow::Error::new(error)
                    .context(format!("writing observation {id} to {}", self.dir.display()))
                    .into());
            }
            written.ids.push(id.to_owned());
        }
        if !written.ids.is_empty() {
            sync_dir(&self.dir).with_context(|| format!("syncing {}", self.dir.display()))?;
        }
        Ok(written)
    }

    /// Bytes `[offset, offset + len)` of entry `id`'s content (the caller has clamped the range
    /// to the entry's size). A missing file or one shorter than the range is damage: an error.
    pub(crate) fn read(&self, id: &str, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.read_present(id, offset, len)
            .unwrap_or_else(|| Err(self.damaged(id, offset, len, std::io::Error::from(ErrorKind::NotFound))))
    }

    /// [`Contents::read`] for a caller that does not know whether the entry's content is in a
    /// file (entries stored in chunks by earlier versions are not): `None` when there is no
    /// file, and a file shorter than the range is damage, as there.
    pub(crate) fn read_present(&self, id: &str, offset: u64, len: usize) -> Option<Result<Vec<u8>>> {
        let file = match self.path(id).and_then(File::open) {
            Ok(file) => file,
            Err(error) if error.kind() == ErrorKind::NotFound => return None,
            Err(error) => return Some(Err(self.damaged(id, offset, len, error))),
        };
        let mut buf = vec![0; len];
        Some(read_exact_at(&file, &mut buf, offset).map(|()| buf).map_err(|error| self.damaged(id, offset, len, error)))
    }

    fn damaged(&self, id: &str, offset: u64, len: usize, error: std::io::Error) -> crate::Error {
        let what = format!(
            "observation {id} is damaged: its content file in {} does not hold bytes {offset}..{} \
             ({error}); the entry cannot be read",
            self.dir.display(),
            offset + len as u64
        );
        crate::Error::Other(anyhow::anyhow!(what))
    }

    /// Removes the files of `ids` (those already gone are skipped).
    pub(crate) fn remove(&self, ids: &[String]) {
        for id in ids {
            if let Err(error) = self.path(id).and_then(std::fs::remove_file)
                && error.kind() != ErrorKind::NotFound
            {
                tracing::warn!(%error, id, dir = %self.dir.display(), "could not remove an observation file");
            }
        }
    }

    /// Removes files older than [`ORPHAN_AGE`] for which `has_entry` says no entry exists, and
    /// older partial writes; returns how many.
    pub(crate) fn sweep(&self, mut has_entry: impl FnMut(&str) -> Result<bool>) -> Result<usize> {
        let listing = match std::fs::read_dir(&self.dir) {
            Ok(listing) => listing,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(0),
            Err(error) => {
                return Err(anyhow::Error::new(error).context(format!("listing {}", self.dir.display())).into());
            }
        };
        let mut removed = 0;
        for file in listing {
            let file = file.context("listing observation files")?;
            let name = file.file_name().to_string_lossy().into_owned();
            let old = file
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| at.elapsed().is_ok_and(|age| age >= ORPHAN_AGE));
            if !old {
                continue;
            }
            // Only the host's own names: anything else an operator put here is left alone.
            let (id, partial) = match name.strip_suffix(".partial") {
                Some(id) => (id, true),
                None => (name.as_str(), false),
            };
            if self.path(id).is_err() {
                continue;
            }
            let orphan = partial || !has_entry(id)?;
            if orphan && std::fs::remove_file(file.path()).is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// Fills `buf` from `file` at `offset`: one positional read (`pread`) on Unix; on Windows,
/// where a positional read moves the handle's cursor, on a handle this read alone uses. A file
/// that ends first is `UnexpectedEof`.
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let mut filled = 0;
        while filled < buf.len() {
            match std::os::windows::fs::FileExt::seek_read(file, &mut buf[filled..], offset + filled as u64) {
                Ok(0) => return Err(std::io::Error::from(ErrorKind::UnexpectedEof)),
                Ok(n) => filled += n,
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// Asks the kernel to start writing `len` bytes of `file` from `offset` to disk, without
/// waiting (Linux; elsewhere the final sync writes everything).
fn start_writeback(file: &File, offset: usize, len: usize) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain system call on an open descriptor; it reads no memory of ours.
        let _ =
            unsafe { libc::sync_file_range(file.as_raw_fd(), offset as i64, len as i64, libc::SYNC_FILE_RANGE_WRITE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

/// Makes the names just linked into `dir` durable: an fsync of the directory on Unix. Windows
/// has no such call (a directory opened as a file refuses `FlushFileBuffers` with "access
/// denied"); NTFS journals the link itself, and SQLite's Windows layer syncs no directory either.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(windows)]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_stay_only_when_kept_and_reads_past_their_end_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let contents = Contents::of(&dir.path().join("x.db"));
        assert!(contents.dir().ends_with("x.db-observations"));
        let lost = contents.write([("a", &b"abc"[..])]).unwrap();
        assert_eq!(contents.read("a", 1, 2).unwrap(), b"bc");
        drop(lost);
        assert!(contents.read("a", 0, 1).is_err(), "a commit that did not land leaves no file");
        contents.write([("b", &b"hello"[..]), ("c", &b""[..])]).unwrap().keep();
        assert_eq!(contents.read("b", 0, 5).unwrap(), b"hello");
        assert_eq!(contents.read("c", 0, 0).unwrap(), b"");
        let short = contents.read("b", 3, 5).unwrap_err().to_string();
        assert!(short.contains("damaged") && short.contains("3..8"), "{short}");
        assert!(contents.write([("b", &b"again"[..])]).is_err(), "an id is written once");
        for bad in ["../x", "", "a/b", "zz"] {
            assert!(contents.write([(bad, &b"x"[..])]).is_err(), "{bad:?} is not an id");
            assert!(contents.read(bad, 0, 0).is_err(), "{bad:?} is not an id");
        }
        assert_eq!(contents.read("b", 0, 5).unwrap(), b"hello", "and the failed write changed nothing");
        contents.remove(&["b".into(), "0d".into()]);
        assert!(contents.read("b", 0, 1).is_err());
    }

    #[test]
    fn a_sweep_removes_only_old_files_without_an_entry() {
        let dir = tempfile::tempdir().unwrap();
        let contents = Contents::of(&dir.path().join("x.db"));
        assert_eq!(contents.sweep(|_| Ok(false)).unwrap(), 0, "no directory yet");
        contents.write([("0a", &b"1"[..]), ("0b", &b"2"[..]), ("0c", &b"3"[..])]).unwrap().keep();
        std::fs::write(contents.dir().join("0e.partial"), b"4").unwrap();
        std::fs::write(contents.dir().join("notes.txt"), b"an operator's").unwrap();
        let old = std::time::SystemTime::now() - ORPHAN_AGE - Duration::from_secs(60);
        for name in ["0a", "0b", "0e.partial", "notes.txt"] {
            File::options().write(true).open(contents.dir().join(name)).unwrap().set_modified(old).unwrap();
        }
        assert_eq!(contents.sweep(|id| Ok(id == "0a")).unwrap(), 2);
        let mut left: Vec<String> =
            std::fs::read_dir(contents.dir()).unwrap().map(|f| f.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, ["0a", "0c", "notes.txt"], "a young file may be another process's commit in flight");
    }
}
