//! Rolling checkpoints written by the sidecar's client: the host's [`Summarizer`] as a
//! server→client JSON-RPC request, `summarize`, the way LSP servers send requests to their
//! clients. Only the embedding runtime has the conversation and a model, so it answers with
//! the context-pressure policy's structured summary; an error answer (or no client) is the summarizer failing,
//! which the host reports as `Error::Checkpoint` with the turn's hooks kept.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, anyhow};
use scratchpad_host::{Summarizer, Summary, SummaryFuture, SummaryRequest};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// How long the server waits for the client's summary: a model call, so minutes, but never
/// forever (a client that does not answer must not hold the turn).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

type Answer = Result<Value, Value>;
/// The requests waiting for an answer, by id; `None` once the client's input closed.
type Pending = Arc<Mutex<Option<HashMap<String, oneshot::Sender<Answer>>>>>;

/// The requests this server sent its client and is waiting on, by id.
#[derive(Clone)]
pub(crate) struct ClientRequests {
    /// Taken at close: the writer ends when every sender is gone, and the host (which holds
    /// the summarizer, and so this) lives until the process ends.
    outgoing: Arc<Mutex<Option<mpsc::UnboundedSender<Value>>>>,
    pending: Pending,
    next: Arc<AtomicU64>,
}

impl ClientRequests {
    pub(crate) fn new(outgoing: mpsc::UnboundedSender<Value>) -> Self {
        ClientRequests {
            outgoing: Arc::new(Mutex::new(Some(outgoing))),
            pending: Arc::new(Mutex::new(Some(HashMap::new()))),
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Sends `method` to the client and waits for its answer: `Ok(result)` or `Err(error)`.
    async fn request(&self, method: &str, params: Value) -> anyhow::Result<Answer> {
        // String ids in their own namespace, so they never collide with the client's ids.
        let id = format!("server-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        match self.pending.lock().unwrap().as_mut() {
            Some(pending) => pending.insert(id.clone(), tx),
            None => anyhow::bail!("the client closed its input"),
        };
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let sent = self.outgoing.lock().unwrap().as_ref().is_some_and(|out| out.send(request).is_ok());
        if !sent {
            self.forget(&id);
            anyhow::bail!("the client's output is closed");
        }
        let answer = tokio::time::timeout(ANSWER_TIMEOUT, rx).await;
        self.forget(&id);
        match answer {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(anyhow!("the client closed its input before answering `{method}`")),
            Err(_) => Err(anyhow!("the client did not answer `{method}` within {} s", ANSWER_TIMEOUT.as_secs())),
        }
    }

    fn forget(&self, id: &str) {
        if let Some(pending) = self.pending.lock().unwrap().as_mut() {
            pending.remove(id);
        }
    }

    /// Routes a response line from the client to the request waiting on its id; a response
    /// to nothing we asked is dropped with a warning (there is nobody to tell).
    pub(crate) fn answer(&self, response: Value) {
        let id = response.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
        let waiting = self.pending.lock().unwrap().as_mut().and_then(|pending| pending.remove(&id));
        let Some(waiting) = waiting else {
            tracing::warn!("a response to no request of the server (id {:?}) was ignored", response.get("id"));
            return;
        };
        let answer = match (response.get("result"), response.get("error")) {
            (Some(result), None) => Ok(result.clone()),
            (_, Some(error)) => Err(error.clone()),
            (None, None) => Err(json!({ "message": "the response has neither result nor error" })),
        };
        let _ = waiting.send(answer);
    }

    /// The client's input closed: every waiting request fails now, and later ones at once.
    pub(crate) fn close(&self) {
        self.pending.lock().unwrap().take();
        self.outgoing.lock().unwrap().take();
    }
}

/// The host's summarizer: asks the client with `summarize`.
pub(crate) struct ClientSummarizer {
    client: ClientRequests,
}

impl ClientSummarizer {
    pub(crate) fn new(client: ClientRequests) -> Self {
        ClientSummarizer { client }
    }
}

impl Summarizer for ClientSummarizer {
    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            let params = serde_json::to_value(request).context("encoding the summary request")?;
            match self.client.request("summarize", params).await? {
                Ok(result) => serde_json::from_value::<Summary>(result).context(
                    "the client's summary is not {\"summary\": str, \"topics\": [str], \"keyDecisions\": [str], \
                     \"openQuestions\": [str]}",
                ),
                Err(error) => {
                    let message = error.get("message").and_then(Value::as_str).unwrap_or("no message");
                    Err(anyhow!("the client declined `summarize`: {message}"))
                }
            }
        })
    }
}
