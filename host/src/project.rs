//! Which project a session belongs to: the key under which recall keeps what its sessions left
//! and finds it again for the next one.
//!
//! A runtime names the project: a coding agent by its working directory, resolved here to the
//! repository it is in ([`project_of_dir`]), so every session started anywhere in one checkout
//! (or in one of its worktrees) shares one project; an embedding by any key it chooses
//! ([`check_project`]). A session with no project recalls nothing and is recalled by nothing.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Longest project key, in bytes.
pub const MAX_PROJECT_KEY: usize = 1024;

/// Checks that `key` may name a project: 1 to [`MAX_PROJECT_KEY`] bytes, no control characters.
pub fn check_project(key: &str) -> Result<()> {
    if key.trim().is_empty() {
        return Err(Error::invalid("project", "the project key is empty"));
    }
    if key.len() > MAX_PROJECT_KEY {
        return Err(Error::invalid(
            "project",
            format!("the project key is {} bytes; the most is {MAX_PROJECT_KEY}", key.len()),
        ));
    }
    if key.chars().any(char::is_control) {
        return Err(Error::invalid("project", "the project key holds a control character"));
    }
    Ok(())
}

/// The project of a working directory: the root of the git checkout holding `dir` (for a
/// linked worktree, its main checkout's), else `dir` itself, canonical either way. `dir` must
/// be an absolute path to an existing directory.
pub fn project_of_dir(dir: impl AsRef<Path>) -> Result<String> {
    let dir = dir.as_ref();
    if !dir.is_absolute() {
        return Err(Error::invalid("project", format!("`{}` is not an absolute path", dir.display())));
    }
    let canonical = dir
        .canonicalize()
        .map_err(|e| Error::invalid("project", format!("`{}` is not a directory here: {e}", dir.display())))?;
    if !canonical.is_dir() {
        return Err(Error::invalid("project", format!("`{}` is not a directory", dir.display())));
    }
    let root = checkout_root(&canonical).unwrap_or(canonical);
    let key = root.to_str().ok_or_else(|| {
        Error::invalid("project", format!("`{}` is not valid UTF-8, so it cannot name a project", root.display()))
    })?;
    check_project(key)?;
    Ok(key.to_owned())
}

/// The checkout holding `dir`: the nearest ancestor with a `.git` directory holding a `HEAD`
/// (as git itself requires: an empty `.git`, such as a sandbox's mount point, is not a
/// repository), or with a `.git` file (a linked worktree or a submodule), whose `gitdir:` line
/// leads to the main checkout when it is a worktree.
fn checkout_root(dir: &Path) -> Option<PathBuf> {
    for candidate in dir.ancestors() {
        let dot_git = candidate.join(".git");
        if dot_git.join("HEAD").is_file() {
            return Some(candidate.to_path_buf());
        }
        if dot_git.is_file() {
            return Some(main_checkout(candidate, &dot_git).unwrap_or_else(|| candidate.to_path_buf()));
        }
    }
    None
}

/// For a linked worktree (`gitdir: <main>/.git/worktrees/<name>`), `<main>`.
fn main_checkout(worktree: &Path, dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let gitdir = text.lines().find_map(|line| line.strip_prefix("gitdir:"))?.trim();
    let gitdir = worktree.join(gitdir).canonicalize().ok()?;
    let worktrees = gitdir.parent()?;
    if worktrees.file_name()? != "worktrees" {
        return None;
    }
    let main_git = worktrees.parent()?;
    if main_git.file_name()? != ".git" {
        return None;
    }
    main_git.parent().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_in_a_checkout_is_the_checkout_and_a_worktree_its_main_checkout() {
        let temp = tempfile::tempdir().unwrap();
        let repo = temp.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(repo.join(".git/worktrees/feature")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        assert_eq!(project_of_dir(repo.join("src/deep")).unwrap(), repo.to_str().unwrap());
        assert_eq!(project_of_dir(&repo).unwrap(), repo.to_str().unwrap());

        let worktree = temp.path().canonicalize().unwrap().join("feature");
        std::fs::create_dir_all(worktree.join("src")).unwrap();
        let gitdir = repo.join(".git/worktrees/feature");
        std::fs::write(worktree.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
        assert_eq!(project_of_dir(worktree.join("src")).unwrap(), repo.to_str().unwrap());

        let plain = temp.path().canonicalize().unwrap().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(project_of_dir(&plain).unwrap(), plain.to_str().unwrap());
    }

    /// An empty `.git` directory (a run of Codex 0.169.0 in its `workspace-write` sandbox left
    /// one in `/tmp`, measured) makes no checkout of the tree under it: git itself would look
    /// further up.
    #[test]
    fn an_empty_dot_git_directory_is_not_a_checkout() {
        let temp = tempfile::tempdir().unwrap();
        let outer = temp.path().canonicalize().unwrap();
        std::fs::create_dir_all(outer.join(".git")).unwrap();
        let plain = outer.join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(project_of_dir(&plain).unwrap(), plain.to_str().unwrap());
    }

    #[test]
    fn relative_missing_and_bad_keys_are_refused() {
        assert!(project_of_dir("relative/dir").unwrap_err().to_string().contains("not an absolute path"));
        assert!(project_of_dir("/no/such/dir/here").unwrap_err().to_string().contains("not a directory"));
        assert!(check_project("").is_err() && check_project("  ").is_err());
        assert!(check_project("a\nb").is_err() && check_project("a\0b").is_err());
        assert!(check_project(&"x".repeat(MAX_PROJECT_KEY + 1)).is_err());
        assert!(check_project("acme/web").is_ok() && check_project("/home/me/repo").is_ok());
    }
}
