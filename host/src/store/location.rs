//! Where the host's data lives: a SQLite file (the embedded default) or a PostgreSQL server
//! (fleet mode), chosen by the form of `--db`, the config file's `database` or
//! `SCRATCHPAD_DATABASE_URL`.

use std::path::{Path, PathBuf};

/// The environment variable the CLI reads a database location from when neither `--db` nor a
/// config file names one.
pub const DATABASE_URL_ENV: &str = "SCRATCHPAD_DATABASE_URL";

/// A database: a file path, or a `postgres://` / `postgresql://` URL.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file (created if missing).
    Sqlite(PathBuf),
    /// A PostgreSQL server, as a libpq-style URL:
    /// `postgres://user:password@host:port/database?options`.
    Postgres(String),
}

impl Location {
    /// Reads `text` as a PostgreSQL URL when it starts with `postgres://` or
    /// `postgresql://`, and as a file path otherwise.
    pub fn parse(text: &str) -> Location {
        if is_url(text) { Location::Postgres(text.to_owned()) } else { Location::Sqlite(PathBuf::from(text)) }
    }

    /// The SQLite file, when the data is in one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Location::Sqlite(path) => Some(path),
            Location::Postgres(_) => None,
        }
    }

    /// Whether the data is on a PostgreSQL server.
    pub fn is_postgres(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }
}

fn is_url(text: &str) -> bool {
    let lower = text.get(..13).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// `url` with its password (in the user part or a `password=` option) replaced by `***`: the
/// only form of a URL the host ever prints or logs.
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else { return url.to_owned() };
    let (scheme, rest) = url.split_at(scheme_end);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => match authority[..at].split_once(':') {
            Some((user, _)) => format!("{user}:***{}", &authority[at..]),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let options: Vec<String> = query
                .split('&')
                .map(|option| match option.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => option.to_owned(),
                })
                .collect();
            format!("{path}?{}", options.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}{authority}{tail}")
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// Debug output is the redacted form too, so a config printed with `{:?}` shows no password.
impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            Location::Postgres(_) => f.debug_tuple("Postgres").field(&self.to_string()).finish(),
        }
    }
}

impl From<PathBuf> for Location {
    fn from(path: PathBuf) -> Self {
        Location::Sqlite(path)
    }
}

impl From<&Path> for Location {
    fn from(path: &Path) -> Self {
        Location::Sqlite(path.to_owned())
    }
}

impl From<&str> for Location {
    fn from(text: &str) -> Self {
        Location::parse(text)
    }
}

impl From<String> for Location {
    fn from(text: String) -> Self {
        Location::parse(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_postgres_and_everything_else_a_file() {
        assert!(Location::parse("postgres://u@h/db").is_postgres());
        assert!(Location::parse("PostgreSQL://u@h/db").is_postgres());
        assert_eq!(Location::parse("./postgres.db").path(), Some(Path::new("./postgres.db")));
        assert_eq!(Location::parse("/var/lib/x.db").path(), Some(Path::new("/var/lib/x.db")));
    }

    #[test]
    fn a_password_never_shows() {
        let url = "postgres://alice:s3cr%40t@db.example:5433/agents?sslmode=disable&password=other";
        let shown = Location::parse(url).to_string();
        assert_eq!(shown, "postgres://alice:***@db.example:5433/agents?sslmode=disable&password=***");
        assert!(!format!("{:?}", Location::parse(url)).contains("s3cr"));
        assert_eq!(redact("postgres://alice@h/db"), "postgres://alice@h/db");
        assert_eq!(redact("postgres://h/db?user=a"), "postgres://h/db?user=a");
    }
}
