//! `GET /v1/realtime?model=...`: OpenAI's Realtime API, a websocket relayed frame by frame to an
//! OpenAI or Azure channel and billed per turn.
//!
//! Opening: the key comes from `Authorization: Bearer sk-...` (or the other places the relay
//! reads it) or from the subprotocol `openai-insecure-api-key.sk-...` that OpenAI's browser
//! clients send beside `realtime`. The key, its model allow-list, its group and the rate limits
//! are checked as for `/v1`, and the user and the key must have quota left. The upstream
//! websocket is opened before the client's handshake is answered, so every refusal (bad key,
//! no quota, no channel, the upstream refusing) is an HTTP error in OpenAI's shape; channels are
//! tried by priority and weight with the `/v1` retry settings.
//!
//! Relaying: text and binary frames, pings and pongs pass through both ways; a close from either
//! side is passed to the other with its code and reason, and a client that goes away closes the
//! upstream session.
//!
//! Billing (the balance rule of the ledger): each `response.create` from the client reserves
//! the turn before it is forwarded, between one output token and the turn's worst case (its
//! `max_response_output_tokens`, else the model's output limit, at the output ratio, plus
//! `PreConsumedQuota`); when the balance covers less than the worst case, the forwarded
//! `response.create` carries `response.max_response_output_tokens` set to what it covers, and
//! when it cannot cover the minimum the turn is refused (an `error` event, then a close with 1008)
//! without reaching the upstream. Responses the upstream starts by itself (server VAD) are
//! reserved at their `response.created`. Every `response.done` settles its turn with its
//! reservation: its usage priced with the model's price (audio and cached tokens with their
//! extra ratios) and the group ratio, as one consume log, the charge capped by the balance rule.
//! A turn cut before its `response.done` (either side leaving, the upstream failing) is settled
//! when the session ends from what was seen: its text and audio-transcript deltas counted as
//! output tokens (audio and the input cannot be counted then); a turn that produced nothing is
//! refunded. When a turn leaves the user or the key without quota, the client gets an `error`
//! event and the session is closed with 1008 (policy violation) after that turn.

use super::edge::{self, refuse};
use super::handler::{admit, authenticate_key, raw_key, Admitted, LogMeta};
use super::record::{self, Caller};
use super::snapshot::ChannelInfo;
use super::AuthToken;
use crate::extract::client_ip;
use crate::settings::View;
use crate::AppState;
use actix_web::{web, HttpRequest, HttpResponse};
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason, Session};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_domain::log::LogType;
use switchboard_domain::options::OptionValues;
use switchboard_domain::price::{self, Price, ReserveBounds, Usage};
use switchboard_domain::ErrorCode;
use switchboard_ledger::{Reservation, Shortfall};
use switchboard_relay::dispatch::dispatch;
use switchboard_relay::provider::UpstreamFailure;
use switchboard_relay::realtime::usage_of_event;
use switchboard_relay::refusal::{Protocol, Refusal};
use switchboard_relay::tokenizer;
use switchboard_store::logs::ConsumeRecord;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode as UpCloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The subprotocol prefix carrying the key in browsers (which cannot set headers).
pub const KEY_PROTOCOL: &str = "openai-insecure-api-key.";
/// The subprotocol answered to clients that offer it.
const REALTIME_PROTOCOL: &str = "realtime";
/// How long opening the upstream websocket may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a closing side waits for the other to acknowledge.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// Largest frame (and reassembled message) accepted from the client: audio is sent base64 in
/// `input_audio_buffer.append` events.
const MAX_CLIENT_MESSAGE: usize = 16 << 20;
/// Largest error body kept from an upstream refusing the handshake.
const MAX_ERROR_BODY: usize = 64 * 1024;

type Upstream = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Every subprotocol the client offers (`Sec-WebSocket-Protocol`, comma separated, possibly in
/// several headers).
fn offered_protocols(req: &HttpRequest) -> Vec<String> {
    req.headers()
        .get_all("sec-websocket-protocol")
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect()
}

/// The key: the usual places first, else the `openai-insecure-api-key.` subprotocol.
fn realtime_key(req: &HttpRequest) -> Option<String> {
    raw_key(req).or_else(|| {
        offered_protocols(req)
            .iter()
            .find_map(|p| p.strip_prefix(KEY_PROTOCOL))
            .map(str::to_owned)
    })
}

fn query_param(req: &HttpRequest, name: &str) -> Option<String> {
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Whether the user and the key still have quota (the refusal when not).
async fn check_quota(state: &web::Data<AppState>, token: &AuthToken) -> Result<(), Refusal> {
    let r = edge::reserve(state, token, ReserveBounds { min: 0, max: 0 }).await?;
    state.relay.ledger.refund(r);
    state.relay.ledger.apply_queued().await;
    Ok(())
}

/// `GET /v1/realtime?model=...`.
pub async fn realtime(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Payload,
) -> HttpResponse {
    open(state, req, body)
        .await
        .unwrap_or_else(|r| refuse(Protocol::OpenAi, &r))
}

async fn open(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Payload,
) -> Result<HttpResponse, Refusal> {
    let (token, pin) = authenticate_key(&state, &req, realtime_key(&req)).await?;
    let Some(model) = query_param(&req, "model") else {
        return Err(Refusal::invalid(
            ErrorCode::MissingModel,
            "Name the model in the query: /v1/realtime?model=...",
        ));
    };
    // Channel proxies are HTTP clients' settings; a realtime session never bypasses one, so
    // channels behind a proxy do not serve it.
    let Admitted {
        group,
        ginfo,
        snapshot,
        candidates,
        price,
    } = admit(&state, &token, &model, pin, |ch| {
        ch.target.proxy.is_none()
            && !ch.target.only_chat()
            && ch.provider.as_ref().is_some_and(|p| p.supports_realtime())
    })
    .await?;
    check_quota(&state, &token).await?;
    // Validates the client's handshake before anything is opened upstream.
    let offers_realtime = offered_protocols(&req)
        .iter()
        .any(|p| p == REALTIME_PROTOCOL);
    let protocols: &[&str] = if offers_realtime {
        &[REALTIME_PROTOCOL]
    } else {
        &[]
    };
    let (resp, session, stream) = match actix_ws::handle_with_protocols(&req, body, protocols) {
        Ok(t) => t,
        Err(e) => {
            return Err(Refusal::invalid(
                ErrorCode::WebsocketRequired,
                format!("/v1/realtime is a websocket: open it with a websocket handshake ({e})."),
            ))
        }
    };

    // The upstream websocket on the first channel that accepts it (priority, weight and the
    // retry settings of `/v1`, through the relay crate's dispatch loop).
    let snap = state.view();
    let o = View(&snap);
    let keywords_text = o.text("DisableChannelKeywords");
    let keywords: Vec<&str> = keywords_text
        .lines()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect();
    let source = edge::Source {
        state: &state,
        snapshot: &snapshot,
        what: "realtime upstream",
    };
    let (ch, upstream) = dispatch(
        &source,
        &candidates,
        &edge::policy(&state.settings.relay_options(), pin),
        &model,
        async |ch: &Arc<ChannelInfo>| {
            let public_only = super::public_only(&state, ch);
            open_upstream(ch, &model, &keywords, public_only).await
        },
    )
    .await?;
    let channel_id = ch.id;
    let stream = stream
        .max_frame_size(MAX_CLIENT_MESSAGE)
        .aggregate_continuations()
        .max_continuation_size(MAX_CLIENT_MESSAGE);
    let turns = Turns {
        state: state.clone(),
        token: Arc::clone(&token),
        price,
        group,
        group_ratio: ginfo.ratio,
        model,
        channel_id,
        ip: client_ip(&req, &state.config.trusted_proxies),
        session_id: crate::auth::random_string(24),
        turn: 0,
        session_max: None,
        pending: VecDeque::new(),
    };
    actix_web::rt::spawn(relay_session(turns, session, stream, upstream));
    Ok(resp)
}

/// One handshake with one channel; `public_only`: under the outbound URL policy (a destination
/// not set by root), connected to a public address of the upstream's host only.
async fn open_upstream(
    ch: &ChannelInfo,
    model: &str,
    keywords: &[&str],
    public_only: bool,
) -> Result<Upstream, UpstreamFailure> {
    let failure = |status: u16, message: String, code: &str, retryable: bool| UpstreamFailure {
        status,
        message,
        code: Some(code.to_owned()),
        retryable,
        auto_disable: false,
        kind: None,
        retry_after: None,
        gateway: false,
    };
    let Some(provider) = ch.provider.as_ref() else {
        return Err(failure(
            500,
            format!("channel {} has no adapter", ch.id),
            "channel_config_error",
            true,
        ));
    };
    let target = provider
        .realtime(&ch.target, model)
        .map_err(|e| failure(500, e.to_string(), "channel_config_error", true))?;
    let mut request = target
        .url
        .as_str()
        .into_client_request()
        .map_err(|e| failure(500, e.to_string(), "channel_config_error", true))?;
    for (name, value) in &target.headers {
        request.headers_mut().insert(name.clone(), value.clone());
    }
    let connected = if public_only {
        // Resolved here, public addresses only (the websocket client would resolve for itself).
        switchboard_relay::outbound::check_channel_literals(&ch.target)
            .map_err(|e| failure(500, e.to_string(), "channel_config_error", true))?;
        let uri = request.uri();
        let host = uri.host().unwrap_or_default().to_owned();
        let port = uri
            .port_u16()
            .unwrap_or(if uri.scheme_str() == Some("wss") {
                443
            } else {
                80
            });
        let addrs = switchboard_relay::outbound::public_addrs(&host, port)
            .await
            .map_err(|e| failure(500, e.to_string(), "channel_config_error", true))?;
        tokio::time::timeout(CONNECT_TIMEOUT, async move {
            let tcp = TcpStream::connect(&addrs[..]).await.map_err(WsError::Io)?;
            // As connect_async_with_config(.., true): no Nagle delay.
            tcp.set_nodelay(true).map_err(WsError::Io)?;
            tokio_tungstenite::client_async_tls_with_config(request, tcp, None, None).await
        })
        .await
    } else {
        tokio::time::timeout(
            CONNECT_TIMEOUT,
            tokio_tungstenite::connect_async_with_config(request, None, true),
        )
        .await
    };
    match connected {
        Ok(Ok((ws, _))) => Ok(ws),
        Ok(Err(WsError::Http(resp))) => {
            let status = resp.status().as_u16();
            let body = resp.body().as_deref().unwrap_or_default();
            let body = &body[..body.len().min(MAX_ERROR_BODY)];
            Err(provider.classify(status, body, keywords))
        }
        Ok(Err(e)) => Err(failure(
            502,
            format!("the realtime upstream could not be reached: {e}"),
            "upstream_unreachable",
            true,
        )),
        Err(_) => Err(failure(
            504,
            "the realtime upstream did not answer in time".into(),
            "upstream_timeout",
            true,
        )),
    }
}

/// The most output tokens a Realtime response may be given (`max_response_output_tokens` is
/// 1 to 4096 or `"inf"`): a turn's worst case never assumes more.
const REALTIME_OUTPUT_LIMIT: i64 = 4096;

/// One response in progress: its reservation and what it has produced so far.
struct Turn {
    reservation: Reservation,
    started: Instant,
    /// The `event_id` of its `response.create` (the client's, else one Switchboard set), to
    /// match the `error` an upstream answers a refused `response.create` with.
    event_id: Option<String>,
    /// The upstream's id of the response, from `response.created`.
    response_id: Option<String>,
    /// The text and audio-transcript deltas seen so far: billed as output tokens when the turn
    /// ends without usage.
    text: String,
}

/// What to do with a client event.
enum ClientEvent {
    /// Forward this text.
    Forward(String),
    /// The turn it starts is refused: the balance cannot cover its minimum.
    Refused(Shortfall),
    /// The turn cannot be reserved now (the quota service is unavailable): not forwarded.
    Unavailable,
}

/// The facts needed to bill a session's turns.
struct Turns {
    state: web::Data<AppState>,
    token: Arc<AuthToken>,
    price: Price,
    group: String,
    group_ratio: f64,
    model: String,
    channel_id: i64,
    ip: String,
    session_id: String,
    turn: u32,
    /// The session's `max_response_output_tokens` (`None`: not set, or `"inf"`).
    session_max: Option<i64>,
    /// The responses begun (`response.create` sent, or `response.created` seen for a response
    /// the upstream started by itself) whose `response.done` has not come yet, oldest first;
    /// each holds its reservation.
    pending: VecDeque<Turn>,
}

/// A `max_response_output_tokens` value: `Some(None)` for `"inf"`, `None` when absent.
fn output_limit(v: Option<&Value>) -> Option<Option<i64>> {
    match v? {
        Value::Number(n) => Some(n.as_i64().filter(|n| *n > 0)),
        _ => Some(None),
    }
}

impl Turns {
    fn options(&self) -> (i64, i64, i64) {
        let snap = self.state.view();
        let o = View(&snap);
        (
            o.int("PreConsumedQuota"),
            o.int("DefaultMaxOutputTokens"),
            o.int("OverdraftTolerance"),
        )
    }

    /// A turn's bounds: its input is unknown (audio, the conversation so far), so the worst
    /// case is the most output it may produce (`max_tokens`, else the model's output limit or
    /// `DefaultMaxOutputTokens`, never more than 4096) at the output ratio, plus
    /// `PreConsumedQuota`; the minimum one output token plus `PreConsumedQuota`.
    fn bounds(&self, max_tokens: Option<i64>) -> (ReserveBounds, i64) {
        let (pre_consumed, default_limit, _) = self.options();
        let demand = price::Demand {
            prompt_tokens: 0,
            max_tokens: Some(
                max_tokens
                    .unwrap_or(REALTIME_OUTPUT_LIMIT)
                    .min(REALTIME_OUTPUT_LIMIT),
            ),
            generates: true,
            units: 1,
            answers: 1,
        };
        let bounds = price::reservation_bounds(
            &self.price,
            &demand,
            default_limit,
            self.group_ratio,
            pre_consumed,
        );
        (bounds, pre_consumed)
    }

    /// Reserves a turn (loading the accounts if the ledger forgot them, one load per key as
    /// for the HTTP relay).
    async fn reserve(&self, bounds: ReserveBounds) -> Result<Reservation, Shortfall> {
        edge::reserve_loading(&self.state, &self.token, bounds)
            .await
            .unwrap_or_else(|_| {
                Err(Shortfall::Unavailable(
                    "the accounts could not be loaded".into(),
                ))
            })
    }

    /// The client's `response.create` (a turn begins): reserved before it is forwarded, with
    /// the upstream told to stop where the reservation ends. `session.update` sets the
    /// session's output limit. Other events pass unchanged.
    async fn client_event(&mut self, text: &str) -> ClientEvent {
        // Without a `\u` escape the event's text spells its type as it is; with one (a
        // `response\u002ecreate`) only the parsed event tells.
        if !text.contains("response.create")
            && !text.contains("session.update")
            && !text.contains("\\u")
        {
            return ClientEvent::Forward(text.to_owned());
        }
        let Ok(mut event) = serde_json::from_str::<Value>(text) else {
            return ClientEvent::Forward(text.to_owned());
        };
        match event.get("type").and_then(Value::as_str) {
            Some("session.update") => {
                if let Some(limit) =
                    output_limit(event.pointer("/session/max_response_output_tokens"))
                {
                    self.session_max = limit;
                }
                ClientEvent::Forward(text.to_owned())
            }
            Some("response.create") => {
                let asked = output_limit(event.pointer("/response/max_response_output_tokens"))
                    .unwrap_or(self.session_max);
                let (bounds, pre_consumed) = self.bounds(asked);
                let reservation = match self.reserve(bounds).await {
                    Ok(r) => r,
                    Err(s @ (Shortfall::User | Shortfall::Token)) => {
                        return ClientEvent::Refused(s)
                    }
                    Err(Shortfall::NotLoaded | Shortfall::Unavailable(_) | Shortfall::NotHeld) => {
                        return ClientEvent::Unavailable
                    }
                };
                if reservation.amount < bounds.max {
                    let covered = price::covered_completion_tokens(
                        &self.price,
                        0,
                        reservation.amount,
                        self.group_ratio,
                        pre_consumed,
                    )
                    .clamp(1, REALTIME_OUTPUT_LIMIT);
                    if event.get("response").is_none_or(Value::is_null) {
                        event["response"] = json!({});
                    }
                    if let Some(r) = event.get_mut("response").and_then(Value::as_object_mut) {
                        r.insert("max_response_output_tokens".into(), json!(covered));
                    }
                }
                let event_id = match event.get("event_id").and_then(Value::as_str) {
                    Some(id) => id.to_owned(),
                    None => {
                        let id = format!("event_sb{}", crate::auth::random_string(16));
                        event["event_id"] = json!(id);
                        id
                    }
                };
                self.pending.push_back(Turn {
                    reservation,
                    started: Instant::now(),
                    event_id: Some(event_id),
                    response_id: None,
                    text: String::new(),
                });
                ClientEvent::Forward(event.to_string())
            }
            _ => ClientEvent::Forward(text.to_owned()),
        }
    }

    /// Follows the server events of the turns: `response.created` (a response the upstream
    /// started by itself, e.g. server VAD, is reserved then), text and transcript deltas,
    /// `response.done` (the turn is settled) and an `error` answering a `response.create` (its
    /// reservation is refunded). Returns whether a turn was settled.
    async fn observe(&mut self, text: &str) -> bool {
        const WATCHED: [&str; 7] = [
            "\"response.created\"",
            "\"response.done\"",
            "\"response.text.delta\"",
            "\"response.audio_transcript.delta\"",
            "\"response.output_text.delta\"",
            "\"response.output_audio_transcript.delta\"",
            "\"error\"",
        ];
        if !WATCHED.iter().any(|w| text.contains(w)) {
            return false;
        }
        let Ok(event) = serde_json::from_str::<Value>(text) else {
            return false;
        };
        let response_id = event
            .pointer("/response/id")
            .or_else(|| event.get("response_id"))
            .and_then(Value::as_str);
        let by_id = |pending: &VecDeque<Turn>| {
            response_id.and_then(|id| {
                pending
                    .iter()
                    .position(|t| t.response_id.as_deref() == Some(id))
            })
        };
        match event.get("type").and_then(Value::as_str) {
            Some("response.created") => {
                if let Some(t) = self.pending.iter_mut().find(|t| t.response_id.is_none()) {
                    t.response_id = response_id.map(str::to_owned);
                    return false;
                }
                // Started by the upstream: reserved now; a turn the balance cannot cover has
                // begun all the same and is charged within the balance rule at its end.
                let (bounds, _) = self.bounds(self.session_max);
                let reservation = self
                    .reserve(bounds)
                    .await
                    .unwrap_or_else(|_| Reservation::none(self.token.user_id, self.token.id));
                self.pending.push_back(Turn {
                    reservation,
                    started: Instant::now(),
                    event_id: None,
                    response_id: response_id.map(str::to_owned),
                    text: String::new(),
                });
                false
            }
            Some(
                "response.text.delta"
                | "response.audio_transcript.delta"
                | "response.output_text.delta"
                | "response.output_audio_transcript.delta",
            ) => {
                let i = by_id(&self.pending).unwrap_or(0);
                if let (Some(t), Some(delta)) = (
                    self.pending.get_mut(i),
                    event.get("delta").and_then(Value::as_str),
                ) {
                    t.text.push_str(delta);
                }
                false
            }
            Some("response.done") => {
                let Some(turn) = by_id(&self.pending)
                    .or_else(|| (!self.pending.is_empty()).then_some(0))
                    .and_then(|i| self.pending.remove(i))
                else {
                    return false;
                };
                self.settle(turn, usage_of_event(&event))
            }
            Some("error") => {
                let refused = event
                    .pointer("/error/event_id")
                    .and_then(Value::as_str)
                    .and_then(|id| {
                        self.pending.iter().position(|t| {
                            t.response_id.is_none() && t.event_id.as_deref() == Some(id)
                        })
                    })
                    .and_then(|i| self.pending.remove(i));
                if let Some(t) = refused {
                    self.state.relay.ledger.refund(t.reservation);
                    super::kick_applier(&self.state);
                }
                false
            }
            _ => false,
        }
    }

    /// Settles one turn as one consume log with its reservation: the upstream's usage, else its
    /// text and transcript deltas counted as output tokens (audio itself and the input cannot
    /// be counted and are not billed then). A turn that produced nothing is refunded. Returns
    /// whether a consume log was queued.
    fn settle(&mut self, turn: Turn, usage: Option<Usage>) -> bool {
        let (usage, estimated) = match usage {
            Some(u) => (u, false),
            None => {
                let counted = tokenizer::count_text(&self.model, &turn.text);
                if counted <= 0 {
                    self.state.relay.ledger.refund(turn.reservation);
                    super::kick_applier(&self.state);
                    return false;
                }
                let u = Usage {
                    completion_tokens: counted,
                    ..Usage::default()
                };
                (u, true)
            }
        };
        self.turn += 1;
        let quota = price::cost(&self.price, &usage, self.group_ratio);
        let meta = LogMeta {
            group_ratio: self.group_ratio,
            input_ratio: self.price.input,
            output_ratio: self.price.output,
            price_type: self.price.price_type,
            usage: &usage,
            usage_estimated: estimated,
            cache_full_quota: None,
            cache_saved_quota: None,
        };
        let caller = Caller {
            token: &self.token,
            model: &self.model,
            group: &self.group,
            ip: &self.ip,
        };
        let request_id = format!("{}-{}", self.session_id, self.turn).into();
        let record = ConsumeRecord {
            quota,
            prompt_tokens: record::tokens(usage.prompt_tokens),
            completion_tokens: record::tokens(usage.completion_tokens),
            is_stream: true,
            metadata: serde_json::to_string(&meta).unwrap_or_default(),
            ..caller.record(LogType::Consume, request_id, self.channel_id, turn.started)
        };
        // The real cost, capped by the balance rule: the reservation plus what nobody else
        // holds.
        let (_, _, tolerance) = self.options();
        self.state
            .relay
            .ledger
            .settle(turn.reservation, record, tolerance);
        super::kick_applier(&self.state);
        true
    }

    /// The session is over: every turn still in progress is settled from what it produced
    /// (or refunded).
    async fn settle_unfinished(&mut self) {
        while let Some(turn) = self.pending.pop_front() {
            self.settle(turn, None);
        }
        self.state.relay.ledger.apply_queued().await;
    }

    /// `Some(shortfall)` when the user or the key has no quota left.
    async fn exhausted(&self) -> Option<Shortfall> {
        match self
            .state
            .relay
            .ledger
            .reserve(self.token.user_id, self.token.id, 0)
            .await
        {
            Ok(r) => {
                self.state.relay.ledger.refund(r);
                self.state.relay.ledger.apply_queued().await;
                None
            }
            Err(s @ (Shortfall::User | Shortfall::Token)) => Some(s),
            // An unavailable ledger does not cut sessions; the next turn checks again.
            Err(_) => None,
        }
    }
}

impl Drop for Turns {
    /// A session task dropped before it could settle (the server stopping): nothing stays
    /// reserved.
    fn drop(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        for turn in self.pending.drain(..) {
            self.state.relay.ledger.refund(turn.reservation);
        }
        super::kick_applier(&self.state);
    }
}

fn to_upstream_close(reason: Option<CloseReason>) -> Option<CloseFrame> {
    reason.map(|r| CloseFrame {
        code: UpCloseCode::from(u16::from(r.code)),
        reason: r.description.unwrap_or_default().into(),
    })
}

fn to_client_close(frame: Option<CloseFrame>) -> Option<CloseReason> {
    frame.map(|f| CloseReason {
        code: CloseCode::from(u16::from(f.code)),
        description: (!f.reason.is_empty()).then(|| f.reason.to_string()),
    })
}

/// What the relay loop does after a frame.
enum Next {
    Continue,
    Stop,
}

/// Relays frames both ways until either side closes; bills every `response.done`.
async fn relay_session(
    mut turns: Turns,
    mut client: Session,
    mut from_client: AggregatedMessageStream,
    upstream: Upstream,
) {
    let (mut to_up, mut from_up) = upstream.split();
    loop {
        let next = tokio::select! {
            msg = from_client.next() => {
                client_frame(msg, &mut turns, &mut client, &mut to_up, &mut from_up).await
            }
            msg = from_up.next() => {
                upstream_frame(msg, &mut turns, &mut client, &mut to_up, &mut from_up).await
            }
        };
        if matches!(next, Next::Stop) {
            break;
        }
    }
    turns.settle_unfinished().await;
}

async fn client_frame(
    msg: Option<Result<AggregatedMessage, actix_ws::ProtocolError>>,
    turns: &mut Turns,
    client: &mut Session,
    to_up: &mut SplitSink<Upstream, Message>,
    from_up: &mut SplitStream<Upstream>,
) -> Next {
    let sent = match msg {
        Some(Ok(AggregatedMessage::Text(text))) => match turns.client_event(&text).await {
            ClientEvent::Forward(text) => to_up.send(Message::Text(text.into())).await,
            // Refused before it reaches the upstream.
            ClientEvent::Refused(short) => {
                out_of_quota(&short, turns, client, to_up, from_up).await;
                return Next::Stop;
            }
            ClientEvent::Unavailable => {
                let event = json!({"type": "error",
                    "event_id": format!("event_{}", crate::auth::random_string(16)),
                    "error": {"type": "server_error", "code": "ledger_unavailable",
                        "message": "The quota service is unavailable; the response was not started. Try again shortly.",
                        "param": null}});
                if client.text(event.to_string()).await.is_err() {
                    client_gone(turns, to_up, from_up).await;
                    return Next::Stop;
                }
                return Next::Continue;
            }
        },
        Some(Ok(AggregatedMessage::Binary(b))) => to_up.send(Message::Binary(b)).await,
        Some(Ok(AggregatedMessage::Ping(p))) => to_up.send(Message::Ping(p)).await,
        Some(Ok(AggregatedMessage::Pong(p))) => to_up.send(Message::Pong(p)).await,
        Some(Ok(AggregatedMessage::Close(reason))) => {
            finish_turn(turns, to_up, from_up).await;
            let _ = to_up
                .send(Message::Close(to_upstream_close(reason.clone())))
                .await;
            finish_upstream(turns, from_up).await;
            let _ = client.clone().close(reason).await;
            return Next::Stop;
        }
        // The client went away (or broke the protocol): end the upstream session too.
        Some(Err(_)) | None => {
            client_gone(turns, to_up, from_up).await;
            return Next::Stop;
        }
    };
    match sent {
        Ok(()) => Next::Continue,
        Err(e) => {
            tracing::warn!(
                channel = turns.channel_id,
                "realtime upstream write failed: {e}"
            );
            let _ = client
                .clone()
                .close(Some(CloseReason {
                    code: CloseCode::Error,
                    description: Some("the upstream connection failed".into()),
                }))
                .await;
            Next::Stop
        }
    }
}

/// The client went away: the response in progress is cancelled (and billed for what it
/// produced), then the upstream session is closed.
async fn client_gone(
    turns: &mut Turns,
    to_up: &mut SplitSink<Upstream, Message>,
    from_up: &mut SplitStream<Upstream>,
) {
    finish_turn(turns, to_up, from_up).await;
    let _ = to_up
        .send(Message::Close(Some(CloseFrame {
            code: UpCloseCode::Away,
            reason: "client disconnected".into(),
        })))
        .await;
    finish_upstream(turns, from_up).await;
}

/// With a response in progress and nobody left to read it: `response.cancel`, then wait
/// (briefly) for its `response.done`, which is billed like any turn.
async fn finish_turn(
    turns: &mut Turns,
    to_up: &mut SplitSink<Upstream, Message>,
    from_up: &mut SplitStream<Upstream>,
) {
    if turns.pending.is_empty() {
        return;
    }
    let cancel = json!({"type": "response.cancel"}).to_string();
    if to_up.send(Message::Text(cancel.into())).await.is_err() {
        return;
    }
    let wait = async {
        while let Some(Ok(m)) = from_up.next().await {
            if let Message::Text(t) = m {
                turns.observe(t.as_str()).await;
                if turns.pending.is_empty() {
                    return;
                }
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_GRACE, wait).await;
}

/// Waits (briefly) for the upstream to acknowledge a close, billing any last `response.done`.
async fn finish_upstream(turns: &mut Turns, from_up: &mut SplitStream<Upstream>) {
    let drain = async {
        while let Some(Ok(m)) = from_up.next().await {
            if let Message::Text(t) = m {
                turns.observe(t.as_str()).await;
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_GRACE, drain).await;
}

async fn upstream_frame(
    msg: Option<Result<Message, WsError>>,
    turns: &mut Turns,
    client: &mut Session,
    to_up: &mut SplitSink<Upstream, Message>,
    from_up: &mut SplitStream<Upstream>,
) -> Next {
    let sent = match msg {
        Some(Ok(Message::Text(text))) => {
            let settled = turns.observe(text.as_str()).await;
            let sent = client.text(text.as_str().to_owned()).await;
            if settled {
                if let Some(short) = turns.exhausted().await {
                    out_of_quota(&short, turns, client, to_up, from_up).await;
                    return Next::Stop;
                }
            }
            sent
        }
        Some(Ok(Message::Binary(b))) => client.binary(b).await,
        Some(Ok(Message::Ping(p))) => client.ping(&p).await,
        Some(Ok(Message::Pong(p))) => client.pong(&p).await,
        Some(Ok(Message::Frame(_))) => Ok(()),
        Some(Ok(Message::Close(frame))) => {
            let _ = client.clone().close(to_client_close(frame)).await;
            return Next::Stop;
        }
        Some(Err(e)) => {
            tracing::warn!(channel = turns.channel_id, "realtime upstream failed: {e}");
            let _ = client
                .clone()
                .close(Some(CloseReason {
                    code: CloseCode::Error,
                    description: Some("the upstream connection failed".into()),
                }))
                .await;
            return Next::Stop;
        }
        None => {
            let _ = client
                .clone()
                .close(Some(CloseReason {
                    code: CloseCode::Error,
                    description: Some("the upstream closed the connection".into()),
                }))
                .await;
            return Next::Stop;
        }
    };
    match sent {
        Ok(()) => Next::Continue,
        // The client is gone: end the upstream session.
        Err(_) => {
            client_gone(turns, to_up, from_up).await;
            Next::Stop
        }
    }
}

/// Tells the client its quota ran out (or cannot cover the turn it asked for) and closes both
/// sides (1008 to the client); a response still in progress is cancelled and billed first.
async fn out_of_quota(
    short: &Shortfall,
    turns: &mut Turns,
    client: &mut Session,
    to_up: &mut SplitSink<Upstream, Message>,
    from_up: &mut SplitStream<Upstream>,
) {
    let (code, message) = match short {
        Shortfall::Token => (
            "insufficient_token_quota",
            "This API key has no quota left; the session is closed.",
        ),
        _ => (
            "insufficient_user_quota",
            "Your account has no quota left; the session is closed.",
        ),
    };
    let event = json!({"type": "error", "event_id": format!("event_{}", crate::auth::random_string(16)),
        "error": {"type": "insufficient_quota", "code": code, "message": message, "param": null}});
    let _ = client.text(event.to_string()).await;
    let _ = client
        .clone()
        .close(Some(CloseReason {
            code: CloseCode::Policy,
            description: Some(code.to_owned()),
        }))
        .await;
    finish_turn(turns, to_up, from_up).await;
    let _ = to_up
        .send(Message::Close(Some(CloseFrame {
            code: UpCloseCode::Normal,
            reason: "".into(),
        })))
        .await;
}
