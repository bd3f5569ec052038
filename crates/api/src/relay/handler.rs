//! `/v1` handlers: authenticate the key, check it, price and reserve, dispatch with retries,
//! answer (streamed as it arrives, or whole), settle once.

use super::edge::{self, refuse};
use super::gather::Gather;
use super::record::{self, Caller};
use super::snapshot::ChannelInfo;
use super::AuthToken;
use crate::extract::client_ip;
use crate::metrics::Outcome;
use crate::settings::View;
use crate::AppState;
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::{json, Value};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use switchboard_domain::dispatch::Candidate;
use switchboard_domain::log::LogType;
use switchboard_domain::options::OptionValues;
use switchboard_domain::price::{self, Price, Usage};
use switchboard_domain::token::{
    effective_status, split_pin, ChannelPin, IpAllowList, TokenStatus,
};
use switchboard_domain::ErrorCode;
use switchboard_ledger::Reservation;
use switchboard_relay::dispatch::dispatch;
use switchboard_relay::endpoint::Endpoint;
use switchboard_relay::error::RelayError;
use switchboard_relay::provider::{classify_transport, Answer, UpstreamFailure};
use switchboard_relay::refusal::{Protocol, Refusal};
use switchboard_relay::request::RelayRequest;
use switchboard_relay::stream::SseTap;
use switchboard_relay::tokenizer;
use switchboard_relay::translate::StreamTranslator;
use switchboard_store::logs::ConsumeRecord;
use switchboard_store::{now, tokens, users};

/// Largest error body read from an upstream (the message is all we need).
pub(super) const MAX_ERROR_BODY: usize = 64 * 1024;
/// Largest non-streamed upstream answer relayed.
const MAX_RESPONSE_BODY: usize = 256 * 1024 * 1024;

fn invalid_key() -> Refusal {
    Refusal::new(
        401,
        ErrorCode::InvalidApiKey,
        "Incorrect API key provided. You can find your API key in the console.",
    )
}

/// The key from `Authorization: Bearer`, `x-api-key`, `x-goog-api-key`, `mj-api-secret`
/// (Midjourney clients) or `?key=`.
pub(super) fn raw_key(req: &HttpRequest) -> Option<String> {
    // Names as `HeaderName` constants: a `&str` name is parsed into one on every look-up.
    use actix_web::http::header::{HeaderName, AUTHORIZATION};
    const X_API_KEY: HeaderName = HeaderName::from_static("x-api-key");
    const X_GOOG_API_KEY: HeaderName = HeaderName::from_static("x-goog-api-key");
    const MJ_API_SECRET: HeaderName = HeaderName::from_static("mj-api-secret");
    let h = |name: &HeaderName| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    if let Some(a) = h(&AUTHORIZATION) {
        let a = a
            .strip_prefix("Bearer ")
            .or_else(|| a.strip_prefix("bearer "))
            .unwrap_or(a);
        return Some(a.trim().to_owned());
    }
    if let Some(k) = h(&X_API_KEY)
        .or_else(|| h(&X_GOOG_API_KEY))
        .or_else(|| h(&MJ_API_SECRET))
    {
        return Some(k.to_owned());
    }
    url::form_urlencoded::parse(req.query_string().as_bytes())
        .find(|(k, _)| k == "key")
        .map(|(_, v)| v.into_owned())
}

/// Finds the key (cache, else database) and checks it and its owner; returns the channel pin.
pub async fn authenticate(
    state: &web::Data<AppState>,
    req: &HttpRequest,
) -> Result<(Arc<AuthToken>, ChannelPin), Refusal> {
    authenticate_key(state, req, raw_key(req)).await
}

/// [`authenticate`] with the key already taken from the request (`None`: no key was sent).
pub(super) async fn authenticate_key(
    state: &web::Data<AppState>,
    req: &HttpRequest,
    raw: Option<String>,
) -> Result<(Arc<AuthToken>, ChannelPin), Refusal> {
    let raw = raw.ok_or_else(|| {
        Refusal::new(
            401,
            ErrorCode::MissingApiKey,
            "You didn't provide an API key. Send it as Authorization: Bearer sk-...",
        )
    })?;
    let (key, pin) = split_pin(&raw);
    let key: std::borrow::Cow<str> = if key.starts_with(switchboard_domain::token::KEY_PREFIX) {
        key.into()
    } else {
        format!("sk-{key}").into()
    };
    let digest = crate::crypto::key_digest_remembered(&key);
    let token = state
        .relay
        .token_or_load::<Refusal, _, _>(&digest, || async {
            let d = digest.clone();
            let loaded = state
                .db(move |c| {
                    let t = match tokens::find_by_key_hash(c, &d) {
                        Ok(t) => t,
                        Err(e) if e.is_not_found() => return Ok(None),
                        Err(e) => return Err(e.into()),
                    };
                    let u = users::find(c, t.user_id)?;
                    Ok(Some((t, u)))
                })
                .await
                .map_err(|_| {
                    Refusal::new(
                        500,
                        ErrorCode::InternalError,
                        "internal error while checking the API key",
                    )
                })?;
            let Some((t, u)) = loaded else {
                return Ok(None);
            };
            let subnet = IpAllowList::parse(&t.subnet).unwrap_or_default();
            let auth = Arc::new(AuthToken {
                id: t.id,
                name: t.name,
                status: t.status,
                expired_at: t.expired_at,
                group: t.group_name,
                models: switchboard_domain::token::parse_model_list(&t.models),
                subnet,
                api_rate: t.api_rate,
                cache_enabled: t.cache_enabled,
                heartbeat_after: t.heartbeat_enabled.then(|| {
                    Duration::from_secs(
                        u64::try_from(t.heartbeat_timeout.clamp(30, 90)).unwrap_or(30),
                    )
                }),
                user_id: u.id,
                username: u.username,
                user_status: u.status,
                user_role: u.role,
                user_group: u.group_name,
            });
            Ok(Some(auth))
        })
        .await?
        .ok_or_else(invalid_key)?;
    if token.user_status != 1 {
        return Err(Refusal::new(
            403,
            ErrorCode::UserDisabled,
            "The owner of this API key has been disabled.",
        ));
    }
    // Quota is checked by the ledger at reservation time, so only status and expiry count here.
    match effective_status(token.status, token.expired_at, true, 1, now()) {
        TokenStatus::Enabled => {}
        TokenStatus::Expired => {
            return Err(Refusal::new(
                401,
                ErrorCode::TokenExpired,
                "This API key has expired.",
            ))
        }
        TokenStatus::Exhausted => {
            return Err(Refusal::new(
                402,
                ErrorCode::InsufficientTokenQuota,
                "This API key has no quota left.",
            ))
        }
        TokenStatus::Disabled => {
            return Err(Refusal::new(
                401,
                ErrorCode::TokenDisabled,
                "This API key has been disabled.",
            ))
        }
    }
    if !token.subnet.is_empty() {
        let ip = client_ip(req, &state.config.trusted_proxies);
        let allowed = ip
            .parse()
            .map(|ip| token.subnet.allows(ip))
            .unwrap_or(false);
        if !allowed {
            return Err(Refusal::new(
                403,
                ErrorCode::IpNotAllowed,
                format!("This API key may not be used from {ip}."),
            ));
        }
    }
    let pin = if token.user_role >= 10 {
        pin
    } else {
        ChannelPin::Any
    };
    Ok((token, pin))
}

/// `GET /v1/models`: the models this key may use.
pub async fn list_models(state: web::Data<AppState>, req: HttpRequest) -> HttpResponse {
    let (token, _) = match authenticate(&state, &req).await {
        Ok(t) => t,
        Err(r) => return refuse(Protocol::OpenAi, &r),
    };
    let models = allowed_models(&state, &token);
    let data: Vec<Value> = models
        .iter()
        .map(|m| json!({"id": m, "object": "model", "created": state.start_time, "owned_by": owner_of(&state, m)}))
        .collect();
    HttpResponse::Ok().json(json!({"object": "list", "data": data}))
}

/// `GET /v1/models/{model}`.
pub async fn get_model(
    state: web::Data<AppState>,
    req: HttpRequest,
    model: web::Path<String>,
) -> HttpResponse {
    let (token, _) = match authenticate(&state, &req).await {
        Ok(t) => t,
        Err(r) => return refuse(Protocol::OpenAi, &r),
    };
    let model = model.into_inner();
    if allowed_models(&state, &token).contains(&model) {
        HttpResponse::Ok().json(json!({"id": model, "object": "model", "created": state.start_time, "owned_by": owner_of(&state, &model)}))
    } else {
        refuse(Protocol::OpenAi, &Refusal::model_not_found(&model))
    }
}

/// Counts the request against the group's and the key's `api_rate`; false when over either.
pub(super) async fn within_rate(
    state: &AppState,
    token: &AuthToken,
    group: &str,
    ginfo: &super::GroupInfo,
) -> bool {
    // Limit keys are built only when a limit applies.
    let group_ok = ginfo.api_rate <= 0
        || state
            .relay
            .allow(&format!("g:{group}:{}", token.user_id), ginfo.api_rate)
            .await;
    group_ok
        && (token.api_rate <= 0
            || state
                .relay
                .allow(&format!("t:{}", token.id), token.api_rate)
                .await)
}

pub(super) fn allowed_models(state: &AppState, token: &AuthToken) -> Vec<String> {
    state
        .relay
        .snapshot()
        .models(token.group())
        .into_iter()
        .filter(|m| switchboard_domain::token::model_allowed(&token.models, m))
        .collect()
}

fn owner_of(state: &AppState, model: &str) -> String {
    let t = state
        .relay
        .prices()
        .lookup(model)
        .map(|p| p.channel_type)
        .unwrap_or(0);
    switchboard_store::model_owners::BUILT_IN
        .iter()
        .find(|(id, _)| i64::from(t) == *id)
        .map(|(_, n)| n.to_ascii_lowercase())
        .unwrap_or_else(|| "switchboard".into())
}

/// What a relayed call has once it is admitted: its group, the channels that may serve it (most
/// preferred first, as the snapshot orders them) and the model's price.
pub(super) struct Admitted {
    pub group: String,
    pub ginfo: super::GroupInfo,
    pub snapshot: Arc<super::snapshot::Snapshot>,
    pub candidates: Vec<Candidate>,
    pub price: Price,
}

/// The checks every relayed call passes before a channel is tried, in this order: the key may
/// use the model, its group is available, the rate limits admit the call, some channel of the
/// group serves the model (after the key's channel pin and `serves`: the family can do the call),
/// and the model has a price.
pub(super) async fn admit(
    state: &web::Data<AppState>,
    token: &AuthToken,
    model: &str,
    pin: ChannelPin,
    serves: impl Fn(&ChannelInfo) -> bool,
) -> Result<Admitted, Refusal> {
    let (model, admitted) = admit_any(state, token, &[model], pin, serves).await?;
    debug_assert_eq!(model, 0);
    Ok(admitted)
}

/// [`admit`] for a call that may be served under one of several model names (a Midjourney
/// mode's model, else the plain one): the first the key may use that a channel serves is taken
/// (its index is returned), priced by the first of it and the later names that has a price.
pub(super) async fn admit_any(
    state: &web::Data<AppState>,
    token: &AuthToken,
    models: &[&str],
    pin: ChannelPin,
    serves: impl Fn(&ChannelInfo) -> bool,
) -> Result<(usize, Admitted), Refusal> {
    // Every field of the consume record is bounded at admission, so that its write can't fail.
    for model in models {
        if let Err(e) = switchboard_domain::validate::relay_model_name(model) {
            return Err(Refusal::invalid(
                ErrorCode::InvalidModelName,
                format!("The model name is not valid: {e}."),
            ));
        }
    }
    let first = models.first().copied().unwrap_or_default();
    let allowed: Vec<usize> = (0..models.len())
        .filter(|&i| switchboard_domain::token::model_allowed(&token.models, models[i]))
        .collect();
    if allowed.is_empty() {
        return Err(Refusal::new(
            403,
            ErrorCode::ModelNotAllowed,
            format!("This API key may not use the model `{first}`."),
        ));
    }
    let Some((group, ginfo)) = state.relay.key_group(token) else {
        return Err(Refusal::new(403, ErrorCode::GroupNotAvailable, format!(
                "The group `{}` of this API key is not available: it is disabled, or the key's owner no longer belongs to it. Edit the key to use another group.",
                token.group()
            )));
    };
    if !within_rate(state, token, &group, &ginfo).await {
        return Err(Refusal::new(
            429,
            ErrorCode::RateLimitExceeded,
            "Rate limit reached for this API key; slow down and try again shortly.",
        ));
    }
    let snapshot = state.relay.snapshot();
    let mut pinned_away = false;
    for i in allowed {
        let mut candidates: Vec<Candidate> = snapshot.candidates(&group, models[i]);
        candidates.retain(|c| snapshot.channel(c.id).is_some_and(|ch| serves(&ch)));
        let served = !candidates.is_empty();
        match pin {
            ChannelPin::Only(id) => candidates.retain(|c| c.id == id),
            ChannelPin::Exclude(id) => candidates.retain(|c| c.id != id),
            ChannelPin::Any => {}
        }
        if candidates.is_empty() {
            pinned_away |= served;
            continue;
        }
        let prices = state.relay.prices();
        let Some(price) = models[i..].iter().find_map(|m| prices.lookup(m).cloned()) else {
            return Err(Refusal::new(400, ErrorCode::ModelPriceNotSet, format!("The model `{}` has no price yet; an administrator must set one before it can be used.", models[i])));
        };
        let admitted = Admitted {
            group,
            ginfo,
            snapshot,
            candidates,
            price,
        };
        return Ok((i, admitted));
    }
    if pinned_away {
        // The model is served, but not by the channel this call is pinned to.
        return Err(Refusal::new(
            503,
            ErrorCode::NoAvailableChannel,
            format!("The channel this call is pinned to does not serve `{first}` right now."),
        ));
    }
    Err(Refusal::model_not_found(first))
}

/// What a consume log keeps about how its cost was computed (`metadata`).
#[derive(serde::Serialize)]
pub(super) struct LogMeta<'a> {
    pub group_ratio: f64,
    pub input_ratio: f64,
    pub output_ratio: f64,
    pub price_type: switchboard_domain::price::PriceType,
    #[serde(serialize_with = "usage_counted")]
    pub usage: &'a Usage,
    pub usage_estimated: bool,
    /// Answered from the response cache: what the answer costs at full price, of which the
    /// request was charged `ChatCacheRatio` (the difference is the saving).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_full_quota: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_saved_quota: Option<i64>,
}

/// A consume log's usage: the prompt and completion counts, and of the detail buckets only
/// those with tokens (readers take an absent bucket as 0: the console's breakdown, `Usage`'s
/// `serde(default)`). Most answers fill two or three of the twelve; writing the zeros made every
/// log row ~200 bytes longer and its JSON a third of the settlement's work.
fn usage_counted<S: serde::Serializer>(u: &&Usage, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let buckets = [
        ("cached_tokens", u.cached_tokens),
        ("cached_write_tokens", u.cached_write_tokens),
        ("cached_read_tokens", u.cached_read_tokens),
        ("input_audio_tokens", u.input_audio_tokens),
        ("output_audio_tokens", u.output_audio_tokens),
        ("reasoning_tokens", u.reasoning_tokens),
        ("input_text_tokens", u.input_text_tokens),
        ("output_text_tokens", u.output_text_tokens),
        ("input_image_tokens", u.input_image_tokens),
        ("output_image_tokens", u.output_image_tokens),
    ];
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("prompt_tokens", &u.prompt_tokens)?;
    m.serialize_entry("completion_tokens", &u.completion_tokens)?;
    for (k, v) in buckets.into_iter().filter(|(_, v)| *v != 0) {
        m.serialize_entry(k, &v)?;
    }
    m.end()
}

/// The per-request facts needed to bill it.
struct Billing {
    state: web::Data<AppState>,
    token: Arc<AuthToken>,
    /// `OverdraftTolerance`: how far a settlement may take a balance below zero.
    tolerance: i64,
    /// Units of a per-call price (images asked for with `n`).
    units: i64,
    price: Price,
    group: String,
    group_ratio: f64,
    model: String,
    /// The reservation's estimate; replaced by a tokenizer count of `body` when the upstream
    /// reports no usage.
    prompt_estimate: i64,
    endpoint: Endpoint,
    /// The client's body, kept (after the upstream call) for that count.
    body: Value,
    approximate: bool,
    is_stream: bool,
    ip: String,
    started: Instant,
    request_id: switchboard_store::logs::Text,
    reservation: Option<Reservation>,
    /// Where a cacheable request's answer is kept once the upstream gave it.
    cache: Option<super::cache::Slot>,
    /// The `X-Switchboard-Cache` header's value, when the cache is on for the request.
    cache_header: Option<&'static str>,
    /// The channel that answered, or was tried last (0: none), and how the call ended, for
    /// the relay metrics recorded when the billing ends (with the stream, for streams).
    channel_id: i64,
    outcome: Outcome,
}

impl Billing {
    /// The prompt tokens to bill when the upstream reported none: the tokenizer's count of the
    /// request (or the fast estimate when `ApproximateTokenEnabled` is on).
    fn counted_prompt(&self) -> i64 {
        if self.approximate || self.body.is_null() {
            return self.prompt_estimate;
        }
        tokenizer::estimate_prompt(&self.model, self.endpoint, &self.body)
    }

    fn counted_text(&self, text: &str) -> i64 {
        if self.approximate {
            return (text.len() as i64 + 2) / 3;
        }
        tokenizer::count_text(&self.model, text)
    }

    fn settle(
        &mut self,
        channel_id: i64,
        usage: Usage,
        estimated: bool,
        first_response: Option<Duration>,
    ) -> i64 {
        self.settle_as(channel_id, usage, estimated, first_response, None)
    }

    /// Settles a request answered from the response cache: its kept usage priced today, times
    /// the cache ratio; no channel.
    fn settle_hit(&mut self, usage: Usage, ratio: f64) -> i64 {
        let elapsed = self.started.elapsed();
        self.settle_as(0, usage, false, Some(elapsed), Some(ratio))
    }

    fn settle_as(
        &mut self,
        channel_id: i64,
        usage: Usage,
        estimated: bool,
        first_response: Option<Duration>,
        cache_ratio: Option<f64>,
    ) -> i64 {
        let Some(r) = self.reservation.take() else {
            return 0;
        };
        let full = price::cost_units(&self.price, &usage, self.group_ratio, self.units);
        let quota = match cache_ratio {
            Some(ratio) => switchboard_domain::response_cache::hit_quota(full, ratio),
            None => full,
        };
        let meta = LogMeta {
            group_ratio: self.group_ratio,
            input_ratio: self.price.input,
            output_ratio: self.price.output,
            price_type: self.price.price_type,
            usage: &usage,
            usage_estimated: estimated,
            cache_full_quota: cache_ratio.map(|_| full),
            cache_saved_quota: cache_ratio.map(|_| full - quota),
        };
        let record = ConsumeRecord {
            quota,
            prompt_tokens: record::tokens(usage.prompt_tokens),
            completion_tokens: record::tokens(usage.completion_tokens),
            first_response_ms: first_response.map_or(0, record::millis),
            is_stream: self.is_stream,
            metadata: serde_json::to_string(&meta).unwrap_or_default(),
            cache_hit: cache_ratio.is_some(),
            ..self.record(LogType::Consume, channel_id)
        };
        // Redis mode applies the settlement later: a non-streamed answer awaits it before it
        // returns (`answer`), a stream kicks it when it ends (`MeteredStream::finish`).
        self.state.relay.ledger.settle(r, record, self.tolerance);
        quota
    }

    /// Writes the error log of a call that failed after admission (type 5, no charge): the
    /// status, code and message the client got, and the last channel tried. Off with the
    /// `ErrorLogEnabled` setting.
    fn log_failure(&self, channel_id: i64, refusal: &Refusal) {
        if !option_enabled(&self.state, "ErrorLogEnabled") {
            return;
        }
        let meta = json!({
            "status": refusal.status,
            "code": refusal.code,
            "kind": refusal.kind,
        });
        let mut content = refusal.message.clone();
        if content.len() > MAX_ERROR_LOG_BYTES {
            let mut end = MAX_ERROR_LOG_BYTES;
            while !content.is_char_boundary(end) {
                end -= 1;
            }
            content.truncate(end);
            content.push('…');
        }
        self.state.relay.ledger.record(ConsumeRecord {
            is_stream: self.is_stream,
            content,
            metadata: meta.to_string(),
            ..self.record(LogType::Error, channel_id)
        });
    }

    /// The record of this call on `channel_id`, nothing counted yet ([`Caller::record`]).
    fn record(&self, log_type: LogType, channel_id: i64) -> ConsumeRecord {
        let caller = Caller {
            token: &self.token,
            model: &self.model,
            group: &self.group,
            ip: &self.ip,
        };
        caller.record(log_type, self.request_id.clone(), channel_id, self.started)
    }

    fn refund(&mut self) {
        if let Some(r) = self.reservation.take() {
            self.state.relay.ledger.refund(r);
            super::kick_applier(&self.state);
        }
    }
}

impl Drop for Billing {
    /// A request that ends without settling (an error, or the client went away while waiting
    /// for a non-streamed answer) gives its reservation back.
    fn drop(&mut self) {
        self.refund();
        self.state.metrics.relay_request(
            &self.model,
            self.channel_id,
            self.outcome,
            self.started.elapsed(),
        );
    }
}

/// Longest reason an error log keeps (bytes; the client got the whole message).
const MAX_ERROR_LOG_BYTES: usize = 2_000;

/// Images one generation request may ask for (`n`), as OpenAI allows.
const MAX_IMAGES: i64 = 10;

/// How many units of a per-call price a request asks for: the images of an image generation
/// (`n`, 1 when absent); 1 otherwise. An `n` that is not a whole number from 1 to
/// [`MAX_IMAGES`] is refused: it decides the charge.
fn billed_units(endpoint: Endpoint, body: &Value) -> Option<i64> {
    if endpoint != Endpoint::ImagesGenerations {
        return Some(1);
    }
    match body.get("n") {
        None | Some(Value::Null) => Some(1),
        Some(v) => v.as_i64().filter(|n| (1..=MAX_IMAGES).contains(n)),
    }
}

/// The answers a request generates at once, each up to its output limit: chat's `n`,
/// completions' `n` and `best_of` (the larger), Gemini's `generationConfig.candidateCount`; 1
/// otherwise (and for values that are not a positive whole number, which the upstream refuses).
fn answers_asked(endpoint: Endpoint, body: &Value) -> i64 {
    let count = |v: Option<&Value>| v.and_then(Value::as_i64).filter(|n| *n >= 1).unwrap_or(1);
    match endpoint {
        Endpoint::ChatCompletions => count(body.get("n")),
        Endpoint::Completions => count(body.get("n")).max(count(body.get("best_of"))),
        Endpoint::GenerateContent => count(
            body.get("generationConfig")
                .and_then(|c| c.get("candidateCount")),
        ),
        _ => 1,
    }
}

/// `POST /v1/...` for every relayed endpoint: errors in OpenAI's shape, except for Anthropic
/// Messages clients, who get Anthropic's.
pub async fn relay(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    endpoint: Endpoint,
) -> HttpResponse {
    let protocol = if endpoint.is_anthropic() {
        Protocol::Anthropic
    } else {
        Protocol::OpenAi
    };
    if endpoint.is_anthropic() && !option_enabled(&state, "ClaudeAPIEnabled") {
        return refuse(protocol, &path_not_found(&req));
    }
    if body.len() > state.config.relay_body_bytes {
        return refuse(protocol, &Refusal::too_large(state.config.relay_body_bytes));
    }
    let answered = relay_parsed(state, req, body, endpoint, |body, content_type| {
        if endpoint.is_multipart() {
            RelayRequest::parse_multipart(endpoint, content_type.unwrap_or_default(), body)
        } else {
            RelayRequest::parse(endpoint, body)
        }
    })
    .await;
    answered.unwrap_or_else(|r| refuse(protocol, &r))
}

/// A boolean setting (`ClaudeAPIEnabled`, `GeminiAPIEnabled`).
pub(super) fn option_enabled(state: &AppState, key: &str) -> bool {
    let snap = state.view();
    View(&snap).bool(key)
}

/// The 404 of a path that does not exist, or of an inbound protocol switched off by its setting.
pub fn path_not_found(req: &HttpRequest) -> Refusal {
    Refusal::path_not_found(req.method().as_str(), req.path())
}

/// `POST /claude/v1/messages` (and `/v1/messages`): Anthropic Messages, served by Anthropic
/// channels.
pub async fn messages(state: web::Data<AppState>, req: HttpRequest, body: Bytes) -> HttpResponse {
    relay(state, req, body, Endpoint::Messages).await
}

/// `ANY /v1/messages/...` and `/claude/...` that match no route, in Anthropic's error shape.
pub async fn anthropic_not_found(req: HttpRequest) -> HttpResponse {
    refuse(Protocol::Anthropic, &path_not_found(&req))
}

/// `POST /v1/messages/count_tokens` (and under `/claude`): the input tokens of a Messages
/// request, `{"input_tokens": n}`. Counted by the upstream when a channel of Anthropic's own
/// API serves the model (dispatched like any call, free of charge), else by the tokenizer.
pub async fn count_tokens(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
) -> HttpResponse {
    count_tokens_answer(state, req, body)
        .await
        .unwrap_or_else(|r| refuse(Protocol::Anthropic, &r))
}

async fn count_tokens_answer(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
) -> Result<HttpResponse, Refusal> {
    if !option_enabled(&state, "ClaudeAPIEnabled") {
        return Err(path_not_found(&req));
    }
    if body.len() > state.config.relay_body_bytes {
        return Err(Refusal::too_large(state.config.relay_body_bytes));
    }
    let (token, pin) = authenticate(&state, &req).await?;
    let mut rreq = RelayRequest::parse(Endpoint::Messages, &body)?;
    rreq.anthropic_beta = anthropic_beta(&req);
    if !rreq.body.get("messages").is_some_and(Value::is_array) {
        return Err(Refusal::invalid(
            ErrorCode::InvalidRequest,
            "messages: an array of messages is required.",
        ));
    }
    match upstream_count(&state, &token, pin, &rreq, Some(&body)).await? {
        Some(answer) => Ok(HttpResponse::Ok()
            .content_type("application/json")
            .body(answer)),
        None => {
            let n = tokenizer::estimate_prompt(&rreq.model, Endpoint::Messages, &rreq.body);
            Ok(HttpResponse::Ok().json(json!({ "input_tokens": n })))
        }
    }
}

/// The upstream's own count of `rreq`'s input tokens (Anthropic's `count_tokens`, Gemini's
/// `countTokens`: [`switchboard_relay::Provider::counts_tokens`]) from a channel that serves the
/// model, dispatched like any call and free of charge: its answer as it came. `None` when no
/// such channel serves it (the caller counts with the tokenizer); admission's refusals as
/// they are (the key may not use the model, no channel serves it, ...).
pub(super) async fn upstream_count(
    state: &web::Data<AppState>,
    token: &Arc<AuthToken>,
    pin: switchboard_domain::token::ChannelPin,
    rreq: &RelayRequest,
    raw: Option<&[u8]>,
) -> Result<Option<Vec<u8>>, Refusal> {
    let endpoint = rreq.endpoint;
    let Admitted {
        snapshot,
        mut candidates,
        ..
    } = admit(state, token, &rreq.model, pin, |ch| {
        ch.provider.as_ref().is_some_and(|p| p.supports(endpoint))
            && ch.target.serves(endpoint, &rreq.model, false)
    })
    .await?;
    candidates.retain(|c| {
        snapshot.channel(c.id).is_some_and(|ch| {
            ch.provider
                .as_ref()
                .is_some_and(|p| p.counts_tokens(endpoint))
        })
    });
    if candidates.is_empty() {
        return Ok(None);
    }
    let source = edge::Source {
        state,
        snapshot: &snapshot,
        what: "token count upstream",
    };
    let (_, answer) = dispatch(
        &source,
        &candidates,
        &edge::policy(&state.settings.relay_options(), pin),
        &rreq.model,
        async |ch: &Arc<ChannelInfo>| {
            let no_count = || channel_failure(format!("channel {} cannot count tokens", ch.id));
            let provider = ch.provider.as_ref().ok_or_else(no_count)?;
            let client =
                super::channel_client(state, ch).map_err(|e| channel_failure(e.to_string()))?;
            let rb = provider
                .count_tokens(&client, &ch.target, rreq, raw)
                .ok_or_else(no_count)?
                .map_err(|e| channel_failure(e.to_string()))?;
            let resp = rb.send().await.map_err(|e| classify_transport(&e))?;
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let bytes = read_limited(resp, MAX_ERROR_BODY)
                .await
                .map_err(|e| classify_transport(&e))?;
            if (200..300).contains(&status) {
                return Ok(bytes);
            }
            Err(provider
                .classify(status, &bytes, &[])
                .with_retry_headers(&headers))
        },
    )
    .await?;
    Ok(Some(answer))
}

/// The client's `anthropic-beta` flags, for channels of Anthropic's protocol (every value of
/// the header, joined: a client may send one header per flag).
fn anthropic_beta(req: &HttpRequest) -> Option<String> {
    let flags: Vec<&str> = req
        .headers()
        .get_all("anthropic-beta")
        .filter_map(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .collect();
    (!flags.is_empty()).then(|| flags.join(","))
}

/// A channel that cannot be used as configured: another channel may work.
pub(super) fn channel_failure(message: String) -> UpstreamFailure {
    UpstreamFailure {
        status: 500,
        message,
        code: Some("channel_config_error".into()),
        retryable: true,
        ..UpstreamFailure::default()
    }
}

/// The relay path for a request that `parse` reads from the body (and content type) once the
/// key is authenticated: admission, reservation, dispatch (the relay crate's loop), answer.
pub(super) async fn relay_parsed(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: Bytes,
    endpoint: Endpoint,
    parse: impl FnOnce(&[u8], Option<&str>) -> Result<RelayRequest, RelayError>,
) -> Result<HttpResponse, Refusal> {
    let (token, pin) = authenticate(&state, &req).await?;
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let mut rreq = parse(&body, content_type)?;
    rreq.anthropic_beta = anthropic_beta(&req);
    // A Responses request continuing a kept conversation: the conversation is part of the
    // request from here on (the estimate, the reservation, every channel).
    super::responses::continue_conversation(&state, token.user_id, &mut rreq).await;
    let model = rreq.model.clone();
    let Admitted {
        group,
        ginfo,
        snapshot,
        candidates,
        price,
    } = admit(&state, &token, &model, pin, |ch| {
        ch.provider.as_ref().is_some_and(|p| p.supports(endpoint))
            && ch.target.serves(endpoint, &model, rreq.stream)
    })
    .await?;

    let (snap, relay_options) = state.settings.snapshot_and_relay_options();
    let o = View(&snap);
    // The reservation only needs an upper estimate: no BPE table on the request path. The
    // tokenizer counts for real only when an upstream reports no usage (see `Billing`).
    let prompt_estimate = if rreq.body.is_null() {
        0
    } else {
        tokenizer::estimate_prompt_fast(endpoint, &rreq.body)
    };
    let pre_consumed = relay_options.pre_consumed;
    let units = billed_units(endpoint, &rreq.body).ok_or_else(|| {
        Refusal::invalid(
            ErrorCode::InvalidN,
            format!("n must be a whole number from 1 to {MAX_IMAGES}."),
        )
    })?;
    let answers = answers_asked(endpoint, &rreq.body);
    let bounds = price::reservation_bounds(
        &price,
        &price::Demand {
            prompt_tokens: prompt_estimate,
            max_tokens: rreq.max_tokens,
            generates: endpoint.generates_text(),
            units,
            answers,
        },
        relay_options.default_max_output,
        ginfo.ratio,
        pre_consumed,
    );
    // Decided on the client's own body, before the balance rule may lower its output limit.
    let cache = super::cache::decide(&o, &token, &group, &model, endpoint, &rreq.body);
    let reservation = edge::reserve(&state, &token, bounds).await?;
    // The balance rule: the answer may not cost more than the reservation covers. When the
    // balance did not cover the worst case, the upstream is told to stop there.
    // Each of `n` answers may run to the limit: each gets its share of what is covered.
    let limit_before = rreq.max_tokens;
    if endpoint.generates_text() && reservation.amount < bounds.max {
        let covered = price::covered_completion_tokens(
            &price,
            prompt_estimate,
            reservation.amount,
            ginfo.ratio,
            pre_consumed,
        );
        rreq.limit_output((covered / answers).max(1));
    }
    // An answer the balance rule may cut short is never kept for others (a hit is still served).
    let output_cut = rreq.max_tokens != limit_before;
    let (cache, cache_header) = match cache {
        super::cache::Decision::Off => (None, None),
        super::cache::Decision::Skip => (None, Some("skip")),
        super::cache::Decision::Use(slot) => (Some(slot), Some("miss")),
    };
    // Gives the reservation back when dropped unsettled (any refusal below).
    let mut billing = Billing {
        state: state.clone(),
        token: Arc::clone(&token),
        tolerance: relay_options.overdraft_tolerance,
        units,
        price,
        group,
        group_ratio: ginfo.ratio,
        model: model.clone(),
        prompt_estimate,
        endpoint,
        body: Value::Null,
        approximate: relay_options.approximate,
        is_stream: rreq.stream,
        ip: client_ip(&req, &state.config.trusted_proxies),
        started: Instant::now(),
        request_id: crate::observe::request_id(&req),
        reservation: Some(reservation),
        cache,
        cache_header,
        channel_id: 0,
        // Until an answer or refusal says otherwise: the client went away while it waited.
        outcome: Outcome::Aborted,
    };
    if let Some(slot) = &billing.cache {
        if let Some(hit) = super::cache::lookup(&state, slot).await {
            let ratio = slot.ratio;
            billing.cache = None;
            billing.outcome = Outcome::CacheHit;
            billing.settle_hit(hit.usage, ratio);
            billing.state.relay.ledger.apply_queued().await;
            return Ok(HttpResponse::Ok()
                .insert_header((header::CONTENT_TYPE, "application/json"))
                .insert_header((super::cache::HEADER, "hit"))
                .body(hit.body));
        }
        if output_cut {
            billing.cache = None;
        }
    }
    // `get` twice, not `pointer` (which unescapes each step into a new string).
    let client_wants_usage = rreq
        .body
        .get("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        == Some(true)
        || !endpoint.wants_include_usage();
    let raw = if rreq.body.is_null() {
        Some(&body[..])
    } else {
        None
    };
    let source = edge::Source {
        state: &state,
        snapshot: &snapshot,
        what: "upstream",
    };
    let mut last_channel = 0;
    let dispatched = dispatch(
        &source,
        &candidates,
        &edge::policy(&relay_options, pin),
        &model,
        async |ch: &Arc<ChannelInfo>| {
            last_channel = ch.id;
            attempt_once(&state, ch, &rreq, raw, content_type, &o).await
        },
    )
    .await;
    let (ch, resp) = match dispatched {
        Ok(answered) => answered,
        Err(refusal) => {
            billing.log_failure(last_channel, &refusal);
            billing.channel_id = last_channel;
            billing.outcome = Outcome::of_refusal(&refusal);
            return Err(refusal);
        }
    };
    billing.channel_id = ch.id;
    billing.outcome = Outcome::Success;
    answer(resp, &ch, billing, rreq, client_wants_usage).await
}

/// One upstream call: a success response (status 2xx) or why it failed.
async fn attempt_once(
    state: &AppState,
    ch: &ChannelInfo,
    rreq: &RelayRequest,
    raw: Option<&[u8]>,
    content_type: Option<&str>,
    settings: &View<'_>,
) -> Result<reqwest::Response, UpstreamFailure> {
    let channel_error = channel_failure;
    let provider = ch
        .provider
        .as_ref()
        .ok_or_else(|| channel_error(format!("channel {} has no adapter", ch.id)))?;
    // The outbound URL policy for destinations not set by root: a refusal is this channel's
    // error, and the dispatch moves on.
    let public_only = super::public_only(state, ch);
    let client = state
        .relay
        .clients
        .for_channel(&ch.target, public_only)
        .map_err(|e| channel_error(e.to_string()))?;
    // Vertex AI's OAuth token (cached); nothing for other families.
    provider.authorize(&client, &ch.target).await?;
    let rb = provider
        .build(&client, &ch.target, rreq, raw, content_type)
        .map_err(|e| match e {
            // The request cannot be expressed in this channel's protocol (a translated family):
            // the client's to fix, the gateway's own refusal, not worth another channel.
            RelayError::InvalidRequest(m) => UpstreamFailure::refused_here(m),
            other => channel_error(other.to_string()),
        })?;
    let (client, request) = rb.build_split();
    let request = request.map_err(|e| channel_error(e.to_string()))?;
    let resp = state
        .relay
        .clients
        .execute(
            &ch.target,
            public_only,
            &client,
            request,
            super::snapshot::UPSTREAM_TIMEOUT,
        )
        .await?;
    checked(resp, provider, settings).await
}

/// An upstream answer with a 2xx status, else the failure it reports.
async fn checked(
    resp: reqwest::Response,
    provider: &switchboard_relay::Provider,
    settings: &View<'_>,
) -> Result<reqwest::Response, UpstreamFailure> {
    let status = resp.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(resp);
    }
    let headers = resp.headers().clone();
    let body = read_limited(resp, MAX_ERROR_BODY).await.unwrap_or_default();
    // The operator's disable keywords are read only here, on the failure path.
    let keywords_text = settings.text("DisableChannelKeywords");
    let keywords: Vec<&str> = keywords_text
        .lines()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect();
    Err(provider
        .classify(status, &body, &keywords)
        .with_retry_headers(&headers))
}

pub(super) async fn read_limited(
    resp: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, reqwest::Error> {
    let mut out = Vec::new();
    let mut s = resp.bytes_stream();
    while let Some(chunk) = s.next().await {
        let chunk = chunk?;
        let room = limit.saturating_sub(out.len());
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

/// Relays a successful upstream answer (translated to OpenAI's shape for families that need
/// it) and settles.
async fn answer(
    resp: reqwest::Response,
    ch: &ChannelInfo,
    mut billing: Billing,
    rreq: RelayRequest,
    client_wants_usage: bool,
) -> Result<HttpResponse, Refusal> {
    let status = StatusCode::from_u16(resp.status().as_u16()).unwrap_or(StatusCode::OK);
    let provider = ch.provider.as_ref();
    let translates = provider.is_some_and(|p| p.translates());
    // The usual value without a copy (a header value of the upstream's `http` version becomes
    // one of actix's by copying its bytes).
    const JSON: &str = "application/json";
    let mut content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .map_or(Some(HeaderValue::from_static(JSON)), |v| {
            if v.as_bytes() == JSON.as_bytes() {
                Some(HeaderValue::from_static(JSON))
            } else {
                HeaderValue::from_bytes(v.as_bytes()).ok()
            }
        })
        .unwrap_or_else(|| HeaderValue::from_static(JSON));
    // SSE, or Bedrock's binary event stream (translated into SSE).
    let is_sse = content_type.to_str().is_ok_and(|c| {
        c.starts_with("text/event-stream") || c.starts_with("application/vnd.amazon.eventstream")
    });
    let heartbeat_after = billing.token.heartbeat_after;
    let billing_header = billing.cache_header;
    // A bridged Responses answer's conversation is kept for `previous_response_id`.
    let keeps_conversation = provider.and_then(|p| p.bridge(rreq.endpoint))
        == Some(switchboard_relay::bridge::Bridge::Responses);
    if billing.is_stream && is_sse {
        let tap = provider.map(|p| p.stream_tap()).unwrap_or_default();
        let translator = provider.and_then(|p| p.stream_translator(&rreq));
        let conversation = keeps_conversation.then(|| rreq.clone());
        if translator.is_some() {
            content_type = HeaderValue::from_static("text/event-stream");
        }
        billing.body = rreq.body;
        let stream = MeteredStream {
            inner: Box::pin(resp.bytes_stream()),
            tap: Some(tap),
            billing: Some(billing),
            channel_id: ch.id,
            first: None,
            strip_usage: (!client_wants_usage).then(Vec::new),
            translator,
            translated_usage: None,
            ended: false,
            conversation,
        };
        let mut res = HttpResponse::build(status);
        res.insert_header((header::CONTENT_TYPE, content_type))
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .insert_header(("X-Accel-Buffering", "no"));
        if let Some(v) = billing_header {
            res.insert_header((super::cache::HEADER, v));
        }
        // Gathered: the events the upstream has already sent leave in one write, the first
        // ones with the head.
        return Ok(match heartbeat_after {
            Some(after) => {
                res.streaming(Gather::primed(super::heartbeat::Heartbeat::new(stream, after)).await)
            }
            None => res.streaming(Gather::primed(stream).await),
        });
    }
    let first = billing.started.elapsed();
    let body = match read_limited(resp, MAX_RESPONSE_BODY).await {
        Ok(b) => b,
        Err(e) => {
            billing.refund();
            billing.outcome = Outcome::Interrupted;
            return Err(bad_gateway(classify_transport(&e)));
        }
    };
    let answered = match provider {
        Some(p) => p.answer(&rreq, body),
        None => Ok(Answer {
            usage: switchboard_relay::usage::from_openai_bytes(&body),
            body,
        }),
    };
    let Answer { body, usage } = match answered {
        Ok(a) => a,
        Err(f) => {
            billing.refund();
            billing.outcome = Outcome::Interrupted;
            tracing::warn!(
                channel = ch.id,
                "untranslatable upstream answer: {}",
                f.message
            );
            return Err(bad_gateway(f));
        }
    };
    if translates || keeps_conversation {
        content_type = HeaderValue::from_static("application/json");
    }
    if keeps_conversation && status == StatusCode::OK {
        if let Ok(response) = serde_json::from_slice::<Value>(&body) {
            super::responses::keep(&billing.state, billing.token.user_id, &rreq, &response);
        }
    }
    billing.body = rreq.body;
    let (usage, estimated) = match usage {
        Some(u) => (u, false),
        None => {
            let text = completion_text(&body);
            let usage = Usage {
                prompt_tokens: billing.counted_prompt(),
                completion_tokens: billing.counted_text(&text),
                ..Usage::default()
            };
            (usage, true)
        }
    };
    billing.settle(ch.id, usage, estimated, Some(first));
    if let Some(slot) = billing.cache.take() {
        if status == StatusCode::OK {
            let model = billing.model.clone();
            super::cache::keep(
                &billing.state,
                slot,
                billing.token.user_id,
                &model,
                &body,
                &usage,
            );
        }
    }
    // The client's next request sees this one settled (Redis mode applies it before answering).
    billing.state.relay.ledger.apply_queued().await;
    let mut res = HttpResponse::build(status);
    res.insert_header((header::CONTENT_TYPE, content_type));
    if let Some(v) = billing_header {
        res.insert_header((super::cache::HEADER, v));
    }
    Ok(res.body(body))
}

/// An answer that arrived but cannot be relayed (cut off, or not in the family's shape).
fn bad_gateway(f: UpstreamFailure) -> Refusal {
    Refusal {
        status: 502,
        ..Refusal::upstream(f)
    }
}

/// The generated text of a non-streamed JSON answer (for counting when the upstream reports no
/// usage): OpenAI's choices, Gemini's candidate parts or Anthropic's text blocks.
fn completion_text(body: &[u8]) -> String {
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(candidates) = v.get("candidates").and_then(Value::as_array) {
        for c in candidates {
            let parts = c.pointer("/content/parts").and_then(Value::as_array);
            for p in parts.map(Vec::as_slice).unwrap_or(&[]) {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    out.push_str(t);
                }
            }
        }
    }
    if v.get("type").and_then(Value::as_str) == Some("message") {
        let blocks = v.get("content").and_then(Value::as_array);
        for b in blocks.map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(t) = b.get("text").and_then(Value::as_str) {
                out.push_str(t);
            }
        }
    }
    if let Some(choices) = v.get("choices").and_then(Value::as_array) {
        for c in choices {
            if let Some(t) = c.pointer("/message/content").and_then(Value::as_str) {
                out.push_str(t);
            }
            if let Some(t) = c.get("text").and_then(Value::as_str) {
                out.push_str(t);
            }
        }
    }
    out
}

/// The upstream's stream passed through chunk by chunk while the tap watches for usage; settles
/// when the stream ends or the client goes away (dropping the stream).
struct MeteredStream {
    inner: Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>>>>,
    tap: Option<SseTap>,
    billing: Option<Billing>,
    channel_id: i64,
    first: Option<Duration>,
    /// Set when the relay forced `include_usage` for a client that did not ask for it: the
    /// usage-only event (`"choices":[]`) is then held back, as the client expects none.
    strip_usage: Option<Vec<u8>>,
    /// Turns a non-OpenAI upstream stream into OpenAI chunks (Anthropic, Gemini; the tap and
    /// the client see its output), observes a stream passed through (the tap sees its output),
    /// or turns an OpenAI stream into another protocol (the tap sees the upstream's bytes).
    translator: Option<StreamTranslator>,
    /// A bridged Responses request, whose conversation is kept when the stream ends.
    conversation: Option<RelayRequest>,
    /// The translator's usage, kept when it is dropped at the end of the upstream stream.
    translated_usage: Option<Usage>,
    /// The upstream stream ended (it is not polled again).
    ended: bool,
}

/// Whether one SSE event is the usage-only chunk that `include_usage` adds (parsed, so
/// spaced and pretty-printed JSON count too).
fn is_usage_only_event(event: &[u8]) -> bool {
    switchboard_relay::stream::is_usage_only_event(event)
}

impl MeteredStream {
    /// Passes complete events through (minus the usage-only one), keeping a partial event for
    /// the next chunk. Events end with a blank line.
    fn strip_events(&mut self, chunk: Bytes) -> Option<Bytes> {
        let buf = self.strip_usage.as_mut()?;
        buf.extend_from_slice(&chunk);
        let mut out = Vec::with_capacity(buf.len());
        let mut start = 0;
        let mut i = 0;
        while i + 1 < buf.len() {
            let end = if buf[i] == b'\n' && buf[i + 1] == b'\n' {
                Some(i + 2)
            } else if i + 3 < buf.len() && &buf[i..i + 4] == b"\r\n\r\n" {
                Some(i + 4)
            } else {
                None
            };
            match end {
                Some(e) => {
                    if !is_usage_only_event(&buf[start..e]) {
                        out.extend_from_slice(&buf[start..e]);
                    }
                    start = e;
                    i = e;
                }
                None => i += 1,
            }
        }
        buf.drain(..start);
        Some(Bytes::from(out))
    }
}

impl MeteredStream {
    fn finish(&mut self) {
        let (Some(tap), Some(mut billing)) = (self.tap.take(), self.billing.take()) else {
            return;
        };
        let translated = self
            .translator
            .as_ref()
            .and_then(StreamTranslator::usage)
            .or(self.translated_usage.take());
        let mut outcome = tap.finish(&billing.model);
        if translated.is_some() {
            // The translator's count keeps Anthropic's cache buckets apart; the usage chunk
            // the tap read is only its OpenAI rendering.
            outcome.usage = translated;
        }
        let produced = outcome.usage.is_some() || outcome.completion_text_tokens > 0;
        if !outcome.saw_event || (!produced && outcome.error.is_some()) {
            billing.refund();
            return;
        }
        let usage = match outcome.usage {
            Some(u) => u,
            None => Usage {
                prompt_tokens: billing.counted_prompt(),
                completion_tokens: outcome.completion_text_tokens,
                ..Usage::default()
            },
        };
        billing.settle(self.channel_id, usage, outcome.usage.is_none(), self.first);
        super::kick_applier(&billing.state);
    }
}

impl Stream for MeteredStream {
    type Item = Result<Bytes, actix_web::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.poll_metered(cx)
    }
}

impl MeteredStream {
    fn poll_metered(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, actix_web::Error>>> {
        loop {
            let polled = if self.ended {
                Poll::Ready(None)
            } else {
                self.inner.as_mut().poll_next(cx)
            };
            match polled {
                Poll::Ready(Some(Ok(chunk))) => {
                    if self.first.is_none() {
                        self.first = self.billing.as_ref().map(|b| b.started.elapsed());
                    }
                    let (chunk, tapped) = match self.translator.as_mut() {
                        Some(t) if t.passes_through() => {
                            // The client gets the upstream's bytes; the tap their rendering.
                            let out = t.feed(&chunk);
                            if let Some(tap) = self.tap.as_mut() {
                                tap.feed(&out);
                            }
                            (chunk, true)
                        }
                        Some(t) if t.is_bridged() => {
                            // A client of another protocol: the tap reads the OpenAI chunks
                            // between the channel's stream and the client's events.
                            let out = match self.tap.as_mut() {
                                Some(tap) => t.feed_tapped(&chunk, tap),
                                None => t.feed(&chunk),
                            };
                            if out.is_empty() {
                                continue;
                            }
                            (Bytes::from(out), true)
                        }
                        Some(t) => {
                            let out = t.feed(&chunk);
                            if out.is_empty() {
                                // Only a partial or silent event: read on.
                                continue;
                            }
                            (Bytes::from(out), false)
                        }
                        None => (chunk, false),
                    };
                    if !tapped {
                        if let Some(tap) = self.tap.as_mut() {
                            tap.feed(&chunk);
                        }
                    }
                    if self.strip_usage.is_some() {
                        let out = self.strip_events(chunk).unwrap_or_default();
                        if out.is_empty() {
                            // Only a partial or held-back event: read on.
                            continue;
                        }
                        return Poll::Ready(Some(Ok(out)));
                    }
                    return Poll::Ready(Some(Ok(chunk)));
                }
                Poll::Ready(Some(Err(e))) => {
                    tracing::warn!(channel = self.channel_id, "upstream stream broke: {e}");
                    if let Some(b) = self.billing.as_mut() {
                        b.outcome = Outcome::Interrupted;
                    }
                    self.finish();
                    // Abort the response so the client sees an incomplete answer, not a clean
                    // end.
                    return Poll::Ready(Some(Err(actix_web::error::ErrorBadGateway(
                        "the upstream stream was interrupted",
                    ))));
                }
                Poll::Ready(None) => {
                    self.ended = true;
                    if let Some(mut t) = self.translator.take() {
                        let tail = match self.tap.as_mut() {
                            Some(tap) if t.is_bridged() => t.finish_tapped(tap),
                            _ => t.finish(),
                        };
                        self.translated_usage = t.usage();
                        if let (Some(rreq), Some(response), Some(b)) =
                            (&self.conversation, t.final_answer(), &self.billing)
                        {
                            super::responses::keep(&b.state, b.token.user_id, rreq, response);
                        }
                        if t.passes_through() {
                            if let Some(tap) = self.tap.as_mut() {
                                tap.feed(&tail);
                            }
                        } else if !tail.is_empty() {
                            if !t.is_bridged() {
                                if let Some(tap) = self.tap.as_mut() {
                                    tap.feed(&tail);
                                }
                            }
                            let out = if self.strip_usage.is_some() {
                                self.strip_events(Bytes::from(tail)).unwrap_or_default()
                            } else {
                                Bytes::from(tail)
                            };
                            if !out.is_empty() {
                                return Poll::Ready(Some(Ok(out)));
                            }
                        }
                    }
                    self.finish();
                    // A trailing event without its blank line still belongs to the client.
                    return match self.strip_usage.take() {
                        Some(rest) if !rest.is_empty() && !is_usage_only_event(&rest) => {
                            Poll::Ready(Some(Ok(Bytes::from(rest))))
                        }
                        _ => Poll::Ready(None),
                    };
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Drop for MeteredStream {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(usage: &Usage) -> Value {
        serde_json::to_value(LogMeta {
            group_ratio: 1.0,
            input_ratio: 1.0,
            output_ratio: 1.0,
            price_type: switchboard_domain::price::PriceType::Tokens,
            usage,
            usage_estimated: false,
            cache_full_quota: None,
            cache_saved_quota: None,
        })
        .unwrap_or_default()
    }

    #[test]
    fn a_logs_usage_keeps_every_counted_bucket_and_no_zeros() {
        // Every bucket set: the log's usage says what `Usage` itself says (a bucket added to
        // `Usage` but not to the log's list fails here).
        let full: Usage = serde_json::from_value(json!({
            "prompt_tokens": 1, "completion_tokens": 2, "cached_tokens": 3,
            "cached_write_tokens": 4, "cached_read_tokens": 5, "input_audio_tokens": 6,
            "output_audio_tokens": 7, "reasoning_tokens": 8, "input_text_tokens": 9,
            "output_text_tokens": 10, "input_image_tokens": 11, "output_image_tokens": 12,
        }))
        .unwrap_or_default();
        assert_eq!(
            meta(&full)["usage"],
            serde_json::to_value(full).unwrap_or_default()
        );
        // Only prompt, completion and the buckets with tokens; read back whole.
        let some = Usage {
            prompt_tokens: 0,
            completion_tokens: 7,
            reasoning_tokens: 3,
            ..Usage::default()
        };
        let m = meta(&some);
        assert_eq!(
            m["usage"],
            json!({"prompt_tokens": 0, "completion_tokens": 7, "reasoning_tokens": 3})
        );
        let back: Usage = serde_json::from_value(m["usage"].clone()).unwrap_or_default();
        assert_eq!(back, some);
    }
}
