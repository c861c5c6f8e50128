//! An agent plugin's version against this binary's. The Claude Code plugin's launcher
//! (`integrations/claude-code/bin/scratchpad`) exports the plugin's version as
//! [`ENV`]; when the binary it ends up running (its own npm dependency, `$SCRATCHPAD_BIN` or
//! `scratchpad` on `PATH`) is another version, `hook` says so in one line the user sees at
//! session start, and `mcp` in one line on stderr. Nothing else changes: the versions may
//! still work together.

/// The variable the plugin's launcher sets to the plugin's version.
pub(crate) const ENV: &str = "SCRATCHPAD_PLUGIN_VERSION";

/// The one line to show when the plugin and this binary are different versions.
pub(crate) fn mismatch() -> Option<String> {
    let plugin = std::env::var(ENV).ok().filter(|v| !v.is_empty())?;
    mismatch_of(&plugin, env!("CARGO_PKG_VERSION"))
}

fn mismatch_of(plugin: &str, binary: &str) -> Option<String> {
    (plugin != binary).then(|| {
        format!(
            "scratchpad: the plugin is version {plugin} but the `scratchpad` binary it runs is {binary}; install the \
             same version of both (the plugin from its marketplace, or set SCRATCHPAD_BIN)"
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_names_both_versions_and_equal_versions_say_nothing() {
        let line = super::mismatch_of("0.1.0", "0.2.0").unwrap();
        assert!(line.contains("plugin is version 0.1.0") && line.contains("runs is 0.2.0"), "{line}");
        assert!(!line.contains('\n'));
        assert_eq!(super::mismatch_of("0.2.0", "0.2.0"), None);
    }
}
