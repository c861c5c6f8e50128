//! Plugins in other languages through the `scratchpad` binary: the Python and JavaScript plugins
//! (`plugins/python-redactor`, `plugins/js-todo`), built from their sources with their pinned
//! tools, load with `--plugin FILE.wasm` and from a config file's `[[plugin]]` tables, are
//! listed by `plugins`, described by `inspect`, and do their work across CLI processes; the
//! viewer shows the JavaScript plugin's view of its todos with no code of its own for it.

use scratchpad_tests::third_party;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support;

use support::{json_of, text, viewer_page};

fn scratchpad(args: &[&str]) -> Output {
    support::command().args(args).output().expect("running scratchpad")
}

fn succeeded(output: Output) -> Output {
    assert!(output.status.success(), "{}\n{}", text(&output.stdout), text(&output.stderr));
    output
}

/// The two built components linked into `dir` under readable names (the CLI names a
/// `--plugin` after its file).
fn components(dir: &Path) -> (PathBuf, PathBuf) {
    let python = dir.join("redactor.wasm");
    let js = dir.join("todo.wasm");
    std::os::unix::fs::symlink(third_party::python_redactor(), &python).unwrap();
    std::os::unix::fs::symlink(third_party::js_todo(), &js).unwrap();
    warm_cache(&python, &js);
    (python, js)
}

/// Compiles both components into the CLI's cache once, before the tests' processes load them
/// in parallel: compiling a CPython or SpiderMonkey component takes about a minute on the
/// project's machine, and every process that misses the cache would compile its own copy.
fn warm_cache(python: &Path, js: &Path) {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("warm.db");
        let mut args = vec!["--db".to_owned(), str_of(&db).to_owned(), "plugins".to_owned()];
        args.extend(third_party::trusted_flags(str_of(python), str_of(js)));
        succeeded(scratchpad(&args.iter().map(String::as_str).collect::<Vec<_>>()));
    });
}

fn str_of(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
fn plugin_flags_load_both_beside_the_defaults_and_plugins_lists_their_tools_and_limits() {
    let dir = tempfile::tempdir().unwrap();
    let (python, js) = components(dir.path());
    let db = dir.path().join("cli.db");
    let mut args = vec!["--json".to_owned(), "--db".to_owned(), str_of(&db).to_owned(), "plugins".to_owned()];
    args.extend(third_party::trusted_flags(str_of(&python), str_of(&js)));
    let listed = json_of(&succeeded(scratchpad(&args.iter().map(String::as_str).collect::<Vec<_>>())));
    let plugins = listed["plugins"].as_array().unwrap();
    let names: Vec<&str> = plugins.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(&names[names.len() - 2..], ["redactor", "todo"], "appended after the defaults: {names:?}");
    let tools = |plugin: &Value| -> Vec<String> {
        plugin["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let (redactor, todo) = (&plugins[names.len() - 2], &plugins[names.len() - 1]);
    assert_eq!(tools(redactor), ["redactor.stats"]);
    assert_eq!(tools(todo), ["todo"]);
    for plugin in [redactor, todo] {
        assert_eq!(plugin["call_timeout_ms"], 500, "the default deadline: {plugin}");
        assert_eq!(plugin["memory_bytes"], 64 << 20, "the default memory cap: {plugin}");
        assert_eq!(plugin["signed_by"], Value::Null, "loaded unsigned: {plugin}");
    }
    let powers = |plugin: &Value| {
        plugin["grants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(powers(redactor), third_party::REDACTOR_POWERS, "it holds what it asked for");
    assert_eq!(powers(todo), third_party::TODO_POWERS);
}

#[test]
fn inspect_shows_each_components_imports_exports_and_declared_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (python, js) = components(dir.path());
    for (file, tool, powers) in
        [(&python, "redactor.stats", third_party::REDACTOR_POWERS), (&js, "todo", third_party::TODO_POWERS)]
    {
        let report = json_of(&succeeded(scratchpad(&["--json", "inspect", str_of(file)])));
        assert_eq!(report["ok"], true, "{report}");
        let list = |key: &str| report[key].as_array().unwrap().iter().map(|v| v.to_string()).collect::<Vec<_>>();
        let (imports, exports) = (list("imports").join(" "), list("exports").join(" "));
        assert!(imports.contains("scratchpad:plugin/storage@0.1.3"), "{imports}");
        assert!(imports.contains("scratchpad:plugin/tokens@0.1.3"), "{imports}");
        for interface in ["lifecycle", "hooks", "tools", "permissions", "view"] {
            assert!(exports.contains(&format!("scratchpad:plugin/{interface}@0.1.3")), "{exports}");
        }
        assert_eq!(report["plugin"]["tools"][0]["name"], tool, "{report}");
        let asked: Vec<&str> = report["requested"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
        assert_eq!(asked.join(","), powers, "{report}");
        let refusal = report["signature"]["error"].as_str().unwrap_or_default();
        assert!(refusal.contains("no signature"), "an unsigned file would be refused: {report}");
    }
}

#[test]
fn a_config_file_loads_both_with_their_settings_and_their_state_outlives_the_process() {
    let dir = tempfile::tempdir().unwrap();
    components(dir.path());
    let config = dir.path().join("scratchpad.toml");
    std::fs::write(
        &config,
        r#"
database = "cli.db"

[[plugin]]
name = "scratchpad"

[[plugin]]
name = "redactor"
path = "redactor.wasm"
allow_unsigned = true
grants = ["guidance", "read-tool-traffic", "rewrite-tool-calls", "block-tool-calls", "storage", "tokens", "log", "config"]
[plugin.config]
mode = "block"
[plugin.limits]   # wall-clock deadline; the suite runs on a loaded 2-core machine
call_timeout_ms = 5000

[[plugin]]
name = "todo"
path = "todo.wasm"
allow_unsigned = true
grants = ["guidance", "inject", "storage", "tokens", "log", "config"]
[plugin.config]
placement = "prepend-context"
[plugin.limits]
call_timeout_ms = 5000
"#,
    )
    .unwrap();
    let config = str_of(&config);
    succeeded(scratchpad(&["--config", config, "session", "create", "s1"]));
    succeeded(scratchpad(&["--config", config, "call", "s1", "todo", r#"{"action":"add","text":"rotate the key"}"#]));

    let query = text(&succeeded(scratchpad(&["--config", config, "query", "s1", "continue"])).stdout);
    assert!(query.contains("[Todo: 1 open]\n[ ] #1 rotate the key"), "another process injects the list: {query}");

    let leak = r#"{"action":"set_notes","content":"key AKIAIOSFODNN7EXAMPLE"}"#;
    let blocked = scratchpad(&["--config", config, "--json", "call", "s1", "session.scratchpad", leak]);
    assert_eq!(blocked.status.code(), Some(1), "a blocked call is a tool refusal: {}", text(&blocked.stderr));
    let blocked = json_of(&blocked);
    assert!(blocked.to_string().contains("aws-access-key"), "{blocked}");
    let listed = json_of(&succeeded(scratchpad(&["--config", config, "--json", "plugins"])));
    let limits: Vec<&Value> = listed["plugins"].as_array().unwrap().iter().map(|p| &p["call_timeout_ms"]).collect();
    assert_eq!(limits, [500, 5000, 5000], "per-plugin limits from the config: {listed}");
    let show = text(&succeeded(scratchpad(&["--config", config, "show", "s1"])).stdout);
    assert!(!show.contains("AKIAIOSFODNN7EXAMPLE"), "the secret never reached storage: {show}");
}

#[test]
fn the_viewer_renders_the_js_todo_plugins_view_beside_the_scratchpads() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let (python, js) = components(dir.path());
    let db = dir.path().join("ui.db");
    let flags = third_party::trusted_flags(str_of(&python), str_of(&js));
    let run = |args: &[&str]| {
        let mut all = vec!["--db", str_of(&db)];
        all.extend_from_slice(args);
        all.extend(flags.iter().map(String::as_str));
        succeeded(scratchpad(&all))
    };
    run(&["session", "create", "s1"]);
    run(&["call", "s1", "todo", r#"{"action":"add","items":["rotate the key","write the <post>"]}"#]);
    run(&["call", "s1", "todo", r#"{"action":"done","id":1}"#]);
    run(&["call", "s1", "session.scratchpad", r#"{"action":"set_plan","content":"1. rotate"}"#]);

    let mut ui = support::command()
        .args(["--db", str_of(&db), "ui", "--addr", "127.0.0.1:0"])
        .args(&flags)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting scratchpad ui");
    let mut url = String::new();
    std::io::BufReader::new(ui.stdout.take().unwrap()).read_line(&mut url).unwrap();
    let page = viewer_page(url.trim(), "/s/s1");
    let _ = ui.kill();
    let _ = ui.wait();

    let open =
        page.split("id=\"space-todo-open\"").nth(1).expect("the todo plugin's open items").split("</div>").next();
    assert_eq!(
        open,
        Some("><h4>Open todos</h4><p class=\"meta\">2/20 items</p><ul><li>[ ] #2 write the &lt;post&gt;</li></ul>"),
        "{page}"
    );
    let done =
        page.split("id=\"space-todo-done\"").nth(1).expect("the todo plugin's done items").split("</div>").next();
    assert_eq!(done, Some("><h4>Done</h4><ul><li>[x] #1 rotate the key</li></ul>"), "{page}");
    let plan = page.split("id=\"space-scratchpad-plan\"").nth(1).expect("the scratchpad's plan").split("</div>").next();
    assert_eq!(plan, Some("><h4>Plan</h4><p class=\"meta\">9/2000 chars</p><pre>1. rotate</pre>"), "{page}");
    assert!(!page.contains("id=\"view-redactor\""), "the redactor has redacted nothing, so it shows no view: {page}");
}
