//! Rolling checkpoints written by the MCP client's model: the host's [`Summarizer`] over
//! `sampling/createMessage`. Only the client has the conversation and a model, so when
//! context-guard asks for a checkpoint of session S, the server asks the newest connected
//! client of S that declared the `sampling` capability for the context-pressure policy's structured summary, as
//! a JSON object. No such client, a declined request or an answer that is not that object is
//! the summarizer failing: `Error::Checkpoint`, with the turn's hooks kept.

use std::sync::{Arc, Mutex};

use anyhow::{Context, anyhow};
use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
use rmcp::{Peer, RoleServer};
use scratchpad_host::{Summarizer, Summary, SummaryFuture, SummaryRequest};

/// What the client's model is asked to write.
const SYSTEM_PROMPT: &str = "You write checkpoints of the conversation you are in, so that it can continue after \
its context is compacted. Answer with one JSON object and nothing else: {\"summary\": string (the conversation so \
far), \"topics\": [string], \"keyDecisions\": [string], \"openQuestions\": [string]}.";
/// The summary's size budget in tokens.
const MAX_TOKENS: u32 = 2000;

/// A client that can sample: its connection key, its session, its peer.
type Client = (u64, String, Peer<RoleServer>);

/// The connected clients that declared sampling, by session, oldest first.
#[derive(Clone, Default)]
pub(crate) struct SamplingClients {
    clients: Arc<Mutex<Vec<Client>>>,
}

impl SamplingClients {
    /// Connection `key` of `session` can sample.
    pub(crate) fn register(&self, key: u64, session: &str, peer: Peer<RoleServer>) {
        self.clients.lock().unwrap().push((key, session.to_owned(), peer));
    }

    /// Connection `key` is gone.
    pub(crate) fn remove(&self, key: u64) {
        self.clients.lock().unwrap().retain(|(k, _, _)| *k != key);
    }

    fn newest(&self, session: &str) -> Option<Peer<RoleServer>> {
        self.clients.lock().unwrap().iter().rev().find(|(_, s, _)| s == session).map(|(_, _, peer)| peer.clone())
    }
}

/// The host's summarizer: asks a client of the session by sampling.
pub(crate) struct SamplingSummarizer {
    pub(crate) clients: SamplingClients,
}

impl Summarizer for SamplingSummarizer {
    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            let peer = self.clients.newest(&request.session_id).ok_or_else(|| {
                anyhow!(
                    "no client of session `{}` declared the sampling capability to write it with",
                    request.session_id
                )
            })?;
            let ask = format!(
                "Write the checkpoint of this conversation now (session `{}`, {} user messages, {} tokens; trigger: \
                 {}).",
                request.session_id,
                request.message_count,
                request.tokens,
                serde_json::to_string(&request.trigger).unwrap_or_default()
            );
            let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(ask)], MAX_TOKENS)
                .with_system_prompt(SYSTEM_PROMPT);
            let answer = peer.create_message(params).await.map_err(|e| anyhow!("the client declined sampling: {e}"))?;
            let text: String = answer
                .message
                .content
                .into_vec()
                .iter()
                .filter_map(|block| block.as_text().map(|t| t.text.clone()))
                .collect();
            parse(&text)
        })
    }
}

/// The summary in the model's answer: the JSON object, tolerating a Markdown code fence
/// around it (models add one).
fn parse(text: &str) -> anyhow::Result<Summary> {
    let start = text.find('{').ok_or_else(|| anyhow!("the model's answer has no JSON object"))?;
    let end = text.rfind('}').ok_or_else(|| anyhow!("the model's answer has no JSON object"))?;
    serde_json::from_str(&text[start..=end]).context(
        "the model's answer is not {\"summary\": str, \"topics\": [str], \"keyDecisions\": [str], \"openQuestions\": [str]}",
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_fenced_json_answer_is_read_and_prose_is_refused() {
        let fenced =
            "```json\n{\"summary\": \"s\", \"topics\": [\"t\"], \"keyDecisions\": [], \"openQuestions\": []}\n```";
        assert_eq!(super::parse(fenced).unwrap().topics, ["t"]);
        assert!(super::parse("I cannot do that").is_err());
    }
}
