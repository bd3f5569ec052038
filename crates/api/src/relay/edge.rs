//! What every relayed entry point (`/v1`, Anthropic Messages, Gemini, realtime, Midjourney and
//! Suno tasks) shares at the edge: rendering a [`Refusal`] in the client's protocol, the channel
//! source the relay crate's dispatch loop works over, the operator's retry policy, and the
//! reservation of quota.

use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_domain::ErrorCode;

use actix_web::http::StatusCode;
use actix_web::{web, HttpResponse};
use switchboard_domain::token::ChannelPin;
use switchboard_relay::dispatch::{Channels, Policy, Routing};
use switchboard_relay::health::Health;
use switchboard_relay::provider::UpstreamFailure;
use switchboard_relay::refusal::{Protocol, Refusal};

use super::snapshot::{ChannelInfo, Snapshot};
use super::AuthToken;
use crate::settings::RelayOptions;
use crate::AppState;
use switchboard_ledger::{Reservation, Shortfall};
use switchboard_store::{tokens, users};

/// The answer for a refusal in the client's protocol, with `Retry-After` when it has one.
pub fn refuse(protocol: Protocol, r: &Refusal) -> HttpResponse {
    let status = StatusCode::from_u16(r.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut res = HttpResponse::build(status);
    res.content_type("application/json");
    if let Some(secs) = r.retry_after {
        res.insert_header(("Retry-After", secs.to_string()));
    }
    res.body(r.body(protocol))
}

/// The 500 of a database failure on the relay path (the cause goes to the log, not the client).
pub fn internal(what: &str) -> Refusal {
    Refusal::new(
        500,
        ErrorCode::InternalError,
        format!("internal error while {what}"),
    )
}

/// The refusal for a quota shortfall.
pub fn shortfall(s: &Shortfall) -> Refusal {
    match s {
        Shortfall::User => Refusal::new(402, ErrorCode::InsufficientUserQuota, "Your account's quota is not enough for this request; top up and try again."),
        Shortfall::Token => Refusal::new(402, ErrorCode::InsufficientTokenQuota, "This API key's quota is not enough for this request."),
        Shortfall::NotHeld => Refusal::new(503, ErrorCode::LedgerLeaseLost, "This node does not hold its claim on the balances right now (another node may be using this database); it admits no request until it holds it again. Try again shortly."),
        Shortfall::NotLoaded | Shortfall::Unavailable(_) => Refusal::new(503, ErrorCode::LedgerUnavailable, "The quota service is unavailable; try again shortly."),
    }
}

/// Reserves between `min` and `max` quota for the key and its owner (the ledger loads their
/// balances from the database on first use).
pub async fn reserve(
    state: &web::Data<AppState>,
    token: &AuthToken,
    bounds: switchboard_domain::price::ReserveBounds,
) -> Result<Reservation, Refusal> {
    reserve_loading(state, token, bounds)
        .await?
        .map_err(|s| shortfall(&s))
}

/// The reservation of [`reserve`] (and of a realtime session's turns), loading the balances
/// of the key and its owner on first use: one request per user and key reads them, the others
/// wait for it and then find them loaded. The outer error: they could not be loaded.
pub(super) async fn reserve_loading(
    state: &web::Data<AppState>,
    token: &AuthToken,
    bounds: switchboard_domain::price::ReserveBounds,
) -> Result<Result<Reservation, Shortfall>, Refusal> {
    let ledger = &state.relay.ledger;
    match ledger
        .reserve_between(token.user_id, token.id, bounds)
        .await
    {
        Err(Shortfall::NotLoaded) => {}
        other => return Ok(other),
    }
    state
        .relay
        .one_ledger_load(token.user_id, token.id, || async {
            match ledger
                .reserve_between(token.user_id, token.id, bounds)
                .await
            {
                Err(Shortfall::NotLoaded) => {
                    load_ledger(state, token).await?;
                    Ok(ledger
                        .reserve_between(token.user_id, token.id, bounds)
                        .await)
                }
                other => Ok(other),
            }
        })
        .await
}

/// The operator's retry settings (`RetryTimes`, `RetryCooldownSeconds`, `RetryTimeOut`,
/// `AutomaticDisableChannelEnabled`, and the smarter-routing switches `CircuitBreakerEnabled`
/// and `LatencyAwareRouting`) for a call with this channel pin.
pub fn policy(o: &RelayOptions, pin: ChannelPin) -> Policy {
    Policy {
        retries: o.retries,
        cooldown: o.cooldown,
        deadline: match o.retry_timeout_secs {
            s if s > 0 => Some(Instant::now() + Duration::from_secs(s.unsigned_abs())),
            _ => None,
        },
        auto_disable: o.auto_disable,
        pinned: matches!(pin, ChannelPin::Only(_)),
        routing: Routing {
            breaker: o.breaker,
            latency_aware: o.latency_aware,
        },
    }
}

/// The channels of one snapshot, with their health in the relay state: what the relay crate's
/// dispatch loop works over.
pub struct Source<'a> {
    pub state: &'a web::Data<AppState>,
    pub snapshot: &'a Snapshot,
    /// Names the kind of call in the log ("upstream", "realtime upstream", "task upstream").
    pub what: &'static str,
}

impl Channels for Source<'_> {
    type Channel = Arc<ChannelInfo>;

    fn channel(&self, id: i64) -> Option<Arc<ChannelInfo>> {
        self.snapshot.channel(id)
    }

    fn is_frozen(&self, id: i64) -> bool {
        self.state.relay.is_frozen(id)
    }

    fn freeze(&self, id: i64, cooldown: Duration) {
        self.state.relay.freeze(id, cooldown);
    }

    fn failed(&self, ch: &Arc<ChannelInfo>, f: &UpstreamFailure) {
        tracing::warn!(
            channel = ch.id,
            status = f.status,
            retryable = f.retryable,
            "{} failed: {}",
            self.what,
            f.message
        );
    }

    fn attempted(
        &self,
        ch: &Arc<ChannelInfo>,
        model: &str,
        index: usize,
        took: Duration,
        failure: Option<&UpstreamFailure>,
    ) {
        self.state
            .metrics
            .attempt(model, ch.id, index, took, failure);
    }

    async fn disable(&self, ch: &Arc<ChannelInfo>, reason: &str) {
        if ch.auto_ban {
            disable_channel(self.state, ch.id, reason).await;
        }
    }

    fn health(&self) -> Option<&Health> {
        Some(&self.state.relay.health)
    }
}

/// Gives the ledger the database balances of the user and the key (first use).
async fn load_ledger(state: &web::Data<AppState>, t: &AuthToken) -> Result<(), Refusal> {
    let (uid, tid) = (t.user_id, t.id);
    let loaded = state
        .db(move |c| {
            let u = users::find(c, uid)?;
            let t = tokens::find(c, tid)?;
            Ok(switchboard_ledger::Loaded {
                user_id: uid,
                user_quota: u.quota,
                token_id: tid,
                token_remain: t.remain_quota,
                token_unlimited: t.unlimited_quota,
            })
        })
        .await
        .map_err(|_| {
            Refusal::new(
                500,
                ErrorCode::InternalError,
                "internal error while loading the balance",
            )
        })?;
    state.relay.ledger.load(loaded).await.map_err(|_| {
        Refusal::new(
            503,
            ErrorCode::LedgerUnavailable,
            "The quota service is unavailable; try again shortly.",
        )
    })
}

async fn disable_channel(state: &web::Data<AppState>, id: i64, reason: &str) {
    let changed = state
        .db(move |c| Ok(switchboard_store::channels::set_status(c, id, 3)?))
        .await;
    match changed {
        Ok(true) => {
            tracing::warn!(channel = id, "channel disabled automatically: {reason}");
            if let Err(e) = state.relay.channels_changed(state).await {
                tracing::error!("reloading channels failed: {e}");
            }
        }
        Ok(false) => {}
        Err(e) => tracing::error!(channel = id, "could not disable the channel: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::View;
    use std::collections::HashMap;

    #[test]
    fn relay_options_and_the_policy_read_the_operators_settings() {
        let d = RelayOptions::read(&View(&HashMap::new()));
        assert_eq!((d.retries, d.pre_consumed, d.breaker), (0, 500, None));
        let set: HashMap<String, String> = [
            ("RetryTimes", "3"),
            ("RetryTimeOut", "20"),
            ("PreConsumedQuota", "7"),
            ("OverdraftTolerance", "11"),
            ("CircuitBreakerEnabled", "true"),
            ("CircuitBreakerMinRequests", "4"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let s = RelayOptions::read(&View(&set));
        assert_eq!((s.retries, s.retry_timeout_secs), (3, 20));
        assert_eq!((s.pre_consumed, s.overdraft_tolerance), (7, 11));
        assert_eq!(s.breaker.map(|b| b.min_requests), Some(4));
        let p = policy(&s, ChannelPin::Any);
        assert_eq!(p.retries, 3);
        assert!(p.deadline.is_some() && p.routing.breaker.is_some() && !p.pinned);
        assert!(
            policy(&d, ChannelPin::Only(2)).pinned
                && policy(&d, ChannelPin::Any).deadline.is_none()
        );
    }
}
