//! Texts the CLI prints for a person to paste into a POSIX shell.

/// `text` as one word of a POSIX shell command line (as it is when it needs no quotes).
pub(crate) fn quote(text: &str) -> String {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-./:@%+,=".contains(&b)) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn a_path_is_quoted_for_the_shell_only_when_it_needs_it() {
        assert_eq!(quote("/var/lib/scratchpad/s.db"), "/var/lib/scratchpad/s.db");
        assert_eq!(quote("my data/s.db"), "'my data/s.db'");
        assert_eq!(quote("it's.db"), r"'it'\''s.db'");
        assert_eq!(quote("$(rm -rf ~).db"), "'$(rm -rf ~).db'");
        assert_eq!(quote(""), "''");
    }
}
