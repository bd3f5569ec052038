//! Cache coherence between nodes (issue #17, part 2). Every node keeps the channels, prices and
//! groups, settings and API keys in memory; a change made on one node is applied there at once
//! and published on Redis (`{prefix}changes`), and every other node applies it when the message
//! arrives, within milliseconds. Without Redis there is one node and nothing to publish.
//!
//! The periodic reload of the maintenance loop (`SYNC_FREQUENCY`) stays as the safety net, and a
//! node that (re)subscribes reloads everything, so a message lost while it was disconnected
//! costs at most one reload. Balances need none of this: with Redis they live there.

use crate::AppState;
use actix_web::web;
use std::time::Duration;

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A channel was added, edited, enabled, disabled or deleted.
    Channels,
    /// A price, a model owner or a user group changed (they reload together).
    Pricing,
    /// A setting changed.
    Settings,
    /// An API key was edited or deleted (its id and key digest).
    Token { id: i64, digest: String },
    /// A user changed (status, group, role, quota): every key of theirs is read again.
    User { id: i64 },
}

impl Change {
    fn encode(&self) -> String {
        match self {
            Change::Channels => "channels".into(),
            Change::Pricing => "pricing".into(),
            Change::Settings => "settings".into(),
            Change::Token { id, digest } => format!("token {id} {digest}"),
            Change::User { id } => format!("user {id}"),
        }
    }

    fn decode(s: &str) -> Option<Change> {
        let mut w = s.split(' ');
        let c = match w.next()? {
            "channels" => Change::Channels,
            "pricing" => Change::Pricing,
            "settings" => Change::Settings,
            "token" => Change::Token {
                id: w.next()?.parse().ok()?,
                digest: w.next()?.to_owned(),
            },
            "user" => Change::User {
                id: w.next()?.parse().ok()?,
            },
            _ => return None,
        };
        w.next().is_none().then_some(c)
    }
}

/// A message: the sending node, then the change (`{node} {change}`).
fn message(node: &str, change: &Change) -> String {
    format!("{node} {}", change.encode())
}

fn parse(msg: &str) -> Option<(&str, Change)> {
    let (node, rest) = msg.split_once(' ')?;
    Some((node, Change::decode(rest)?))
}

/// Tells the other nodes about a change this node has applied (nothing without Redis). The
/// publish runs in the background: a Redis that does not answer delays nobody, and the
/// periodic reload still carries the change.
pub fn publish(state: &AppState, change: Change) {
    publish_via(state.relay.shared(), change);
}

/// [`publish`] with the node's Redis connection (`None`: a single node, nothing to tell).
pub fn publish_via(shared: Option<&switchboard_ledger::shared::Shared>, change: Change) {
    let Some(sh) = shared.cloned() else {
        return;
    };
    let msg = message(sh.node(), &change);
    // A tokio task, not a local one: the changes may be made from any task of the runtime.
    tokio::spawn(async move {
        if let Err(e) = sh.publish_change(&msg).await {
            tracing::warn!("publishing a change to the other nodes failed: {e}");
        }
    });
}

/// Applies another node's change to this node's memory.
pub async fn apply(state: &AppState, change: &Change) {
    let done = match change {
        Change::Channels => state.relay.reload_channels(state).await,
        Change::Pricing => state.relay.reload_pricing(state).await,
        Change::Settings => state.reload_settings().await,
        Change::Token { id, digest } => {
            state.relay.forget_token_here(*id, digest);
            Ok(())
        }
        Change::User { id } => {
            state.relay.forget_user_here(*id);
            Ok(())
        }
    };
    if let Err(e) = done {
        tracing::warn!(?change, "applying another node's change failed: {e}");
    }
}

/// Reloads everything a message may have carried (after (re)subscribing).
async fn resync(state: &AppState) {
    for c in [Change::Settings, Change::Pricing, Change::Channels] {
        apply(state, &c).await;
    }
    state.relay.forget_all_tokens_here();
}

/// Subscribes to the other nodes' changes for as long as the actix system runs (nothing
/// without Redis), reconnecting with a short back-off.
pub fn spawn_subscriber(state: web::Data<AppState>) {
    let Some(sh) = state.relay.shared().cloned() else {
        return;
    };
    actix_web::rt::spawn(async move {
        use futures_util::StreamExt;
        let mut backoff = Duration::from_millis(200);
        loop {
            match sh.subscribe_changes().await {
                Ok(mut pubsub) => {
                    backoff = Duration::from_millis(200);
                    // Whatever was published while this node was not listening.
                    resync(&state).await;
                    let mut messages = pubsub.on_message();
                    while let Some(m) = messages.next().await {
                        let Ok(text) = m.get_payload::<String>() else {
                            continue;
                        };
                        match parse(&text) {
                            Some((node, _)) if node == sh.node() => {}
                            Some((_, change)) => apply(&state, &change).await,
                            None => tracing::warn!("unknown change message: {text:?}"),
                        }
                    }
                    tracing::warn!("the change subscription ended; subscribing again");
                }
                Err(e) => {
                    tracing::warn!("subscribing to the other nodes' changes failed: {e}");
                }
            }
            actix_web::rt::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        for c in [
            Change::Channels,
            Change::Pricing,
            Change::Settings,
            Change::Token {
                id: 7,
                digest: "ab12".into(),
            },
            Change::User { id: 42 },
        ] {
            let m = message("node-1", &c);
            assert_eq!(parse(&m), Some(("node-1", c)));
        }
        for bad in [
            "",
            "node",
            "node bogus",
            "node user x",
            "node token 1",
            "node user 1 extra",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
