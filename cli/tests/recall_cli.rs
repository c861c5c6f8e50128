//! Recall from the command line and the viewer, through the real binary: sessions created in a
//! project named by a directory, and `scratchpad recall status|search|preview|forget|export|
//! import` and the viewer's project page over what they saved.

use std::io::BufRead;
use std::path::Path;

use crate::support;

use support::{json_of, run, text, viewer_page};

/// A git checkout (a `.git` directory with a `HEAD` is what names one) with a subdirectory.
fn checkout(root: &Path) -> String {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    root.canonicalize().unwrap().to_str().unwrap().to_owned()
}

fn ok(db: &Path, args: &[&str]) -> std::process::Output {
    let output = run(db, args);
    assert!(output.status.success(), "{args:?}: {}{}", text(&output.stdout), text(&output.stderr));
    output
}

#[test]
fn recall_commands_and_the_viewer_cover_a_projects_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("recall.db");
    let project = checkout(&dir.path().join("repo"));
    let deep = format!("{project}/src/deep");

    // A session created from a subdirectory belongs to the checkout.
    let created = json_of(&ok(&db, &["--json", "session", "create", "a", "--project", &deep]));
    assert_eq!(created["project"], project.as_str(), "{created}");
    let note = "the cache key omits the locale <private>door code 4417</private> token ghp_0123456789abcdefghijABCDEFGHIJklmnop";
    let args = serde_json::json!({ "action": "append_notes", "content": note }).to_string();
    ok(&db, &["call", "a", "session.scratchpad", &args]);
    ok(&db, &["call", "a", "session.scratchpad", r#"{"action":"set_plan","content":"1. key the cache by locale"}"#]);

    // A directory that does not exist names no project: refused, nothing created.
    let refused = run(&db, &["session", "create", "b", "--project", "/no/such/dir"]);
    assert!(!refused.status.success() && text(&refused.stderr).contains("not a directory"), "{refused:?}");
    assert!(!text(&ok(&db, &["session", "list"]).stdout).contains("\nb"), "nothing created");

    let status = json_of(&ok(&db, &["--json", "recall", "status", "--project", &project]));
    assert_eq!(status["plugins"][0]["plugin"], "scratchpad", "{status}");
    assert_eq!(status["plugins"][0]["documents"], 2, "the note and the plan: {status}");

    let found = text(&ok(&db, &["recall", "search", "locale", "--project", &deep]).stdout);
    assert!(found.contains("the cache key omits the locale") && found.contains("[redacted]"), "{found}");
    assert!(!found.contains("4417") && !found.contains("ghp_"), "{found}");
    let nothing = text(&ok(&db, &["recall", "search", "locale", "--project-key", "/elsewhere"]).stdout);
    assert_eq!(nothing.trim(), "No match.");
    let bad = run(&db, &["recall", "search", "(*)", "--project", &project]);
    assert!(!bad.status.success() && text(&bad.stderr).contains("no words"), "{}", text(&bad.stderr));

    let preview = text(&ok(&db, &["recall", "preview", "--project", &project, "--message", "locale cache"]).stdout);
    assert!(preview.contains("What earlier sessions of this project left"), "{preview}");
    assert!(preview.contains("key the cache by locale"), "the plan, offered: {preview}");

    // The viewer: the session links its project; the project's page searches and previews.
    let mut ui = support::command()
        .args(["--db", db.to_str().unwrap(), "ui", "--addr", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting scratchpad ui");
    let mut url = String::new();
    std::io::BufReader::new(ui.stdout.take().unwrap()).read_line(&mut url).unwrap();
    let session = viewer_page(url.trim(), "/s/a");
    let key: String = project.bytes().map(|b| format!("%{b:02X}")).collect();
    let page = viewer_page(url.trim(), &format!("/p?project={key}&q=locale&message=cache"));
    let _ = ui.kill();
    let _ = ui.wait();
    assert!(session.contains("id=\"project\""), "{session}");
    let hits = page.split("id=\"hits\"").nth(1).expect("the hits");
    assert!(hits.contains("the cache key omits the locale"), "{page}");
    let next = page.split("id=\"next\"").nth(1).expect("the preview");
    assert!(next.contains("What earlier sessions of this project left"), "{page}");
    assert!(!page.contains("4417"), "{page}");

    // Export, forget, import: the round trip of a project's index.
    let exported = text(&ok(&db, &["recall", "export", "--project", &project]).stdout);
    assert_eq!(exported.lines().count(), 2, "{exported}");
    let everything = run(&db, &["recall", "forget", "--project", &project]);
    assert!(!everything.status.success() && text(&everything.stderr).contains("--all"), "a whole project needs --all");
    let forgot = json_of(&ok(&db, &["--json", "recall", "forget", "--project", &project, "--session", "a"]));
    assert_eq!(forgot["removed"], 2);
    assert_eq!(text(&ok(&db, &["recall", "search", "locale", "--project", &project]).stdout).trim(), "No match.");
    let file = dir.path().join("export.jsonl");
    std::fs::write(&file, &exported).unwrap();
    let imported = json_of(&ok(&db, &["--json", "recall", "import", file.to_str().unwrap()]));
    assert_eq!(imported["imported"], 2);
    assert_eq!(text(&ok(&db, &["recall", "export", "--project", &project]).stdout), exported, "the same lines");
    std::fs::write(&file, "{\"not\": \"a document\"}\n").unwrap();
    let broken = run(&db, &["recall", "import", file.to_str().unwrap()]);
    assert!(!broken.status.success() && text(&broken.stderr).contains("line 1"), "{}", text(&broken.stderr));
}
