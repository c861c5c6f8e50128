//! `resources/subscribe` on `scratchpad://session/S`: `notifications/resources/updated` when
//! the scratchpad changes, whoever changed it — a tool call of this client, another client of
//! this server, or another process on the same database (a `scratchpad call`, a sidecar).
//! Another process's commit reaches this one only through the database, so the subscription
//! polls the session's last-write time (one small indexed read) and, when it moved, renders
//! the scratchpad and notifies only if the text differs from what the client last heard of.

use std::time::Duration;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use scratchpad_host::Host;

/// How often a subscription looks at the database.
const POLL: Duration = Duration::from_millis(200);

/// Starts subscriptions.
#[derive(Clone)]
pub(crate) struct Watcher {
    host: Host,
}

impl Watcher {
    pub(crate) fn new(host: Host) -> Self {
        Watcher { host }
    }

    /// Notifies `peer` of changes to `session`'s scratchpad (`uri`) until the returned task is
    /// aborted or the client goes away.
    pub(crate) fn subscribe(&self, session: &str, uri: String, peer: Peer<RoleServer>) -> tokio::task::AbortHandle {
        let (host, session) = (self.host.clone(), session.to_owned());
        tokio::spawn(async move {
            let mut written = host.session(&session).await.map(|s| s.updated_at).ok();
            let mut text = host.render_scratchpad(&session).await.ok();
            loop {
                tokio::time::sleep(POLL).await;
                let now = host.session(&session).await.map(|s| s.updated_at).ok();
                if now == written {
                    continue;
                }
                written = now;
                let rendered = host.render_scratchpad(&session).await.ok();
                if rendered == text {
                    continue;
                }
                text = rendered;
                let param = ResourceUpdatedNotificationParam::new(uri.clone());
                if peer.notify_resource_updated(param).await.is_err() {
                    return; // the client is gone
                }
            }
        })
        .abort_handle()
    }
}
