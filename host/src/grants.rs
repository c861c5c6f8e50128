//! What a plugin may do: its powers, asked for by the plugin and granted by the operator.
//!
//! Loading a component does not hand it every hook and import. A plugin asks for the powers it
//! uses (the contract's `permissions` export, new in 0.1.1), and its configuration grants
//! powers (`grants = [...]` in its `[[plugin]]` table, `--grant` on the command line,
//! [`PluginSpec::granting`](crate::PluginSpec::granting) in code). At load:
//!
//! - a plugin that asks for a power it was not granted is refused, with one message listing
//!   every missing power and the line that would grant them;
//! - a plugin holds exactly what it asked for (a plugin that asks for less than it uses gets a
//!   denial, never the power); a 0.1.0 component, which cannot ask, holds what its
//!   configuration grants.
//!
//! Then, on every call, the host calls only the hooks a plugin's powers cover ([`Hook`]),
//! refuses a hook's answer that needs a power it lacks, and answers an import it lacks with a
//! denial: a trap of that call naming the power ([`Denied`]). Either way the call fails and
//! keeps none of its writes. The decision is made once, at load: a call pays one bit test.
//!
//! The embedded first-party components carry their grants ([`crate::embedded::grants`]);
//! every other component gets none until its configuration grants them. `docs/security.md`
//! has the table.

use std::fmt;

pub use scratchpad_powers::Power;

/// `power`'s bit in a [`Grants`].
const fn bit(power: Power) -> u16 {
    1 << power.index()
}

/// A set of powers.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Grants(u16);

impl Grants {
    /// No power at all.
    pub const NONE: Grants = Grants(0);

    /// Every power.
    pub const ALL: Grants = Grants((1 << Power::ALL.len()) - 1);

    /// The set of `powers`.
    pub const fn of(powers: &[Power]) -> Grants {
        let mut bits = 0;
        let mut i = 0;
        while i < powers.len() {
            bits |= bit(powers[i]);
            i += 1;
        }
        Grants(bits)
    }

    /// Parses power names (from a configuration file, the command line or a plugin), or says
    /// which names are unknown and which exist.
    pub fn parse<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Result<Grants, String> {
        let mut grants = Grants::NONE;
        let mut unknown = Vec::new();
        for name in names {
            match Power::parse(name.as_ref().trim()) {
                Some(power) => grants = grants.with(power),
                None => unknown.push(format!("`{}`", crate::terminal::line(name.as_ref()))),
            }
        }
        if unknown.is_empty() {
            return Ok(grants);
        }
        Err(format!("unknown power(s) {}; the powers are: {}", unknown.join(", "), Grants::ALL))
    }

    /// Whether `power` is in the set.
    #[inline]
    pub const fn has(self, power: Power) -> bool {
        self.0 & bit(power) != 0
    }

    /// The set with `power` added.
    pub const fn with(self, power: Power) -> Grants {
        Grants(self.0 | bit(power))
    }

    /// The powers of `self` that `other` lacks.
    pub const fn without(self, other: Grants) -> Grants {
        Grants(self.0 & !other.0)
    }

    /// The powers in both sets.
    pub const fn intersect(self, other: Grants) -> Grants {
        Grants(self.0 & other.0)
    }

    /// Both sets together.
    pub const fn union(self, other: Grants) -> Grants {
        Grants(self.0 | other.0)
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The powers in the set, in the contract's order.
    pub fn iter(self) -> impl Iterator<Item = Power> {
        Power::ALL.into_iter().filter(move |power| self.has(*power))
    }

    /// The names of the powers, in the contract's order.
    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Power::name).collect()
    }

    /// The `grants = [...]` line of a `[[plugin]]` table that grants exactly this set.
    pub fn toml_line(self) -> String {
        let names: Vec<String> = self.iter().map(|power| format!("\"{power}\"")).collect();
        format!("grants = [{}]", names.join(", "))
    }

    /// Whether the host calls `hook` of a plugin holding these powers, for a tool call of one
    /// of its own tools (`own_tool`) or of another's (the hooks of other kinds ignore it).
    #[inline]
    pub(crate) const fn calls(self, hook: Hook, own_tool: bool) -> bool {
        match hook {
            Hook::BeforeSessionCreate => self.has(Power::Guidance) || self.has(Power::Storage),
            Hook::BeforeQuery => self.has(Power::Inject),
            Hook::BeforeCompaction => self.has(Power::CompactionWarnings),
            Hook::BeforeToolCall => {
                self.has(Power::ReadToolTraffic)
                    || (own_tool && (self.has(Power::RewriteToolCalls) || self.has(Power::BlockToolCalls)))
            }
            Hook::AfterToolResult => {
                self.has(Power::ReadToolTraffic) || (own_tool && self.has(Power::ReplaceToolResults))
            }
        }
    }

    /// A denial when the set lacks `power`.
    #[inline]
    pub(crate) fn require(self, power: Power) -> Result<(), Denied> {
        if self.has(power) { Ok(()) } else { Err(Denied(power)) }
    }
}

impl fmt::Display for Grants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&self.names().join(", "))
    }
}

impl fmt::Debug for Grants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Power::name)).finish()
    }
}

impl FromIterator<Power> for Grants {
    fn from_iter<I: IntoIterator<Item = Power>>(powers: I) -> Self {
        powers.into_iter().fold(Grants::NONE, Grants::with)
    }
}

/// The hooks whose calls depend on a plugin's powers. The others (`after-response`,
/// `after-compaction`, `list-tools`, `call-tool`, `load`) change nothing the agent does or sees
/// and are always called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hook {
    BeforeSessionCreate,
    BeforeQuery,
    BeforeToolCall,
    AfterToolResult,
    BeforeCompaction,
}

/// A plugin used a power it does not hold: an import it did not ask for or was not granted, or
/// a hook's answer that needs one. The call traps with it and keeps nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "denied the power `{0}`, which it does not hold (a plugin holds the powers it asks for in its `permissions` \
     export once its configuration grants them)"
)]
pub(crate) struct Denied(pub Power);

/// What a plugin holds once loaded: checks what it asked for (`requested`, `None` for a 0.1.0
/// component that cannot ask) against what its configuration `granted`, or says what is
/// missing and how to grant it.
pub(crate) fn settle(requested: Option<Grants>, granted: Grants) -> Result<Grants, String> {
    let Some(requested) = requested else { return Ok(granted) };
    let missing = requested.without(granted);
    if missing.is_empty() {
        return Ok(requested);
    }
    let names: Vec<String> = missing.iter().map(|power| format!("`{power}`")).collect();
    Err(format!(
        "it asks for {} power(s) it was not granted: {}. Grant them in its [[plugin]] table with `{}` (on the \
         command line: `--grant NAME={}`), after reading what each allows in docs/security.md",
        missing.iter().count(),
        names.join(", "),
        granted.union(requested).toml_line(),
        granted.union(requested).names().join(","),
    ))
}

#[cfg(test)]
mod tests {
    use super::{Grants, Hook, Power, settle};

    #[test]
    fn unknown_names_are_listed_and_every_power_has_its_own_bit() {
        assert_eq!(Grants::parse(["inject", "storage"]).unwrap(), Grants::of(&[Power::Inject, Power::Storage]));
        let error = Grants::parse(["inject", "network", "root"]).unwrap_err();
        assert!(error.contains("`network`, `root`") && error.contains("rewrite-tool-calls"), "{error}");
        assert_eq!(Grants::ALL.iter().count(), Power::ALL.len());
    }

    #[test]
    fn a_plugin_holds_what_it_asks_for_once_granted() {
        let asked = Grants::of(&[Power::Inject, Power::Storage]);
        assert_eq!(settle(Some(asked), Grants::ALL), Ok(asked), "never more than it asked for");
        assert_eq!(settle(None, asked), Ok(asked), "a 0.1.0 component holds what it was granted");
        let error = settle(Some(Grants::of(&[Power::RewriteToolCalls, Power::Inject])), Grants::of(&[Power::Inject]))
            .unwrap_err();
        assert!(error.contains("1 power(s) it was not granted: `rewrite-tool-calls`"), "{error}");
        assert!(error.contains(r#"grants = ["inject", "rewrite-tool-calls"]"#), "{error}");
    }

    #[test]
    fn tool_traffic_of_others_needs_its_own_power() {
        let rewrite = Grants::of(&[Power::RewriteToolCalls]);
        assert!(rewrite.calls(Hook::BeforeToolCall, true));
        assert!(!rewrite.calls(Hook::BeforeToolCall, false));
        assert!(!rewrite.calls(Hook::AfterToolResult, true));
        let read = Grants::of(&[Power::ReadToolTraffic]);
        assert!(read.calls(Hook::BeforeToolCall, false) && read.calls(Hook::AfterToolResult, false));
        assert!(!Grants::NONE.calls(Hook::BeforeQuery, false));
        assert!(Grants::of(&[Power::Storage]).calls(Hook::BeforeSessionCreate, false));
    }
}
