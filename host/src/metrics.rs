//! What an operator scrapes from a host: per plugin and hook, the calls, their latency and
//! their failures by kind; per plugin, tool errors by kind, storage-quota refusals and the
//! bytes of observations it offloaded; per turn, the bytes injected into the prompt; and the
//! database: operations begun from memory or with a trip, commits landed or lost to a
//! concurrent writer (each loss re-runs the operation); and recall, per plugin: reads of the
//! project's index, the documents they answered, documents kept, and the bytes injected by a
//! `before-query` that read the index.
//!
//! Kept in memory for the life of the [`Host`](crate::Host) (a process's counters, as
//! Prometheus expects: they restart from zero with the process) and rendered in the Prometheus
//! text format by [`Metrics::render`]. Labels hold only plugin names, hook and tool names and
//! fixed kinds, never a session id, an argument or any text a session holds: their number is
//! bounded by the plugins the host loaded. Every name is in `docs/metrics.md`.
//!
//! Recording takes one uncontended lock per call (tens of nanoseconds beside a call's
//! microseconds). Injected text is measured in bytes, not tokens: tokenizing every prompt
//! for a metric would cost more than the hooks that made it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use crate::error::Error;

/// Upper bounds of the call-latency buckets, in seconds.
const LATENCY_BOUNDS: &[f64] =
    &[0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0];
/// Upper bounds of the injected-bytes-per-turn buckets.
const INJECTED_BOUNDS: &[f64] = &[0.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0];

/// The host's counters and histograms (see the module docs).
#[derive(Default)]
pub struct Metrics {
    registry: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    /// plugin → hook → latency of every call, failed or not (nested so that a call looks its
    /// entry up by `&str` and allocates only the first time).
    calls: BTreeMap<String, BTreeMap<String, Histogram>>,
    /// (plugin, hook, kind) → calls that failed.
    failures: BTreeMap<(String, String, &'static str), u64>,
    /// (plugin, tool, kind) → tool calls answered with a tool error.
    tool_errors: BTreeMap<(String, String, &'static str), u64>,
    /// plugin → writes the storage quota refused.
    quota_refusals: BTreeMap<String, u64>,
    /// plugin → bytes of observations its committed calls stored.
    offloaded: BTreeMap<String, u64>,
    /// Bytes injected per `before-query` turn.
    injected: Option<Histogram>,
    /// served ("memory" or "database") → operations begun.
    begins: BTreeMap<&'static str, u64>,
    /// outcome ("done" or "conflict") → commits tried.
    commits: BTreeMap<&'static str, u64>,
    /// plugin → (index reads, documents they answered, documents kept, bytes injected).
    recall: BTreeMap<String, [u64; 4]>,
}

/// A cumulative histogram with fixed bucket bounds.
struct Histogram {
    bounds: &'static [f64],
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Histogram { bounds, counts: vec![0; bounds.len()], sum: 0.0, count: 0 }
    }

    fn observe(&mut self, value: f64) {
        if let Some(i) = self.bounds.iter().position(|bound| value <= *bound) {
            self.counts[i] += 1;
        }
        self.sum += value;
        self.count += 1;
    }

    /// The `_bucket`, `_sum` and `_count` lines of `name` with `labels` (already rendered,
    /// possibly empty).
    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (bound, count) in self.bounds.iter().zip(&self.counts) {
            cumulative += count;
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}");
        }
        let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}", self.count);
        let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

impl Metrics {
    fn with<T>(&self, f: impl FnOnce(&mut Registry) -> T) -> T {
        // A panic while recording leaves counters, not invariants: keep counting.
        let mut registry = self.registry.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut registry)
    }

    /// One call of `plugin`'s `hook` that took `elapsed` and ended in `outcome`, with the
    /// storage writes the quota refused during it.
    pub(crate) fn call<T>(&self, plugin: &str, hook: &str, elapsed: Duration, outcome: &Result<T, Error>) {
        self.with(|r| {
            if !r.calls.contains_key(plugin) {
                r.calls.insert(plugin.to_owned(), BTreeMap::new());
            }
            let hooks = r.calls.get_mut(plugin).expect("inserted above");
            if !hooks.contains_key(hook) {
                hooks.insert(hook.to_owned(), Histogram::new(LATENCY_BOUNDS));
            }
            hooks.get_mut(hook).expect("inserted above").observe(elapsed.as_secs_f64());
            if let Err(Error::Plugin { failure, .. }) = outcome {
                *r.failures.entry((plugin.to_owned(), hook.to_owned(), failure.kind().as_str())).or_default() += 1;
            }
        });
    }

    /// `refused` writes of `plugin` the storage quota turned down in one call.
    pub(crate) fn quota_refusals(&self, plugin: &str, refused: u32) {
        if refused > 0 {
            self.with(|r| *r.quota_refusals.entry(plugin.to_owned()).or_default() += u64::from(refused));
        }
    }

    /// `bytes` of observations a committed call of `plugin` stored.
    pub(crate) fn offloaded(&self, plugin: &str, bytes: u64) {
        if bytes > 0 {
            self.with(|r| *r.offloaded.entry(plugin.to_owned()).or_default() += bytes);
        }
    }

    /// A tool call `plugin`'s `tool` answered with an error of `kind`.
    pub(crate) fn tool_error(&self, plugin: &str, tool: &str, kind: &'static str) {
        self.with(|r| *r.tool_errors.entry((plugin.to_owned(), tool.to_owned(), kind)).or_default() += 1);
    }

    /// A turn's prompt got `bytes` of injected text.
    pub(crate) fn injected(&self, bytes: usize) {
        self.with(|r| r.injected.get_or_insert_with(|| Histogram::new(INJECTED_BOUNDS)).observe(bytes as f64));
    }

    /// `reads` of the index by one call of `plugin`, answering `answered` documents, and the
    /// `injected` bytes of a `before-query` that read it.
    pub(crate) fn recall_reads(&self, plugin: &str, reads: u32, answered: u32, injected: usize) {
        if reads > 0 {
            self.with(|r| {
                let counts = r.recall.entry(plugin.to_owned()).or_default();
                counts[0] += u64::from(reads);
                counts[1] += u64::from(answered);
                counts[3] += injected as u64;
            });
        }
    }

    /// `kept` documents a committed call of `plugin` put in its project's index.
    pub(crate) fn recall_kept(&self, plugin: &str, kept: u64) {
        if kept > 0 {
            self.with(|r| r.recall.entry(plugin.to_owned()).or_default()[2] += kept);
        }
    }

    /// An operation began, from memory (`hot`) or with a database trip.
    pub(crate) fn begin(&self, hot: bool) {
        self.with(|r| *r.begins.entry(if hot { "memory" } else { "database" }).or_default() += 1);
    }

    /// A commit was tried; `landed` is false when a concurrent writer got there first.
    pub(crate) fn commit(&self, landed: bool) {
        self.with(|r| *r.commits.entry(if landed { "done" } else { "conflict" }).or_default() += 1);
    }

    /// Every metric in the Prometheus text exposition format (version 0.0.4), each with its
    /// `# HELP` and `# TYPE` even before its first sample.
    pub fn render(&self) -> String {
        self.with(|r| {
            let mut out = String::new();
            header(&mut out, "scratchpad_plugin_call_duration_seconds", "histogram", "Calls into plugins by hook or tool, and how long each took (failed calls too).");
            for (plugin, hook, histogram) in r.calls.iter().flat_map(|(p, hooks)| hooks.iter().map(move |(h, v)| (p, h, v))) {
                histogram.render(&mut out, "scratchpad_plugin_call_duration_seconds", &labels(&[("plugin", plugin), ("hook", hook)]));
            }
            header(&mut out, "scratchpad_plugin_failures_total", "counter", "Plugin calls that failed, by kind: timeout, memory, output_cap, stack_overflow, exited, trap, contract, denied.");
            for ((plugin, hook, kind), n) in &r.failures {
                counter(&mut out, "scratchpad_plugin_failures_total", &[("plugin", plugin), ("hook", hook), ("kind", kind)], *n);
            }
            header(&mut out, "scratchpad_tool_errors_total", "counter", "Tool calls a plugin answered with a tool error, by kind (rejected is a refusal such as over budget).");
            for ((plugin, tool, kind), n) in &r.tool_errors {
                counter(&mut out, "scratchpad_tool_errors_total", &[("plugin", plugin), ("tool", tool), ("kind", kind)], *n);
            }
            header(&mut out, "scratchpad_storage_quota_refusals_total", "counter", "Storage writes a plugin's storage quota refused.");
            for (plugin, n) in &r.quota_refusals {
                counter(&mut out, "scratchpad_storage_quota_refusals_total", &[("plugin", plugin)], *n);
            }
            header(&mut out, "scratchpad_offloaded_bytes_total", "counter", "Bytes of observations a plugin's committed calls stored.");
            for (plugin, n) in &r.offloaded {
                counter(&mut out, "scratchpad_offloaded_bytes_total", &[("plugin", plugin)], *n);
            }
            header(&mut out, "scratchpad_injected_bytes", "histogram", "Bytes of text the plugins injected into one turn's prompt (before-query, standing guidance included).");
            if let Some(histogram) = &r.injected {
                histogram.render(&mut out, "scratchpad_injected_bytes", "");
            }
            header(&mut out, "scratchpad_storage_begins_total", "counter", "Operations begun, served from memory (a hot session) or with a database trip.");
            for (served, n) in &r.begins {
                counter(&mut out, "scratchpad_storage_begins_total", &[("served", served)], *n);
            }
            header(&mut out, "scratchpad_storage_commits_total", "counter", "Commits tried: done, or conflict (another process committed first; the operation is re-run).");
            for (outcome, n) in &r.commits {
                counter(&mut out, "scratchpad_storage_commits_total", &[("outcome", outcome)], *n);
            }
            let recall = [
                ("scratchpad_recall_queries_total", "Reads of a project's search index (search and recent) by a plugin."),
                ("scratchpad_recall_hits_total", "Documents those reads answered."),
                ("scratchpad_recall_documents_kept_total", "Documents a plugin's committed calls put in a project's index."),
                ("scratchpad_recall_injected_bytes_total", "Bytes injected by before-query calls that read the index (recall's share of prompts)."),
            ];
            for (at, (name, help)) in recall.iter().enumerate() {
                header(&mut out, name, "counter", help);
                for (plugin, counts) in &r.recall {
                    counter(&mut out, name, &[("plugin", plugin)], counts[at]);
                }
            }
            out
        })
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn counter(out: &mut String, name: &str, pairs: &[(&str, &str)], value: u64) {
    let _ = writeln!(out, "{name}{{{}}} {value}", labels(pairs));
}

/// `a="x",b="y"`, each value escaped as the text format requires (backslash, quote, newline).
fn labels(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{name}=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::PluginFailure;

    fn failed(failure: PluginFailure) -> Result<(), Error> {
        Err(Error::Plugin { plugin: "p".into(), hook: "h".into(), failure })
    }

    #[test]
    fn a_call_lands_in_its_bucket_and_a_failure_is_counted_by_kind() {
        let metrics = Metrics::default();
        metrics.call("p", "before-query", Duration::from_micros(300), &Ok::<(), Error>(()));
        metrics.call(
            "p",
            "before-query",
            Duration::from_millis(200),
            &failed(PluginFailure::Timeout { limit_ms: 200 }),
        );
        let text = metrics.render();
        let line = |prefix: &str| {
            text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("{prefix}:\n{text}")).to_owned()
        };
        assert!(
            line("scratchpad_plugin_call_duration_seconds_bucket{plugin=\"p\",hook=\"before-query\",le=\"0.00025\"}")
                .ends_with(" 0")
        );
        assert!(
            line("scratchpad_plugin_call_duration_seconds_bucket{plugin=\"p\",hook=\"before-query\",le=\"0.0005\"}")
                .ends_with(" 1")
        );
        assert!(
            line("scratchpad_plugin_call_duration_seconds_bucket{plugin=\"p\",hook=\"before-query\",le=\"0.25\"}")
                .ends_with(" 2")
        );
        assert!(
            line("scratchpad_plugin_call_duration_seconds_count{plugin=\"p\",hook=\"before-query\"}").ends_with(" 2")
        );
        assert_eq!(
            line("scratchpad_plugin_failures_total{"),
            "scratchpad_plugin_failures_total{plugin=\"p\",hook=\"before-query\",kind=\"timeout\"} 1"
        );
    }

    #[test]
    fn label_values_are_escaped_and_every_metric_has_its_type_before_any_sample() {
        let metrics = Metrics::default();
        metrics.tool_error("p", "odd\"name\\\n", "rejected");
        let text = metrics.render();
        assert!(
            text.contains(r#"scratchpad_tool_errors_total{plugin="p",tool="odd\"name\\\n",kind="rejected"} 1"#),
            "{text}"
        );
        for name in
            ["scratchpad_plugin_failures_total", "scratchpad_storage_quota_refusals_total", "scratchpad_injected_bytes"]
        {
            assert!(text.contains(&format!("# TYPE {name} ")), "{name} missing:\n{text}");
        }
    }
}
