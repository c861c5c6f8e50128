//! Whole shell outputs for the large-observation store, where the runtime cuts them before its
//! hooks see them.
//!
//! - **Capture** (a runtime whose table has a [`Shell`](super::dialect::Shell), Codex): at
//!   `PreToolUse` the command is rewritten to run as typed, in the same shell (`eval` of the
//!   command as one single-quoted word, so no quoting in it matters), its output (stderr joined
//!   to stdout) copied by `tee` into a per-call file of a private directory, its exit status
//!   kept and returned, and written beside the output once the command ended. At `PostToolUse`
//!   a finished command's file is the observation. A command still running (the runtime yielded
//!   to the model with a process id) is left to the runtime.
//! - **Persisted** (a table with [`Persisted`](super::dialect::Persisted), Claude Code): a
//!   built-in tool's result that names the file holding its whole output is offloaded from that
//!   file and replaced in the tool's own output shape.
//!
//! Either way a failure (no file, an unreadable or oversized one, a plugin's error) is one line
//! on stderr and no answer: the runtime's own output stands, and nothing is stored.

use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use super::dialect::Persisted;

/// The most bytes of a command's output the hook reads (and about the most the capture file
/// holds): a larger output is left to the runtime.
pub(crate) const MAX_OUTPUT_BYTES: u64 = 16 << 20;
/// Capture files older than this are removed by the next `PreToolUse` of any session (a call
/// whose `PostToolUse` never came: interrupted, or still running when it came).
const STALE_AFTER: Duration = Duration::from_secs(24 * 3600);

/// One tool call's capture files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Capture {
    /// The command's output as `tee` wrote it.
    pub(crate) output: PathBuf,
    /// The command's exit status, written once it ended.
    pub(crate) status: PathBuf,
}

impl Capture {
    /// The files of call `call_id` of `session` on `database` in `dir`.
    pub(crate) fn of(dir: &Path, database: &str, session: &str, call_id: &str) -> Capture {
        let name = super::ledger::fnv1a_hex(&format!("{database}\0{session}\0{call_id}"));
        Capture { output: dir.join(format!("{name}.out")), status: dir.join(format!("{name}.status")) }
    }

    /// Removes both files; a missing one is no error.
    pub(crate) fn remove(&self) {
        let _ = fs::remove_file(&self.output);
        let _ = fs::remove_file(&self.status);
    }
}

/// Creates `capture`'s output file, empty and readable by this user only (a file already
/// there is an error: nothing is written through another's file or link).
pub(crate) fn create(capture: &Capture) -> anyhow::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(&capture.output).with_context(|| format!("creating {}", capture.output.display()))?;
    Ok(())
}

/// The directory of the capture files: `$TMPDIR/scratchpad-<uid>` (else `/tmp/…`), which Codex's
/// `workspace-write` sandbox lets a command write (the state directory is not writable there).
/// Created private (0700); one that exists but is not a directory of this user's, closed to
/// others, is refused, since a command's output must not go where another user reads it.
#[cfg(unix)]
pub(crate) fn directory() -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir().join(format!("scratchpad-{uid}"));
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
    }
    let meta = fs::symlink_metadata(&dir).with_context(|| format!("reading {}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        bail!("{} is not a private directory of this user's (mode 0700): no shell output is captured", dir.display());
    }
    Ok(dir)
}

#[cfg(not(unix))]
pub(crate) fn directory() -> anyhow::Result<PathBuf> {
    bail!("shell output is captured on Unix only")
}

/// Removes the capture files in `dir` older than a day.
pub(crate) fn remove_stale(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| now.duration_since(modified).is_ok_and(|age| age > STALE_AFTER));
        if old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// `command` (a POSIX shell's: sh, bash, zsh, dash) rewritten to run unchanged in the same
/// shell while its output is copied into `capture.output`, its exit status kept and written to
/// `capture.status` at the end. `None` for a command no shell can hold (a NUL byte).
///
/// The command is one single-quoted word given to `eval` in a subshell, so whatever quotes,
/// pipes, heredocs or `exit` it holds mean what they meant. The status travels on a file
/// descriptor of its own (no `pipefail`, which dash lacks); `tee` runs under a file-size limit
/// with `SIGXFSZ` ignored, so past the bound it stops writing the file and goes on copying to
/// stdout. A `tee` that cannot write the file (a sandbox that forbids it) copies to stdout
/// all the same, and the status file is then missing: the runtime's own output stands.
pub(crate) fn wrap(command: &str, capture: &Capture) -> Option<String> {
    if command.contains('\0') {
        return None;
    }
    let (output, status) = (quote(&capture.output.to_string_lossy()), quote(&capture.status.to_string_lossy()));
    // `ulimit -f` counts 512-byte blocks in POSIX shells (1024 in bash): the file may pass the
    // read bound, never stop short of it.
    let blocks = MAX_OUTPUT_BYTES / 512 + 1;
    Some(format!(
        "{{ s=$( {{ {{ ( eval {} ) 3>&- 4>&-; echo $? >&4; }} 2>&1 | ( trap '' XFSZ; ulimit -f {blocks} 2>/dev/null; \
         exec tee {output} 2>/dev/null ) >&3 3>&- 4>&-; }} 4>&1 ); }} 3>&1; printf '%s\\n' \"$s\" 2>/dev/null \
         > {status}; exit \"${{s:-1}}\"",
        quote(command)
    ))
}

/// How [`wrap`] starts, up to the command's quoted word.
const WRAPPED: &str = "{ s=$( { { ( eval '";

/// The command [`wrap`] wrapped in `wrapped`; `None` for a command it did not write.
pub(crate) fn unwrap(wrapped: &str) -> Option<String> {
    let mut rest = wrapped.strip_prefix(WRAPPED)?;
    let mut command = String::new();
    loop {
        let end = rest.find('\'')?;
        command.push_str(&rest[..end]);
        match rest[end..].strip_prefix(r"'\''") {
            Some(after) => {
                command.push('\'');
                rest = after;
            }
            None => return Some(command),
        }
    }
}

/// `text` as one single-quoted shell word.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A finished command's exit status and its whole output; `None` while it runs (no status
/// yet). An output over [`MAX_OUTPUT_BYTES`] or a file that cannot be read is an error.
pub(crate) fn finished(capture: &Capture) -> anyhow::Result<Option<(String, String)>> {
    let status = match File::open(&capture.status) {
        Ok(file) => {
            let mut text = String::new();
            file.take(32).read_to_string(&mut text).with_context(|| format!("reading {}", capture.status.display()))?;
            text.trim().to_owned()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("opening {}", capture.status.display())),
    };
    if status.is_empty() || !status.bytes().all(|b| b.is_ascii_digit()) {
        bail!("{} holds no exit status", capture.status.display());
    }
    Ok(Some((status, read_bounded(&capture.output)?)))
}

/// The text of the whole output a runtime persisted, at the path in `response` (a built-in
/// tool's result object) that `persisted` names; `None` when the result names none.
pub(crate) fn persisted_output(persisted: &Persisted, response: &Value) -> anyhow::Result<Option<String>> {
    let Value::Object(fields) = response else { return Ok(None) };
    match fields.get(persisted.path) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(path)) if !path.is_empty() => Ok(Some(read_bounded(Path::new(path))?)),
        Some(other) => bail!("`tool_response.{}` must be a file's path, not {other}", persisted.path),
    }
}

/// `response` with its text replaced by `text` and the keys that pointed at the persisted
/// output gone: the tool's own output shape, small enough not to be persisted again.
pub(crate) fn in_shape(persisted: &Persisted, response: &Value, text: String) -> Value {
    let mut fields = match response {
        Value::Object(fields) => fields.clone(),
        _ => Map::new(),
    };
    for key in persisted.drop {
        fields.remove(*key);
    }
    fields.insert(persisted.text.to_owned(), Value::String(text));
    Value::Object(fields)
}

/// Up to [`MAX_OUTPUT_BYTES`] of the file at `path` as text (invalid UTF-8 replaced); a larger
/// file is an error.
fn read_bounded(path: &Path) -> anyhow::Result<String> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_OUTPUT_BYTES + 1).read_to_end(&mut bytes).with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > MAX_OUTPUT_BYTES {
        bail!("{} is over {} MiB: left to the runtime", path.display(), MAX_OUTPUT_BYTES >> 20);
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    /// Runs `command` wrapped; what the wrapper itself prints on stderr must be nothing.
    fn run(shell: &str, command: &str, capture: &Capture) -> (Option<i32>, String) {
        let output = Command::new(shell).arg("-c").arg(wrap(command, capture).unwrap()).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{shell}");
        (output.status.code(), String::from_utf8_lossy(&output.stdout).into_owned())
    }

    #[test]
    fn a_wrapped_command_keeps_its_output_and_status_and_leaves_both_in_files() {
        let dir = tempfile::tempdir().unwrap();
        let capture = Capture::of(&dir.path().join("it's a \"dir\""), "db", "s", "call_1");
        fs::create_dir_all(capture.output.parent().unwrap()).unwrap();
        let command = "printf '%s\\n' \"it's \\\"quoted\\\"\" 'a|b' | tr a-z A-Z; echo oops >&2\ncat <<'EOF'\n$HOME `x`\nEOF\nexit 7";
        let expected = "IT'S \"QUOTED\"\nA|B\noops\n$HOME `x`\n";
        for shell in ["sh", "bash"] {
            capture.remove();
            assert_eq!(run(shell, command, &capture), (Some(7), expected.to_owned()), "{shell}");
            assert_eq!(finished(&capture).unwrap(), Some(("7".into(), expected.into())), "{shell}");
        }
        assert_eq!(unwrap(&wrap(command, &capture).unwrap()).as_deref(), Some(command));
        assert_eq!(unwrap("ls -la"), None);
    }

    #[test]
    fn without_its_files_a_command_runs_as_it_would_and_says_nothing_of_them() {
        let dir = tempfile::tempdir().unwrap();
        let capture = Capture::of(&dir.path().join("missing"), "db", "s", "c");
        assert_eq!(run("sh", "echo out; exit 3", &capture), (Some(3), "out\n".into()));
        assert_eq!(finished(&capture).unwrap(), None, "no status: left to the runtime");
        assert_eq!(wrap("a\0b", &capture), None);
    }

    #[test]
    fn a_persisted_output_is_read_and_replaced_in_the_tools_shape() {
        let persisted = Persisted { path: "persistedOutputPath", text: "stdout", drop: &["persistedOutputPath", "x"] };
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.txt");
        fs::write(&file, "whole").unwrap();
        let response = serde_json::json!({"stdout": "cut", "stderr": "", "persistedOutputPath": file, "x": 1});
        assert_eq!(persisted_output(&persisted, &response).unwrap().as_deref(), Some("whole"));
        assert_eq!(
            in_shape(&persisted, &response, "short".into()),
            serde_json::json!({"stdout": "short", "stderr": ""})
        );
        assert_eq!(persisted_output(&persisted, &serde_json::json!({"stdout": "small"})).unwrap(), None);
        let wrong = persisted_output(&persisted, &serde_json::json!({"persistedOutputPath": 7})).unwrap_err();
        assert!(wrong.to_string().contains("must be a file's path"), "{wrong}");
        let missing = serde_json::json!({"persistedOutputPath": dir.path().join("gone")});
        assert!(persisted_output(&persisted, &missing).is_err());
    }
}
