//! Every relative link in the README and in `docs/` resolves: its file exists (relative to the
//! Markdown file that links it), and its `#anchor`, when it has one and points into a Markdown
//! file, names a heading of that file under GitHub's slug rule. Links to other sites
//! (`http:`, `https:`, `mailto:` and any other scheme) are not followed, and neither are links
//! written inside code spans or fenced code blocks, which GitHub does not render as links.
//!
//! The README is the front door and the docs hold the rest, so a moved section or a renamed
//! heading must not leave a reader at a dead link; this test fails naming the file, the link
//! and what is missing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The Markdown files whose links are checked, relative to the workspace: the README and
/// every `.md` file under `docs/`.
fn checked_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut dirs = vec![PathBuf::from("docs")];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(root.join(&dir)).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.unwrap();
            let path = dir.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The lines of `text` outside fenced code blocks (``` or ~~~, indented at most three spaces),
/// each with its 1-based line number.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<(char, usize)> = None;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let marker = trimmed.chars().next().filter(|c| *c == '`' || *c == '~');
        let run = marker.map_or(0, |c| trimmed.chars().take_while(|x| *x == c).count());
        match (fence, marker) {
            (None, Some(c)) if indent < 4 && run >= 3 => fence = Some((c, run)),
            (Some((c, open)), Some(m)) if m == c && run >= open && trimmed[run..].trim().is_empty() => fence = None,
            (None, _) => lines.push((index + 1, line)),
            _ => {}
        }
    }
    lines
}

/// `line` with every code span's content (between matching runs of backticks) blanked out.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        // The closing run: the next run of exactly as many backticks.
        let mut j = i + run;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let other = chars[j..].iter().take_while(|c| **c == '`').count();
                if other == run {
                    close = Some(j);
                    break;
                }
                j += other;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                out.extend(std::iter::repeat_n(' ', j + run - i));
                i = j + run;
            }
            None => {
                // An unmatched run is literal backticks.
                out.extend(std::iter::repeat_n('`', run));
                i += run;
            }
        }
    }
    out
}

/// The targets of the inline links and images (`[text](target "title")`) in `line`, and of a
/// reference definition (`[label]: target`) when the line is one.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let trimmed = line.trim_start();
    if let Some(rest) = trimmed.strip_prefix('[')
        && let Some(end) = rest.find("]:")
        && !rest[..end].contains('[')
    {
        if let Some(target) = rest[end + 2..].split_whitespace().next() {
            targets.push(target.trim_start_matches('<').trim_end_matches('>').to_owned());
        }
        return targets;
    }
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        // The destination ends at the `)` that balances the `(`, or at whitespace before a title.
        let mut depth = 0usize;
        let mut end = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = i;
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        let inside = after[..end].trim();
        let target = if let Some(angled) = inside.strip_prefix('<') {
            angled.split('>').next().unwrap_or("")
        } else {
            inside.split_whitespace().next().unwrap_or("")
        };
        if !target.is_empty() {
            targets.push(target.to_owned());
        }
        rest = &after[end.min(after.len())..];
    }
    targets
}

/// Whether `target` names another site or a scheme (`https:`, `mailto:`, …) rather than a file.
fn is_external(target: &str) -> bool {
    let scheme = target.split(':').next().unwrap_or("");
    target.contains(':')
        && !scheme.is_empty()
        && scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// `%20` and the like decoded (the few escapes a relative link carries).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(std::str::from_utf8(hex).unwrap_or("-"), 16)
        {
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A heading's text as GitHub renders it for its slug: links replaced by their text.
fn rendered(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|i| open + i) else { break };
        let Some(end) = rest[close..].find(')').map(|i| close + i) else { break };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// GitHub's slug of a heading: lowercase; every character but letters, digits, `-`, `_` and
/// spaces removed; each space a `-`.
fn slug(heading: &str) -> String {
    rendered(heading)
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file: each ATX heading's slug, a repeated slug suffixed `-1`,
/// `-2`, … in order, as GitHub does; and the `id`/`name` of HTML anchors written in the text.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = Vec::new();
    for (_, line) in prose_lines(text) {
        let trimmed = line.trim_start_matches(' ');
        let level = trimmed.chars().take_while(|c| *c == '#').count();
        if line.len() - trimmed.len() < 4 && (1..=6).contains(&level) {
            let after = &trimmed[level..];
            if after.is_empty() || after.starts_with([' ', '\t']) {
                let content = after.trim().trim_end_matches('#').trim_end();
                let base = slug(content);
                let count = seen.entry(base.clone()).or_insert(0);
                anchors.push(if *count == 0 { base.clone() } else { format!("{base}-{count}") });
                *count += 1;
            }
        }
        for attribute in ["id=\"", "name=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attribute) {
                let value = &rest[at + attribute.len()..];
                let end = value.find('"').unwrap_or(value.len());
                anchors.push(value[..end].to_owned());
                rest = &value[end..];
            }
        }
    }
    anchors
}

/// What is wrong with each broken link of the Markdown file `file` (relative to `root`).
fn broken_links(root: &Path, file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
    let dir = file.parent().unwrap_or(Path::new(""));
    let mut problems = Vec::new();
    for (number, line) in prose_lines(&text) {
        for target in link_targets(&without_code_spans(line)) {
            if is_external(&target) {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((path, fragment)) => (path, Some(fragment)),
                None => (target.as_str(), None),
            };
            let path = percent_decoded(path);
            let resolved = if path.is_empty() {
                file.to_path_buf()
            } else if let Some(absolute) = path.strip_prefix('/') {
                PathBuf::from(absolute)
            } else {
                dir.join(&path)
            };
            let at = format!("{}:{number}: link `{target}`", file.display());
            if !root.join(&resolved).exists() {
                problems.push(format!("{at}: {} does not exist", resolved.display()));
                continue;
            }
            let Some(fragment) = fragment.filter(|f| !f.is_empty()) else { continue };
            if resolved.extension().is_none_or(|e| e != "md") {
                continue; // Line anchors into source files (`#L10`) are GitHub's, not a heading.
            }
            let target_text = std::fs::read_to_string(root.join(&resolved)).unwrap();
            let fragment = percent_decoded(fragment).to_lowercase();
            if !anchors(&target_text).contains(&fragment) {
                problems.push(format!("{at}: {} has no heading with the anchor `#{fragment}`", resolved.display()));
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_and_anchor_in_the_readme_and_docs_resolves() {
    let root = xtask::workspace();
    let files = checked_files(&root);
    assert!(files.len() > 10, "found the README and the docs: {files:?}");
    let problems: Vec<String> = files.iter().flat_map(|file| broken_links(&root, file)).collect();
    assert!(problems.is_empty(), "{} broken link(s):\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn slugs_follow_githubs_rule() {
    assert_eq!(
        slug("Fourth pass: slots reset without `PAGEMAP_SCAN` (a security fix)"),
        "fourth-pass-slots-reset-without-pagemap_scan-a-security-fix"
    );
    assert_eq!(slug("PostgreSQL (fleet mode)"), "postgresql-fleet-mode");
    assert_eq!(slug("Powers: what a plugin may do"), "powers-what-a-plugin-may-do");
    assert_eq!(
        slug("Other runtimes: the same component in Node and Python"),
        "other-runtimes-the-same-component-in-node-and-python"
    );
    assert_eq!(slug("See [the docs](docs/cli.md) — now"), "see-the-docs--now");
    let text = "# A\n## Usage\n```\n# not a heading\n```\n## Usage\n### Usage\n";
    assert_eq!(anchors(text), ["a", "usage", "usage-1", "usage-2"]);
}

#[test]
fn links_in_code_are_not_links() {
    let text = "[a](one.md) `[b](two.md)`\n```\n[c](three.md)\n```\n[d](https://example.com) [e](x.md#f \"title\")\n";
    let targets: Vec<String> =
        prose_lines(text).into_iter().flat_map(|(_, line)| link_targets(&without_code_spans(line))).collect();
    assert_eq!(targets, ["one.md", "https://example.com", "x.md#f"]);
    assert!(is_external("https://example.com") && is_external("mailto:a@b.c") && !is_external("docs/cli.md#x"));
}
