//! The composed prompt of a turn: every plugin's injections by placement, and a renderer that
//! puts them around the runtime's system prompt and the user's untouched message.

use serde::{Deserialize, Serialize};

use crate::names::ToolNames;
use crate::types::{Injection, Placement};

/// What the plugins contribute to one turn's prompt.
///
/// Injections are ordered: the session's standing guidance (from `before-session-create`)
/// first, then the turn's injections, each in plugin order. The user's message is not part of
/// it and is never changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// Every injection, in order.
    pub injections: Vec<Injection>,
}

/// A prompt rendered to text, as the model would receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RenderedPrompt {
    /// The system prompt: prepend-system injections, the runtime's system prompt,
    /// append-system injections.
    pub system: String,
    /// The user turn: prepend-context injections, the message, append-context injections.
    pub user: String,
}

impl Prompt {
    /// The injections of one placement, in order.
    pub fn at(&self, placement: Placement) -> impl Iterator<Item = &Injection> {
        self.injections.iter().filter(move |i| i.placement == placement)
    }

    /// The texts of one placement joined by blank lines (empty when there are none).
    pub fn text(&self, placement: Placement) -> String {
        join(self.at(placement).map(|i| i.text.as_str()))
    }

    /// The session's standing `guidance` as a prompt of its own.
    pub fn guidance(guidance: &[Injection]) -> Prompt {
        Prompt { injections: guidance.to_vec() }
    }

    /// This prompt without the injections `given` holds: for a runtime that has the session's
    /// standing guidance already (it keeps it in its history, or as an MCP server's
    /// instructions), what is new in this turn.
    pub fn besides(&self, given: &[Injection]) -> Prompt {
        Prompt { injections: self.injections.iter().filter(|i| !given.contains(i)).cloned().collect() }
    }

    /// This prompt as a model offered the tools under `names` reads it: every mention of a
    /// tool in a text names it as the model sees it ([`ToolNames::rewrite`]).
    pub fn naming(&self, names: &ToolNames) -> Prompt {
        let injections =
            self.injections.iter().map(|i| Injection { text: names.rewrite(&i.text), ..i.clone() }).collect();
        Prompt { injections }
    }

    /// Renders the prompt around the runtime's `system_prompt` and the user's `message`.
    /// Parts are separated by a blank line; empty parts are left out.
    pub fn render(&self, system_prompt: &str, message: &str) -> RenderedPrompt {
        let system = join(
            self.at(Placement::PrependSystem)
                .map(|i| i.text.as_str())
                .chain(std::iter::once(system_prompt))
                .chain(self.at(Placement::AppendSystem).map(|i| i.text.as_str())),
        );
        let user = join(
            self.at(Placement::PrependContext)
                .map(|i| i.text.as_str())
                .chain(std::iter::once(message))
                .chain(self.at(Placement::AppendContext).map(|i| i.text.as_str())),
        );
        RenderedPrompt { system, user }
    }

    /// Renders the prompt for a model call with no user message to put the context around:
    /// the system prompt as [`Prompt::render`] makes it, then the context placements.
    pub fn render_system_only(&self, system_prompt: &str) -> String {
        let RenderedPrompt { system, user } = self.render(system_prompt, "");
        join([system.as_str(), user.as_str()].into_iter())
    }
}

fn join<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    parts.filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inj(placement: Placement, text: &str) -> Injection {
        Injection { plugin: "p".into(), placement, text: text.into() }
    }

    #[test]
    fn rendering_puts_each_placement_around_the_untouched_message() {
        let prompt = Prompt {
            injections: vec![
                inj(Placement::AppendContext, "after"),
                inj(Placement::PrependContext, "[block]"),
                inj(Placement::AppendSystem, "guidance"),
                inj(Placement::PrependSystem, "first"),
                inj(Placement::PrependContext, "[second block]"),
            ],
        };
        let rendered = prompt.render("You are helpful.", "continue with step 2");
        assert_eq!(rendered.system, "first\n\nYou are helpful.\n\nguidance");
        assert_eq!(rendered.user, "[block]\n\n[second block]\n\ncontinue with step 2\n\nafter");
    }

    #[test]
    fn naming_renames_tools_in_every_text_and_keeps_placements() {
        let prompt = Prompt { injections: vec![inj(Placement::AppendSystem, "Use session.scratchpad.")] };
        let names = ToolNames::new(["session.scratchpad"], "").unwrap();
        let named = prompt.naming(&names);
        assert_eq!(named.text(Placement::AppendSystem), "Use session_scratchpad.");
        assert_eq!(named.injections[0].placement, Placement::AppendSystem);
    }

    #[test]
    fn without_a_message_the_system_prompt_takes_every_placement_in_order() {
        let prompt = Prompt {
            injections: vec![
                inj(Placement::AppendContext, "after"),
                inj(Placement::PrependContext, "[block]"),
                inj(Placement::AppendSystem, "guidance"),
            ],
        };
        assert_eq!(prompt.render_system_only("You are helpful."), "You are helpful.\n\nguidance\n\n[block]\n\nafter");
        assert_eq!(Prompt::default().render_system_only(""), "");
    }

    #[test]
    fn besides_keeps_what_is_new_in_the_turn_in_prompt_order() {
        let guidance = vec![inj(Placement::AppendSystem, "guidance")];
        let prompt = Prompt {
            injections: vec![
                guidance[0].clone(),
                inj(Placement::AppendContext, "after"),
                inj(Placement::PrependContext, "[block]"),
            ],
        };
        assert_eq!(prompt.besides(&guidance).render_system_only(""), "[block]\n\nafter");
        assert_eq!(Prompt::guidance(&guidance).render_system_only(""), "guidance");
    }

    #[test]
    fn an_empty_prompt_renders_the_message_alone() {
        let rendered = Prompt::default().render("", "hi");
        assert_eq!(rendered, RenderedPrompt { system: String::new(), user: "hi".into() });
    }
}
