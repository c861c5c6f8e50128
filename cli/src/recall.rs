//! `scratchpad recall …`: the operator's view of what a project's sessions left for the next
//! ones — what is kept, what a new session would receive, search, and forgetting, exporting
//! and importing it (JSON Lines, one document a line, diffable). The host does the work
//! (`Host::recall_*`); this file parses and prints.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use scratchpad_host::{Host, IndexFilter, IndexedDocument, terminal};
use serde_json::json;

use crate::args::Global;
use crate::output::print_json;

/// What `scratchpad recall` does.
#[derive(clap::Subcommand)]
pub(crate) enum RecallCommand {
    /// How many documents each plugin keeps in each project's index
    Status {
        #[command(flatten)]
        project: ProjectArg,
    },
    /// Search a project's index (every plugin's documents) for words
    Search {
        /// The words to look for
        query: String,
        #[command(flatten)]
        project: ProjectArg,
        /// Most hits per plugin (1 to 50)
        #[arg(long, default_value_t = 10)]
        limit: u32,
    },
    /// Show what a new session of the project would receive in its first prompt
    Preview {
        #[command(flatten)]
        project: ProjectArg,
        /// The new session's first message (what recall ranks by)
        #[arg(long, default_value = "")]
        message: String,
    },
    /// Remove documents from the index and from the disk (sessions' own state is kept)
    Forget {
        #[command(flatten)]
        filter: FilterArgs,
        /// Only documents matching these words
        #[arg(long, value_name = "WORDS")]
        query: Option<String>,
        /// Forget everything the filters name even with no filter but the project
        #[arg(long)]
        all: bool,
    },
    /// Print documents as JSON Lines (one document a line, oldest first)
    Export {
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Keep the documents of a JSON Lines file (from `export`), scrubbed like any other
    Import {
        /// The file (`-`: stdin)
        file: PathBuf,
    },
}

/// The project a command is about.
#[derive(clap::Args)]
pub(crate) struct ProjectArg {
    /// The project, named by a directory (its git checkout's root, or itself) [default: the
    /// current directory's]
    #[arg(long, value_name = "DIR", conflicts_with = "project_key")]
    project: Option<PathBuf>,
    /// The project by its key, as an embedding named it
    #[arg(long, value_name = "KEY")]
    project_key: Option<String>,
}

impl ProjectArg {
    fn key(&self) -> anyhow::Result<String> {
        if let Some(key) = &self.project_key {
            scratchpad_host::check_project(key)?;
            return Ok(key.clone());
        }
        let dir = match &self.project {
            Some(dir) => std::path::absolute(dir)?,
            None => std::env::current_dir().context("reading the current directory")?,
        };
        Ok(scratchpad_host::project_of_dir(&dir)?)
    }
}

/// Which documents `forget` and `export` mean.
#[derive(clap::Args)]
pub(crate) struct FilterArgs {
    #[command(flatten)]
    project: ProjectArg,
    /// Every project's documents, not one project's
    #[arg(long, conflicts_with_all = ["project", "project_key"])]
    all_projects: bool,
    /// Only what this session kept
    #[arg(long, value_name = "SESSION")]
    session: Option<String>,
    /// Only documents from this day on (YYYY-MM-DD, UTC) or this Unix millisecond
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only documents before this day (YYYY-MM-DD, UTC) or this Unix millisecond
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
}

impl FilterArgs {
    fn filter(&self) -> anyhow::Result<IndexFilter> {
        let mut filter = IndexFilter::default();
        filter.project = if self.all_projects { None } else { Some(self.project.key()?) };
        filter.session = self.session.clone();
        filter.since_ms = self.since.as_deref().map(|d| time("--since", d)).transpose()?;
        filter.until_ms = self.until.as_deref().map(|d| time("--until", d)).transpose()?;
        Ok(filter)
    }

    /// Whether anything narrows the project's documents.
    fn narrows(&self) -> bool {
        self.session.is_some() || self.since.is_some() || self.until.is_some()
    }
}

/// `YYYY-MM-DD` (midnight UTC) or Unix milliseconds.
fn time(flag: &str, text: &str) -> anyhow::Result<i64> {
    if let Ok(ms) = text.parse::<i64>() {
        return Ok(ms);
    }
    let parts: Vec<&str> = text.split('-').collect();
    let bad = || anyhow::anyhow!("{flag}: `{text}` is neither a date (YYYY-MM-DD) nor Unix milliseconds");
    let [year, month, day] = parts[..] else { return Err(bad()) };
    let (year, month, day): (i64, i64, i64) =
        (year.parse().map_err(|_| bad())?, month.parse().map_err(|_| bad())?, day.parse().map_err(|_| bad())?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400_000)
}

pub(crate) async fn run(host: &Host, global: &Global, command: RecallCommand) -> anyhow::Result<()> {
    match command {
        RecallCommand::Status { project } => {
            let key = project.key()?;
            let usage = host.recall_usage(Some(&key)).await?;
            if global.json {
                print_json(&json!({ "project": key, "plugins": usage }));
            } else if usage.is_empty() {
                println!("project {}: nothing kept", terminal::line(&key));
            } else {
                println!("project {}", terminal::line(&key));
                for plugin in usage {
                    println!("  {:<16} {} documents, {} bytes", plugin.plugin, plugin.documents, plugin.bytes);
                }
            }
        }
        RecallCommand::Search { query, project, limit } => {
            let hits = host.recall_search(&project.key()?, &query, limit).await?;
            if global.json {
                print_json(&json!({ "hits": hits }));
            } else if hits.is_empty() {
                println!("No match.");
            } else {
                for hit in hits {
                    let d = &hit.document;
                    let when = scratchpad_host::iso8601(d.at_ms);
                    println!(
                        "{} [{} · {} · {}] {}",
                        d.id,
                        d.kind,
                        d.session,
                        &when[..10],
                        terminal::line(&hit.snippet)
                    );
                }
            }
        }
        RecallCommand::Preview { project, message } => {
            let prompt = host.preview_new_session(&project.key()?, &message).await?;
            if global.json {
                print_json(&json!({ "injections": prompt.injections }));
            } else {
                let text = prompt.render_system_only("");
                println!("{}", if text.is_empty() { "(nothing)".to_owned() } else { terminal::block(&text) });
            }
        }
        RecallCommand::Forget { filter: args, query, all } => {
            if !(all || args.narrows() || query.is_some()) {
                bail!(
                    "name what to forget (--session, --since, --until, --query), or --all for every document of the \
                     project"
                );
            }
            let mut filter = args.filter()?;
            filter.words = query.map(|q| vec![q]);
            let removed = host.recall_forget(&filter).await?;
            if global.json {
                print_json(&json!({ "ok": true, "removed": removed }));
            } else {
                println!("forgot {removed} document(s)");
            }
        }
        RecallCommand::Export { filter } => {
            let documents = host.recall_documents(&filter.filter()?).await?;
            let mut out = std::io::stdout().lock();
            for document in documents {
                writeln!(out, "{}", serde_json::to_string(&document)?)?;
            }
        }
        RecallCommand::Import { file } => {
            let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                let opened = std::fs::File::open(&file).with_context(|| format!("opening {}", file.display()))?;
                Box::new(std::io::BufReader::new(opened))
            };
            let mut documents = Vec::new();
            for (at, line) in reader.lines().enumerate() {
                let line = line.with_context(|| format!("reading line {}", at + 1))?;
                if line.trim().is_empty() {
                    continue;
                }
                let document: IndexedDocument =
                    serde_json::from_str(&line).with_context(|| format!("line {} is not a document", at + 1))?;
                documents.push(document);
            }
            let kept = host.recall_import(documents).await?;
            if global.json {
                print_json(&json!({ "ok": true, "imported": kept }));
            } else {
                println!("imported {kept} document(s)");
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_utc_midnights_and_numbers_milliseconds() {
        assert_eq!(super::time("--since", "1970-01-01").unwrap(), 0);
        assert_eq!(super::time("--since", "2026-11-28").unwrap(), 1_795_824_000_000);
        assert_eq!(super::time("--since", "2000-03-01").unwrap(), 951_868_800_000);
        assert_eq!(super::time("--since", "12345").unwrap(), 12345);
        for bad in ["2026-13-01", "yesterday", "2026-11", "2026-11-28T10"] {
            assert!(super::time("--since", bad).unwrap_err().to_string().contains("neither a date"), "{bad}");
        }
    }
}
