//! `logging/setLevel` and `notifications/message`: the host's own `tracing` events (the
//! `scratchpad*` targets: a plugin that failed, a checkpoint that could not be written, ...)
//! forwarded to every MCP client at or above the level it asked for. A client that never
//! called `logging/setLevel` gets none, so clients that do not show logs pay nothing.
//!
//! The tracing layer is installed before any client connects, so it only queues events; a
//! task of the server sends them. Only this crate's and the host library's events are
//! forwarded: the SDK's own events about sending a notification would otherwise feed back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// An event on its way to the clients.
struct Event {
    level: LoggingLevel,
    logger: String,
    data: Value,
}

static QUEUE: OnceLock<mpsc::UnboundedSender<Event>> = OnceLock::new();
static RECEIVER: Mutex<Option<mpsc::UnboundedReceiver<Event>>> = Mutex::new(None);

/// Logging for `scratchpad mcp`: the CLI's stderr logging (as `output::init_tracing`) plus
/// the layer that queues events for the MCP clients.
pub(crate) fn init_tracing(verbose: u8) {
    let filter = crate::output::log_filter(verbose);
    let stderr = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_target(false).with_filter(filter);
    let (tx, rx) = mpsc::unbounded_channel();
    let _ = QUEUE.set(tx);
    *RECEIVER.lock().unwrap() = Some(rx);
    let clients = tracing_subscriber::filter::Targets::new()
        .with_target("scratchpad", tracing::Level::DEBUG)
        .with_target("scratchpad_host", tracing::Level::DEBUG);
    tracing_subscriber::registry().with(stderr).with(ClientLayer.with_filter(clients)).init();
}

struct ClientLayer;

impl<S: tracing::Subscriber> Layer<S> for ClientLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: tracing_subscriber::layer::Context<'_, S>) {
        let Some(queue) = QUEUE.get() else { return };
        let level = match *event.metadata().level() {
            tracing::Level::ERROR => LoggingLevel::Error,
            tracing::Level::WARN => LoggingLevel::Warning,
            tracing::Level::INFO => LoggingLevel::Info,
            _ => LoggingLevel::Debug,
        };
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let _ =
            queue.send(Event { level, logger: event.metadata().target().to_owned(), data: Value::Object(fields.0) });
    }
}

struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), json!(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), json!(format!("{value:?}")));
    }
}

/// A client that asked for logs, by connection key, with its level.
type Registry = Arc<Mutex<HashMap<u64, (Peer<RoleServer>, LoggingLevel)>>>;

/// The connected clients and the level each asked for.
#[derive(Clone, Default)]
pub(crate) struct LogClients {
    clients: Registry,
    next: Arc<AtomicU64>,
}

/// The order of severity (`LoggingLevel` is not `Ord`).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl LogClients {
    /// The clients' registry; starts the task that sends the queued events (once per process).
    pub(crate) fn start() -> Self {
        let clients = LogClients::default();
        if let Some(mut rx) = RECEIVER.lock().unwrap().take() {
            let registry = clients.clients.clone();
            tokio::spawn(async move {
                while let Some(event) = rx.recv().await {
                    let targets: Vec<Peer<RoleServer>> = registry
                        .lock()
                        .unwrap()
                        .values()
                        .filter(|(_, level)| rank(event.level) >= rank(*level))
                        .map(|(peer, _)| peer.clone())
                        .collect();
                    for peer in targets {
                        let param = LoggingMessageNotificationParam::new(event.level, event.data.clone())
                            .with_logger(event.logger.clone());
                        let _ = peer.notify_logging_message(param).await;
                    }
                }
            });
        }
        clients
    }

    /// A new connection's key.
    pub(crate) fn key(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Connection `key` (through `peer`) wants events at `level` and above.
    pub(crate) fn set_level(&self, key: u64, peer: &Peer<RoleServer>, level: LoggingLevel) {
        self.clients.lock().unwrap().insert(key, (peer.clone(), level));
    }

    /// Connection `key` is gone.
    pub(crate) fn remove(&self, key: u64) {
        self.clients.lock().unwrap().remove(&key);
    }
}
