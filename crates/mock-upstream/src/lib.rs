//! A fast OpenAI-compatible fake upstream on 127.0.0.1, for Switchboard's integration tests
//! (in-process, [`MockUpstream::start`]), the SDK end-to-end tests and the benchmarks (the
//! `mock-upstream` binary, [`run`]).
//!
//! Besides OpenAI's `/v1/...` it speaks, selected by path: Azure OpenAI
//! (`/openai/deployments/{deployment}/...?api-version=...`, `GET /openai/models`), Anthropic
//! Messages (`POST /v1/messages`, `GET /v1/models` with an `anthropic-version` header; see
//! `anthropic.rs`), Bedrock (`POST /model/{modelId}/invoke` and `/invoke-with-response-stream`,
//! SigV4-signed, the key being the access key; see `bedrock.rs`), Vertex AI
//! (`/v1/projects/{p}/locations/{r}/publishers/{google|anthropic}/models/{m}:{method}` with a
//! `Bearer ya29.mock-...` token from its `POST /token`, which takes service-account JWTs) and Gemini (`/v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent`, `:batchEmbedContents`, `:embedContent`, `:countTokens`,
//! `GET /v1beta/models`; see `gemini.rs`).
//! Errors come in each protocol's own shape.
//!
//! Its behaviour is chosen by the upstream API key (`Authorization: Bearer <key>`, or `api-key`,
//! `x-api-key`, `x-goog-api-key`, `?key=`), so two channels can behave differently for the same
//! model:
//!
//! | key | behaviour |
//! |---|---|
//! | `sk-mock-401` | 401 `invalid_api_key` |
//! | `sk-mock-500` | 500 `server_error` |
//! | `sk-mock-429` | 429 `rate_limit_exceeded`, `Retry-After: 20` (Gemini: a `RetryInfo` of 20s) |
//! | `sk-mock-400` | 400 `context_length_exceeded` |
//! | `sk-mock-quota` | 429 `insufficient_quota` (Anthropic: 400 "credit balance is too low") |
//! | `sk-mock-529` | 529 (Anthropic `overloaded_error`; Gemini 503 `UNAVAILABLE`) |
//! | `sk-mock-cache` | Anthropic: 1000 cache-read + 200 cache-write tokens; Gemini: 8 cached |
//! | `sk-mock-think` | Gemini: 5 thinking tokens |
//! | `sk-mock-nousage` | normal answers without any `usage` (streams too) |
//! | `sk-mock-slow` | 50 ms between stream chunks; non-streamed answers after 200 ms |
//! | `sk-mock-cut` | streams stop after two content chunks and the connection is dropped |
//! | `sk-mock-spaced` | chat streams written with spaces after `:` and `,` (`"choices": []`), as Python servers (vLLM, LiteLLM) write JSON |
//! | `sk-mock-long` | chat answers as long as allowed: [`LONG_ANSWER`] completion tokens, or the request's `max_tokens` / `max_completion_tokens` when lower (`finish_reason` `length`), for each of the request's `n` answers; streams send [`LONG_CHUNKS`] content chunks |
//! | `sk-mock-longslow` | `sk-mock-long` streamed with 100 ms between chunks (about 4 s) |
//! | `sk-mock-big` | non-streamed chat answers with [`BIG_CONTENT_BYTES`] of content (usage as normal) |
//! | `sk-mock-stall` | Realtime: a response stops after its first delta until `response.cancel` (see `realtime.rs`) |
//! | `co-...` | rerank answers in Cohere's shape (`meta.billed_units.search_units`, no `usage`) |
//! | anything else | normal answers |
//!
//! Cohere's Compatibility API (`/compatibility/v1/...`) answers like `/v1/...` but refuses
//! `stream_options` with 400, as Cohere does. Midjourney-proxy and Suno task endpoints live in
//! `tasks.rs`, the Realtime websocket (`GET /v1/realtime`, `GET /openai/realtime`) in
//! `realtime.rs` (see there).
//!
//! Fixed answers: chat completions say [`CONTENT`] with usage 11 prompt / 7 completion tokens
//! (a request with `tools` whose last message is not a `tool` result is answered with a call of
//! the first function with `{"query":"mock"}`, in every protocol; structured output, an
//! Anthropic forced `tool_choice` or Gemini's `responseMimeType: application/json`, is
//! answered with [`sample_json`] of the schema),
//! completions 5 / 7, embeddings 6, rerank 10 in total, Responses 9 input / 4 output.
//!
//! The hot path takes no lock unless recording is on (and never across an await) and logs
//! nothing.

use actix_web::dev::ServerHandle;
use actix_web::http::{Method, StatusCode};
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use base64::Engine as _;
use bytes::Bytes;
use futures_util::stream;
use serde_json::{json, Value};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod anthropic;
mod bedrock;
mod gemini;
mod realtime;
mod tasks;

pub use realtime::{RealtimeUsage, REALTIME_USAGE};

/// The text of every chat and text completion.
pub const CONTENT: &str = "Hello from the mock upstream.";
/// [`CONTENT`] as streamed, one piece per chunk.
pub const CONTENT_CHUNKS: [&str; 5] = ["Hello", " from", " the", " mock", " upstream."];
/// The text of every transcription and translation.
pub const TRANSCRIPT: &str = "hello from the mock upstream";

/// The largest request body accepted (audio uploads, large embedding batches).
const MAX_BODY: usize = 64 << 20;
/// Floats per embedding unless the request sets `dimensions`.
const EMBEDDING_DIMS: usize = 8;
const MAX_EMBEDDING_DIMS: usize = 8192;
/// Delay between stream chunks and before a non-streamed answer for `sk-mock-slow`.
const SLOW_CHUNK: Duration = Duration::from_millis(50);
const SLOW_ANSWER: Duration = Duration::from_millis(200);
/// How long a cut stream waits before dropping the connection, so the chunks before the cut
/// are delivered.
const CUT_GRACE: Duration = Duration::from_millis(20);
/// A 1x1 transparent PNG.
const PNG_1X1_B64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/// Models listed by `GET /v1/models`.
const MODELS: [&str; 14] = [
    "gpt-4o",
    "gpt-4o-mini",
    "gpt-4.1",
    "gpt-4.1-mini",
    "gpt-4.1-nano",
    "o3-mini",
    "text-embedding-3-small",
    "text-embedding-3-large",
    "omni-moderation-latest",
    "dall-e-3",
    "tts-1",
    "whisper-1",
    "rerank-v1",
    "deepseek-chat",
];

/// One request received by the mock.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    /// The query string (without `?`), empty when none.
    pub query: String,
    /// The `Authorization` header as sent (`Bearer sk-...`), empty when absent.
    pub authorization: String,
    /// The key, wherever it was sent (`Authorization: Bearer`, `api-key`, `x-api-key`,
    /// `x-goog-api-key`, `?key=`).
    pub key: String,
    /// Every header (lower-case names) with a text value.
    pub headers: Vec<(String, String)>,
    /// The JSON body, or `Null` (multipart, empty or not JSON).
    pub body: Value,
}

struct Shared {
    record: bool,
    chunk_delay: Duration,
    requests: Mutex<Vec<Recorded>>,
    seq: AtomicU64,
    realtime: realtime::RealtimeState,
}

impl Shared {
    fn new(record: bool, chunk_delay: Duration) -> Shared {
        Shared {
            record,
            chunk_delay,
            requests: Mutex::new(Vec::new()),
            seq: AtomicU64::new(1),
            realtime: realtime::RealtimeState::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Recorded>> {
        match self.requests.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

/// A mock upstream running in its own thread (own actix System) until dropped.
pub struct MockUpstream {
    /// `http://127.0.0.1:PORT` (no `/v1`, no trailing slash).
    pub base_url: String,
    shared: Arc<Shared>,
    handle: ServerHandle,
}

impl MockUpstream {
    /// Starts on 127.0.0.1:0 in its own thread with its own actix System; returns when listening.
    /// Records every request.
    pub fn start() -> MockUpstream {
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(l) => l,
            Err(e) => panic!("mock upstream: cannot bind 127.0.0.1:0: {e}"),
        };
        let addr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => panic!("mock upstream: no local address: {e}"),
        };
        let shared = Arc::new(Shared::new(true, Duration::ZERO));
        let (tx, rx) = std::sync::mpsc::channel();
        let for_server = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(format!("mock-upstream-{}", addr.port()))
            .spawn(move || {
                let system = actix_web::rt::System::new();
                system.block_on(async move {
                    match server(listener, for_server, 2, false) {
                        Ok(srv) => {
                            let _ = tx.send(Ok(srv.handle()));
                            let _ = srv.await;
                        }
                        Err(e) => {
                            let _ = tx.send(Err(e));
                        }
                    }
                });
            });
        if let Err(e) = spawned {
            panic!("mock upstream: cannot spawn its thread: {e}");
        }
        let handle = match rx.recv() {
            Ok(Ok(h)) => h,
            Ok(Err(e)) => panic!("mock upstream: cannot start: {e}"),
            Err(_) => panic!("mock upstream: its thread ended before listening"),
        };
        MockUpstream {
            base_url: format!("http://{addr}"),
            shared,
            handle,
        }
    }

    /// Every request received so far (path, Authorization header, JSON body or Null).
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().clone()
    }

    /// The value of header `name` (lower case) of a recorded request.
    pub fn header<'a>(r: &'a Recorded, name: &str) -> Option<&'a str> {
        r.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// How many requests reached this path (e.g. "/v1/chat/completions").
    pub fn count(&self, path: &str) -> usize {
        self.shared.lock().iter().filter(|r| r.path == path).count()
    }

    /// How many Realtime websocket sessions are open now.
    pub fn realtime_open(&self) -> usize {
        self.shared.realtime.open.load(Ordering::SeqCst)
    }

    /// The `type` of every Realtime client event received, in order.
    pub fn realtime_events(&self) -> Vec<String> {
        self.shared.realtime.events()
    }

    /// Every Realtime client event received, in order, as sent.
    pub fn realtime_event_bodies(&self) -> Vec<Value> {
        self.shared.realtime.bodies()
    }
}

impl Drop for MockUpstream {
    fn drop(&mut self) {
        // The stop command is sent at once; the server thread then ends by itself.
        drop(self.handle.stop(false));
    }
}

/// Serves on `listener` until the process gets SIGINT/SIGTERM. `record` keeps every request in
/// memory (off for benchmarks). `MOCK_CHUNK_DELAY_MS` (default 0) pauses between stream chunks.
pub async fn run(listener: TcpListener, record: bool) -> std::io::Result<()> {
    let delay = std::env::var("MOCK_CHUNK_DELAY_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let workers = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1);
    let shared = Arc::new(Shared::new(record, Duration::from_millis(delay)));
    server(listener, shared, workers, true)?.await
}

fn server(
    listener: TcpListener,
    shared: Arc<Shared>,
    workers: usize,
    signals: bool,
) -> std::io::Result<actix_web::dev::Server> {
    let data = web::Data::from(shared);
    let task_state = web::Data::new(tasks::Tasks::default());
    let mut srv = HttpServer::new(move || {
        App::new()
            .app_data(data.clone())
            .app_data(task_state.clone())
            .app_data(web::PayloadConfig::new(MAX_BODY))
            .configure(tasks::configure)
            .configure(realtime::configure)
            .default_service(web::to(handle))
    })
    .workers(workers)
    .backlog(4096)
    .max_connection_rate(4096)
    .shutdown_timeout(1)
    // Each SSE event goes out at once instead of waiting for the client's delayed ACK.
    .tcp_nodelay(true);
    if !signals {
        srv = srv.disable_signals();
    }
    Ok(srv.listen(listener)?.run())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Chat,
    Completions,
    Embeddings,
    Moderations,
    Images,
    Speech,
    Transcriptions,
    Translations,
    Rerank,
    Responses,
    Models,
    /// Anthropic `POST /v1/messages`.
    Messages,
    /// Anthropic `POST /v1/messages/count_tokens`: `{"input_tokens": COUNTED_TOKENS}`.
    CountTokens,
    /// Anthropic `GET /v1/models` (an `anthropic-version` header on `/v1/models`).
    AnthropicModels,
    /// Gemini `POST /v1beta/models/{model}:generateContent`.
    GeminiGenerate,
    /// Gemini `POST /v1beta/models/{model}:streamGenerateContent`.
    GeminiStream,
    /// Gemini `POST /v1beta/models/{model}:batchEmbedContents`.
    GeminiEmbed,
    /// Gemini `POST /v1beta/models/{model}:embedContent`.
    GeminiEmbedOne,
    /// Gemini `POST /v1beta/models/{model}:countTokens`: `{"totalTokens": COUNTED_TOKENS}`.
    GeminiCountTokens,
    /// Gemini `GET /v1beta/models`.
    GeminiModels,
    /// Bedrock `POST /model/{modelId}/invoke`.
    BedrockInvoke,
    /// Bedrock `POST /model/{modelId}/invoke-with-response-stream`.
    BedrockStream,
    /// Google OAuth `POST /token` (service-account JWT exchange, for Vertex AI).
    Token,
}

/// The protocol a request speaks, chosen by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proto {
    OpenAi,
    /// `/openai/deployments/{deployment}/...?api-version=...` with an `api-key` header.
    Azure,
    Anthropic,
    Gemini,
    /// `/model/{modelId}/invoke...`, SigV4-signed.
    Bedrock,
}

/// The OpenAI route of a `/v1`-less path (`/chat/completions`, ...).
fn openai_route(rest: &str) -> Option<Route> {
    Some(match rest {
        "/chat/completions" => Route::Chat,
        "/completions" => Route::Completions,
        "/embeddings" => Route::Embeddings,
        "/moderations" => Route::Moderations,
        "/images/generations" => Route::Images,
        "/audio/speech" => Route::Speech,
        "/audio/transcriptions" => Route::Transcriptions,
        "/audio/translations" => Route::Translations,
        "/rerank" => Route::Rerank,
        "/responses" => Route::Responses,
        _ => return None,
    })
}

/// The route, its protocol and the model named by the path (Azure deployment, Gemini model).
fn route(req: &HttpRequest) -> Option<(Route, Proto, Option<String>)> {
    let method = req.method();
    let path = req.path();
    if let Some(rest) = path.strip_prefix("/openai/deployments/") {
        let (deployment, rest) = rest.split_at(rest.find('/')?);
        if method != Method::POST {
            return None;
        }
        return Some((
            openai_route(rest)?,
            Proto::Azure,
            Some(deployment.to_owned()),
        ));
    }
    if path == "/openai/models" && method == Method::GET {
        return Some((Route::Models, Proto::Azure, None));
    }
    if path == "/token" && method == Method::POST {
        return Some((Route::Token, Proto::Gemini, None));
    }
    if let Some(rest) = path.strip_prefix("/v1/projects/") {
        // Vertex AI: {project}/locations/{region}/publishers/{publisher}/models/{model}:{method}
        if method != Method::POST {
            return None;
        }
        let (_, rest) = rest.split_once("/publishers/")?;
        let (publisher, rest) = rest.split_once("/models/")?;
        let (model, action) = rest.rsplit_once(':')?;
        let routed = match (publisher, action) {
            ("google", "generateContent") => (Route::GeminiGenerate, Proto::Gemini),
            ("google", "streamGenerateContent") => (Route::GeminiStream, Proto::Gemini),
            ("anthropic", "rawPredict") => (Route::Messages, Proto::Anthropic),
            ("anthropic", "streamRawPredict") => (Route::Messages, Proto::Anthropic),
            _ => return None,
        };
        return Some((routed.0, routed.1, Some(model.to_owned())));
    }
    if let Some(rest) = path.strip_prefix("/model/") {
        if method != Method::POST {
            return None;
        }
        let (model, action) = rest.rsplit_once('/')?;
        let route = match action {
            "invoke" => Route::BedrockInvoke,
            "invoke-with-response-stream" => Route::BedrockStream,
            _ => return None,
        };
        return Some((route, Proto::Bedrock, Some(bedrock::decode_model(model))));
    }
    if path == "/v1beta/models" && method == Method::GET {
        return Some((Route::GeminiModels, Proto::Gemini, None));
    }
    if let Some(rest) = path.strip_prefix("/v1beta/models/") {
        if method != Method::POST {
            return None;
        }
        let (model, action) = rest.rsplit_once(':')?;
        let route = match action {
            "generateContent" => Route::GeminiGenerate,
            "streamGenerateContent" => Route::GeminiStream,
            "batchEmbedContents" => Route::GeminiEmbed,
            "embedContent" => Route::GeminiEmbedOne,
            "countTokens" => Route::GeminiCountTokens,
            _ => return None,
        };
        return Some((route, Proto::Gemini, Some(model.to_owned())));
    }
    if method == Method::GET {
        if path != "/v1/models" {
            return None;
        }
        return Some(if req.headers().contains_key("anthropic-version") {
            (Route::AnthropicModels, Proto::Anthropic, None)
        } else {
            (Route::Models, Proto::OpenAi, None)
        });
    }
    if method != Method::POST {
        return None;
    }
    if path == "/v1/messages" {
        return Some((Route::Messages, Proto::Anthropic, None));
    }
    if path == "/v1/messages/count_tokens" {
        return Some((Route::CountTokens, Proto::Anthropic, None));
    }
    if let Some(rest) = path.strip_prefix("/compatibility/v1") {
        // Cohere's OpenAI Compatibility API.
        return Some((openai_route(rest)?, Proto::OpenAi, None));
    }
    Some((
        openai_route(path.strip_prefix("/v1")?)?,
        Proto::OpenAi,
        None,
    ))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Normal,
    Fail(u16, &'static str),
    NoUsage,
    Slow,
    Cut,
    /// Anthropic: cache reads and writes in the usage; Gemini: cached content tokens.
    Cache,
    /// Gemini: thinking tokens in the usage.
    Think,
    /// Chat streams in spaced JSON (`{"choices": [], "usage": {...}}`).
    Spaced,
    /// Chat answers as long as the request allows (`slow`: 100 ms between stream chunks).
    Long {
        slow: bool,
    },
    /// Non-streamed chat answers whose content is [`BIG_CONTENT_BYTES`] of text.
    Big,
}

/// The content length of an `sk-mock-big` chat answer.
pub const BIG_CONTENT_BYTES: usize = 4096;

/// Completion tokens of an `sk-mock-long` answer when the request sets no lower limit.
pub const LONG_ANSWER: i64 = 8000;
/// Content chunks of an `sk-mock-long` stream.
pub const LONG_CHUNKS: usize = 40;
const LONG_SLOW_CHUNK: Duration = Duration::from_millis(100);

fn mode(key: &str) -> Mode {
    match key {
        "sk-mock-401" => Mode::Fail(
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-mock-***","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        ),
        "sk-mock-500" => Mode::Fail(
            500,
            r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#,
        ),
        "sk-mock-529" => Mode::Fail(
            529,
            r#"{"error":{"message":"Overloaded","type":"server_error"}}"#,
        ),
        "sk-mock-429" => Mode::Fail(
            429,
            r#"{"error":{"message":"Rate limit reached for requests in organization org-mock on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
        ),
        "sk-mock-400" => Mode::Fail(
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ),
        "sk-mock-quota" => Mode::Fail(
            429,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        ),
        "sk-mock-nousage" => Mode::NoUsage,
        "sk-mock-slow" => Mode::Slow,
        "sk-mock-cut" => Mode::Cut,
        "sk-mock-cache" => Mode::Cache,
        "sk-mock-think" => Mode::Think,
        "sk-mock-spaced" => Mode::Spaced,
        "sk-mock-long" => Mode::Long { slow: false },
        "sk-mock-longslow" => Mode::Long { slow: true },
        "sk-mock-big" => Mode::Big,
        _ => Mode::Normal,
    }
}

/// What `/v1/messages/count_tokens` answers (a number no tokenizer would give for the tests'
/// prompts, so that a test can tell the upstream's count from the gateway's own).
pub const COUNTED_TOKENS: i64 = 4242;

/// Seconds a 429 asks the client to wait (`Retry-After`; Gemini: a `RetryInfo` detail).
pub const RETRY_AFTER_SECS: u64 = 20;

/// A failure in the protocol's own error shape; 429s carry [`RETRY_AFTER_SECS`].
fn failure(proto: Proto, key: &str, status: u16, openai_body: &'static str) -> HttpResponse {
    let mut resp = failure_body(proto, key, status, openai_body);
    if resp.status().as_u16() == 429 && proto != Proto::Gemini {
        resp.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            actix_web::http::header::HeaderValue::from(RETRY_AFTER_SECS),
        );
    }
    resp
}

fn failure_body(proto: Proto, key: &str, status: u16, openai_body: &'static str) -> HttpResponse {
    match proto {
        Proto::OpenAi | Proto::Azure => HttpResponse::build(status_code(status))
            .content_type("application/json")
            .body(openai_body),
        Proto::Anthropic => {
            let (status, kind, message) = match (key, status) {
                ("sk-mock-quota", _) => (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."),
                (_, 401) => (401, "authentication_error", "invalid x-api-key"),
                (_, 429) => (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
                (_, 529) => (529, "overloaded_error", "Overloaded"),
                (_, 400) => (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
                _ => (500, "api_error", "Internal server error"),
            };
            error(
                status,
                json!({"type": "error", "error": {"type": kind, "message": message}}),
            )
        }
        Proto::Bedrock => {
            let (status, message) = match status {
                401 => (
                    403,
                    "The security token included in the request is invalid.",
                ),
                429 => (429, "Too many requests, please wait before trying again."),
                400 => (400, "Input is too long for requested model."),
                529 | 503 => (503, "Bedrock is unable to process your request."),
                _ => (500, "The server encountered an internal error."),
            };
            error(status, json!({ "message": message }))
        }
        Proto::Gemini => {
            let (status, code, message, reason) = match (key, status) {
                ("sk-mock-quota", _) => (
                    429,
                    "RESOURCE_EXHAUSTED",
                    "You exceeded your current quota, please check your plan and billing details.",
                    None,
                ),
                (_, 401) => (
                    400,
                    "INVALID_ARGUMENT",
                    "API key not valid. Please pass a valid API key.",
                    Some("API_KEY_INVALID"),
                ),
                (_, 429) => (
                    429,
                    "RESOURCE_EXHAUSTED",
                    "Resource has been exhausted (e.g. check quota).",
                    None,
                ),
                (_, 400) => (
                    400,
                    "INVALID_ARGUMENT",
                    "The input token count exceeds the maximum number of tokens allowed.",
                    None,
                ),
                (_, 529 | 503) => (
                    503,
                    "UNAVAILABLE",
                    "The model is overloaded. Please try again later.",
                    None,
                ),
                _ => (500, "INTERNAL", "An internal error has occurred.", None),
            };
            let mut e = json!({"error": {"code": status, "message": message, "status": code}});
            if let Some(r) = reason {
                e["error"]["details"] = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": r, "domain": "googleapis.com"}]);
            } else if status == 429 {
                e["error"]["details"] = json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{RETRY_AFTER_SECS}s")}]);
            }
            error(status, e)
        }
    }
}

/// What a response builder needs to know about the request.
struct Ctx<'a> {
    route: Route,
    body: &'a Value,
    raw: &'a [u8],
    model: String,
    stream: bool,
    mode: Mode,
    delay: Duration,
    id: u64,
    created: u64,
}

impl Ctx<'_> {
    fn usage(&self) -> bool {
        self.mode != Mode::NoUsage
    }

    fn str_field(&self, name: &str) -> Option<&str> {
        self.body.get(name).and_then(Value::as_str)
    }
}

/// The key of a request: `Authorization: Bearer`, `api-key` (Azure), `x-api-key` (Anthropic),
/// `x-goog-api-key` or `?key=` (Gemini).
fn request_key(req: &HttpRequest) -> String {
    let h = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    if let Some(a) = h("authorization") {
        if let Some(rest) = a.strip_prefix("AWS4-HMAC-SHA256 Credential=") {
            // SigV4: the access key.
            return rest.split('/').next().unwrap_or_default().to_owned();
        }
        return a
            .strip_prefix("Bearer ")
            .or_else(|| a.strip_prefix("bearer "))
            .unwrap_or(a)
            .trim()
            .to_owned();
    }
    if let Some(k) = h("api-key")
        .or_else(|| h("x-api-key"))
        .or_else(|| h("x-goog-api-key"))
    {
        return k.to_owned();
    }
    req.query_string()
        .split('&')
        .find_map(|kv| kv.strip_prefix("key="))
        .unwrap_or_default()
        .to_owned()
}

async fn handle(req: HttpRequest, body: Bytes, shared: web::Data<Shared>) -> HttpResponse {
    let routed = route(&req);
    let auth = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let route = routed.as_ref().map(|r| r.0);
    let multipart = matches!(route, Some(Route::Transcriptions | Route::Translations));
    let parsed: Result<Value, ()> = if multipart || body.is_empty() {
        Ok(Value::Null)
    } else {
        serde_json::from_slice(&body).map_err(|_| ())
    };
    let key = request_key(&req);
    if shared.record {
        let recorded = Recorded {
            path: req.path().to_owned(),
            query: req.query_string().to_owned(),
            authorization: auth.to_owned(),
            key: key.clone(),
            headers: req
                .headers()
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect(),
            body: parsed.clone().unwrap_or(Value::Null),
        };
        shared.lock().push(recorded);
    }
    let Some((route, proto, path_model)) = routed else {
        return error(
            404,
            json!({"error": {"message": format!("Invalid URL ({} {})", req.method(), req.path()), "type": "invalid_request_error", "param": null, "code": null}}),
        );
    };
    if proto == Proto::Azure && !req.query_string().contains("api-version=") {
        return error(
            404,
            json!({"error": {"code": "404", "message": "Resource not found"}}),
        );
    }
    let vertex = req.path().starts_with("/v1/projects/");
    if route == Route::Token {
        return vertex_token(&body);
    }
    if vertex && !auth.starts_with("Bearer ya29.mock-") {
        return error(
            401,
            json!({"error": {"code": 401, "message": "Request had invalid authentication credentials.", "status": "UNAUTHENTICATED"}}),
        );
    }
    if proto == Proto::Anthropic && !vertex && !req.headers().contains_key("anthropic-version") {
        return error(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "anthropic-version: header is required"}}),
        );
    }
    if proto == Proto::Bedrock && !bedrock::signed(&req) {
        return error(403, json!({"message": "Missing Authentication Token"}));
    }
    if req.path().starts_with("/compatibility/")
        && matches!(&parsed, Ok(v) if v.get("stream_options").is_some())
    {
        return error(
            400,
            json!({"message": "invalid request: stream_options is not supported"}),
        );
    }
    let mode = mode(&key);
    if let Mode::Fail(status, body) = mode {
        return failure(proto, &key, status, body);
    }
    let Ok(body_json) = parsed else {
        return error(
            400,
            json!({"error": {"message": "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "type": "invalid_request_error", "param": null, "code": null}}),
        );
    };
    let refusal = match route {
        Route::Messages | Route::BedrockInvoke | Route::BedrockStream => {
            anthropic::check(&body_json).map(|m| (proto, m))
        }
        Route::GeminiGenerate | Route::GeminiStream => {
            gemini::check(&body_json).map(|m| (proto, m))
        }
        _ => None,
    };
    if let Some((proto, message)) = refusal {
        return match proto {
            Proto::Gemini => error(
                400,
                json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}),
            ),
            Proto::Bedrock => error(400, json!({ "message": message })),
            _ => error(
                400,
                json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
            ),
        };
    }
    let model = match body_json.get("model").and_then(Value::as_str) {
        _ if matches!(proto, Proto::Gemini | Proto::Bedrock) || vertex => {
            path_model.unwrap_or_default()
        }
        Some(m) => m.to_owned(),
        None if multipart => form_field(&body, "model")
            .or(path_model)
            .unwrap_or_default(),
        None => match (route, path_model) {
            (_, Some(deployment)) => deployment,
            (Route::Moderations, None) => "omni-moderation-latest".to_owned(),
            (Route::Images, None) => "dall-e-2".to_owned(),
            _ => String::new(),
        },
    };
    let stream = matches!(route, Route::GeminiStream | Route::BedrockStream)
        || body_json
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false);
    let delay = if mode == Mode::Slow {
        SLOW_CHUNK
    } else if mode == (Mode::Long { slow: true }) {
        LONG_SLOW_CHUNK
    } else {
        shared.chunk_delay
    };
    let ctx = Ctx {
        route,
        body: &body_json,
        raw: &body,
        model,
        stream,
        mode,
        delay,
        id: shared.seq.fetch_add(1, Ordering::Relaxed),
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    };
    let streams = ctx.stream
        && matches!(
            route,
            Route::Chat
                | Route::Completions
                | Route::Responses
                | Route::Messages
                | Route::GeminiStream
                | Route::BedrockStream
        );
    if !streams && mode == Mode::Slow {
        actix_web::rt::time::sleep(SLOW_ANSWER).await;
    }
    match route {
        Route::Chat if streams => chat_stream(&ctx),
        Route::Chat => json_ok(&chat(&ctx)),
        Route::Completions if streams => completion_stream(&ctx),
        Route::Completions => json_ok(&completion(&ctx)),
        Route::Responses if streams => responses_stream(&ctx),
        Route::Responses => json_ok(&response_object(&ctx, "completed")),
        Route::Embeddings => json_ok(&embeddings(&ctx)),
        Route::Moderations => json_ok(&moderations(&ctx)),
        Route::Images => json_ok(&images(&ctx)),
        Route::Speech => speech(),
        Route::Transcriptions | Route::Translations => transcription(&ctx),
        Route::Rerank if key.starts_with("co-") => json_ok(&cohere_rerank(&ctx)),
        Route::Rerank => json_ok(&rerank(&ctx)),
        Route::Models => json_ok(&models()),
        Route::Messages if streams => anthropic::stream(&ctx),
        Route::Messages => json_ok(&anthropic::message(&ctx)),
        Route::AnthropicModels => json_ok(&anthropic::models()),
        Route::CountTokens => json_ok(&json!({ "input_tokens": COUNTED_TOKENS })),
        Route::GeminiStream => gemini::stream(&ctx),
        Route::GeminiGenerate => json_ok(&gemini::generate(&ctx)),
        Route::GeminiEmbed => json_ok(&gemini::embed(&ctx)),
        Route::GeminiEmbedOne => json_ok(&gemini::embed_one(&ctx)),
        Route::GeminiCountTokens => json_ok(&json!({ "totalTokens": COUNTED_TOKENS })),
        Route::GeminiModels => json_ok(&gemini::models()),
        Route::BedrockStream => anthropic::bedrock_stream(&ctx),
        Route::BedrockInvoke => json_ok(&anthropic::message(&ctx)),
        Route::Token => vertex_token(&body),
    }
}

fn status_code(status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn error(status: u16, body: Value) -> HttpResponse {
    HttpResponse::build(status_code(status)).json(body)
}

fn json_ok(v: &Value) -> HttpResponse {
    HttpResponse::Ok().json(v)
}

// ---------------------------------------------------------------------------------------------
// Chat completions and completions

fn chat_usage() -> Value {
    json!({
        "prompt_tokens": 11,
        "completion_tokens": 7,
        "total_tokens": 18,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
    })
}

/// The completion tokens of a long answer: [`LONG_ANSWER`], or the request's limit when lower.
fn long_completion(ctx: &Ctx) -> i64 {
    ["max_tokens", "max_completion_tokens"]
        .iter()
        .filter_map(|f| ctx.body.get(*f).and_then(Value::as_i64))
        .min()
        .map_or(LONG_ANSWER, |m| m.clamp(1, LONG_ANSWER))
}

/// The answers a chat request asks for (`n`, 1 to 16).
fn choices_asked(ctx: &Ctx) -> i64 {
    ctx.body
        .get("n")
        .and_then(Value::as_i64)
        .map_or(1, |n| n.clamp(1, 16))
}

/// The usage of a chat answer: the fixed one, or a long answer's.
fn chat_usage_of(ctx: &Ctx) -> Value {
    let mut u = chat_usage();
    if let Mode::Long { .. } = ctx.mode {
        // Each of the `n` answers as long as allowed.
        let c = long_completion(ctx) * choices_asked(ctx);
        u["completion_tokens"] = json!(c);
        u["total_tokens"] = json!(11 + c);
    }
    u
}

/// `length` when a long answer was cut by the request's limit.
fn chat_finish(ctx: &Ctx) -> &'static str {
    match ctx.mode {
        Mode::Long { .. } if long_completion(ctx) < LONG_ANSWER => "length",
        _ => "stop",
    }
}

fn completion_usage() -> Value {
    json!({"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12})
}

/// The function to call: the first of `tools`, unless the last message is a tool result.
fn tool_to_call(ctx: &Ctx) -> Option<String> {
    let name = ctx
        .body
        .pointer("/tools/0/function/name")
        .and_then(Value::as_str)?
        .to_owned();
    let last = ctx
        .body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())?;
    (last.get("role").and_then(Value::as_str) != Some("tool")).then_some(name)
}

/// The arguments of the mock's tool calls, as streamed.
const TOOL_ARGUMENT_CHUNKS: [&str; 2] = ["{\"query\":", " \"mock\"}"];

fn chat(ctx: &Ctx) -> Value {
    if let Some(name) = tool_to_call(ctx) {
        let mut v = json!({
            "id": format!("chatcmpl-mock{}", ctx.id),
            "object": "chat.completion",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": null, "refusal": null, "tool_calls": [{
                    "id": format!("call_mock{}", ctx.id),
                    "type": "function",
                    "function": {"name": name, "arguments": TOOL_ARGUMENT_CHUNKS.concat()},
                }]},
                "logprobs": null,
                "finish_reason": "tool_calls"
            }]
        });
        if ctx.usage() {
            v["usage"] = chat_usage();
        }
        return v;
    }
    let mut v = json!({
        "id": format!("chatcmpl-mock{}", ctx.id),
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": "fp_mock",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": CONTENT, "refusal": null, "annotations": []},
            "logprobs": null,
            "finish_reason": chat_finish(ctx)
        }],
        "service_tier": "default"
    });
    if ctx.mode == Mode::Big {
        v["choices"][0]["message"]["content"] = json!("mock ".repeat(BIG_CONTENT_BYTES / 5));
    }
    if let Mode::Long { .. } = ctx.mode {
        let one = v["choices"][0].clone();
        v["choices"] = (0..choices_asked(ctx))
            .map(|i| {
                let mut c = one.clone();
                c["index"] = json!(i);
                c
            })
            .collect();
    }
    if ctx.usage() {
        v["usage"] = chat_usage_of(ctx);
    }
    v
}

/// Whether a stream request asked for the final usage chunk.
fn include_usage(ctx: &Ctx) -> bool {
    ctx.usage()
        && ctx
            .body
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
}

fn chat_stream(ctx: &Ctx) -> HttpResponse {
    let with_usage = include_usage(ctx);
    let id = format!("chatcmpl-mock{}", ctx.id);
    let chunk = |delta: Value, finish: Value| {
        let mut v = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": "fp_mock",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        });
        if with_usage {
            // As OpenAI does when usage is requested: null on every chunk but the last.
            v["usage"] = Value::Null;
        }
        data_of(ctx, &v)
    };
    let mut events = Vec::with_capacity(9);
    events.push(chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    ));
    let tool = tool_to_call(ctx);
    if let Some(name) = &tool {
        events.push(chunk(
            json!({"tool_calls": [{"index": 0, "id": format!("call_mock{}", ctx.id), "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in TOOL_ARGUMENT_CHUNKS {
            events.push(chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    } else if let Mode::Long { .. } = ctx.mode {
        for i in 0..LONG_CHUNKS {
            events.push(chunk(json!({"content": format!("word{i} ")}), Value::Null));
        }
    } else {
        for piece in CONTENT_CHUNKS {
            events.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    if ctx.mode == Mode::Cut {
        events.truncate(3);
        return sse(events, ctx.delay, true);
    }
    let finish = if tool.is_some() {
        "tool_calls"
    } else {
        chat_finish(ctx)
    };
    events.push(chunk(json!({}), json!(finish)));
    if with_usage {
        events.push(data_of(
            ctx,
            &json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": ctx.model,
                "system_fingerprint": "fp_mock",
                "choices": [],
                "usage": chat_usage_of(ctx)
            }),
        ));
    }
    events.push(Bytes::from_static(b"data: [DONE]\n\n"));
    sse(events, ctx.delay, false)
}

fn completion(ctx: &Ctx) -> Value {
    let mut v = json!({
        "id": format!("cmpl-mock{}", ctx.id),
        "object": "text_completion",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": "fp_mock",
        "choices": [{"text": CONTENT, "index": 0, "logprobs": null, "finish_reason": "stop"}]
    });
    if ctx.usage() {
        v["usage"] = completion_usage();
    }
    v
}

fn completion_stream(ctx: &Ctx) -> HttpResponse {
    let with_usage = include_usage(ctx);
    let id = format!("cmpl-mock{}", ctx.id);
    let chunk = |text: &str, finish: Value| {
        let mut v = json!({
            "id": id,
            "object": "text_completion",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": "fp_mock",
            "choices": [{"text": text, "index": 0, "logprobs": null, "finish_reason": finish}]
        });
        if with_usage {
            v["usage"] = Value::Null;
        }
        data(&v)
    };
    let mut events: Vec<Bytes> = CONTENT_CHUNKS
        .iter()
        .map(|p| chunk(p, Value::Null))
        .collect();
    if ctx.mode == Mode::Cut {
        events.truncate(2);
        return sse(events, ctx.delay, true);
    }
    events.push(chunk("", json!("stop")));
    if with_usage {
        events.push(data(&json!({
            "id": id,
            "object": "text_completion",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": "fp_mock",
            "choices": [],
            "usage": completion_usage()
        })));
    }
    events.push(Bytes::from_static(b"data: [DONE]\n\n"));
    sse(events, ctx.delay, false)
}

// ---------------------------------------------------------------------------------------------
// Responses API

fn response_object(ctx: &Ctx, status: &str) -> Value {
    let done = status == "completed";
    let output = if done {
        json!([{
            "type": "message",
            "id": format!("msg_mock{}", ctx.id),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": CONTENT, "annotations": [], "logprobs": []}]
        }])
    } else {
        json!([])
    };
    let usage = if done && ctx.usage() {
        json!({
            "input_tokens": 9,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 4,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 13
        })
    } else {
        Value::Null
    };
    let mut v = json!({
        "id": format!("resp_mock{}", ctx.id),
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "instructions": null,
        "max_output_tokens": null,
        "model": ctx.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "store": true,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "metadata": {}
    });
    if done {
        v["output_text"] = json!(CONTENT);
    }
    if !usage.is_null() || ctx.usage() {
        v["usage"] = usage;
    }
    v
}

fn responses_stream(ctx: &Ctx) -> HttpResponse {
    let item_id = format!("msg_mock{}", ctx.id);
    let event = |name: &str, v: Value| {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"event: ");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\ndata: ");
        let _ = serde_json::to_writer(&mut out, &v);
        out.extend_from_slice(b"\n\n");
        Bytes::from(out)
    };
    let delta = |seq: u64, text: &str| {
        event(
            "response.output_text.delta",
            json!({"type": "response.output_text.delta", "sequence_number": seq, "item_id": item_id, "output_index": 0, "content_index": 0, "delta": text, "logprobs": []}),
        )
    };
    let mut events = vec![
        event(
            "response.created",
            json!({"type": "response.created", "sequence_number": 0, "response": response_object(ctx, "in_progress")}),
        ),
        delta(1, "Hello from"),
        delta(2, " the mock upstream."),
    ];
    if ctx.mode == Mode::Cut {
        return sse(events, ctx.delay, true);
    }
    events.push(event(
        "response.completed",
        json!({"type": "response.completed", "sequence_number": 3, "response": response_object(ctx, "completed")}),
    ));
    sse(events, ctx.delay, false)
}

// ---------------------------------------------------------------------------------------------
// Embeddings, moderations, images, audio, rerank, models

/// How many items an `input` holds: a string or a token array is one; an array of strings or
/// of token arrays is one per element.
fn input_items(input: Option<&Value>) -> usize {
    match input {
        Some(Value::Array(a)) if a.iter().all(Value::is_number) => usize::from(!a.is_empty()),
        Some(Value::Array(a)) => a.len(),
        Some(Value::Null) | None => 0,
        Some(_) => 1,
    }
}

fn embedding_values(index: usize, dims: usize) -> Vec<f32> {
    (0..dims)
        .map(|d| ((index * 31 + d * 7) % 97) as f32 / 97.0 - 0.5)
        .collect()
}

fn embeddings(ctx: &Ctx) -> Value {
    let n = input_items(ctx.body.get("input")).max(1);
    let dims = ctx
        .body
        .get("dimensions")
        .and_then(Value::as_u64)
        .map(|d| (d as usize).clamp(1, MAX_EMBEDDING_DIMS))
        .unwrap_or(EMBEDDING_DIMS);
    let base64 = ctx.str_field("encoding_format") == Some("base64");
    let data: Vec<Value> = (0..n)
        .map(|i| {
            let values = embedding_values(i, dims);
            let embedding = if base64 {
                let bytes: Vec<u8> = values.iter().flat_map(|f| f.to_le_bytes()).collect();
                json!(base64::engine::general_purpose::STANDARD.encode(bytes))
            } else {
                json!(values)
            };
            json!({"object": "embedding", "index": i, "embedding": embedding})
        })
        .collect();
    let mut v = json!({"object": "list", "data": data, "model": ctx.model});
    if ctx.usage() {
        v["usage"] = json!({"prompt_tokens": 6, "total_tokens": 6});
    }
    v
}

fn moderations(ctx: &Ctx) -> Value {
    const CATEGORIES: [&str; 13] = [
        "harassment",
        "harassment/threatening",
        "hate",
        "hate/threatening",
        "illicit",
        "illicit/violent",
        "self-harm",
        "self-harm/instructions",
        "self-harm/intent",
        "sexual",
        "sexual/minors",
        "violence",
        "violence/graphic",
    ];
    let n = input_items(ctx.body.get("input")).max(1);
    let mut categories = serde_json::Map::new();
    let mut scores = serde_json::Map::new();
    let mut applied = serde_json::Map::new();
    for c in CATEGORIES {
        categories.insert(c.to_owned(), json!(false));
        scores.insert(c.to_owned(), json!(0.0001));
        applied.insert(c.to_owned(), json!(["text"]));
    }
    let result = json!({
        "flagged": false,
        "categories": categories,
        "category_scores": scores,
        "category_applied_input_types": applied
    });
    json!({"id": format!("modr-mock{}", ctx.id), "model": ctx.model, "results": vec![result; n]})
}

fn images(ctx: &Ctx) -> Value {
    let n = ctx
        .body
        .get("n")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .clamp(1, 10);
    let prompt = ctx.str_field("prompt").unwrap_or("");
    let revised = format!("A mock picture of: {prompt}");
    let b64 = ctx.str_field("response_format") == Some("b64_json");
    let data: Vec<Value> = (1..=n)
        .map(|i| {
            if b64 {
                json!({"b64_json": PNG_1X1_B64, "revised_prompt": revised})
            } else {
                json!({"url": format!("https://images.example.invalid/{i}.png"), "revised_prompt": revised})
            }
        })
        .collect();
    let mut v = json!({"created": ctx.created, "data": data});
    // gpt-image models report token usage, as OpenAI's do: the prompt split into text and image
    // tokens (an edit's input image), the output all image tokens.
    if ctx.model.starts_with("gpt-image") {
        let output = IMAGE_OUTPUT_TOKENS * n as i64;
        v["usage"] = json!({
            "total_tokens": IMAGE_TEXT_TOKENS + IMAGE_INPUT_TOKENS + output,
            "input_tokens": IMAGE_TEXT_TOKENS + IMAGE_INPUT_TOKENS,
            "output_tokens": output,
            "input_tokens_details": {"text_tokens": IMAGE_TEXT_TOKENS, "image_tokens": IMAGE_INPUT_TOKENS}
        });
    }
    v
}

/// Usage of a `gpt-image*` generation: text and image tokens of the prompt, image tokens per
/// picture of the answer.
pub const IMAGE_TEXT_TOKENS: i64 = 40;
pub const IMAGE_INPUT_TOKENS: i64 = 10;
pub const IMAGE_OUTPUT_TOKENS: i64 = 1056;

fn speech() -> HttpResponse {
    // An ID3v2.4 header with an empty tag, then padding: enough to look like an MP3 file.
    let mut audio = Vec::with_capacity(128);
    audio.extend_from_slice(b"ID3\x04\x00\x00\x00\x00\x00\x00");
    audio.resize(128, 0);
    HttpResponse::Ok().content_type("audio/mpeg").body(audio)
}

fn transcription(ctx: &Ctx) -> HttpResponse {
    match form_field(ctx.raw, "response_format").as_deref() {
        Some("text") => HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(format!("{TRANSCRIPT}\n")),
        Some("srt") => HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(format!(
                "1\n00:00:00,000 --> 00:00:01,000\n{TRANSCRIPT}\n\n"
            )),
        Some("vtt") => HttpResponse::Ok()
            .content_type("text/plain; charset=utf-8")
            .body(format!(
                "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\n{TRANSCRIPT}\n\n"
            )),
        Some("verbose_json") => json_ok(&json!({
            "task": if ctx.route == Route::Translations { "translate" } else { "transcribe" },
            "language": "english",
            "duration": 1.0,
            "text": TRANSCRIPT,
            "segments": [{"id": 0, "seek": 0, "start": 0.0, "end": 1.0, "text": TRANSCRIPT, "tokens": [], "temperature": 0.0, "avg_logprob": -0.1, "compression_ratio": 1.0, "no_speech_prob": 0.0}]
        })),
        _ => json_ok(&json!({"text": TRANSCRIPT})),
    }
}

/// Google's OAuth token endpoint for service-account JWTs: `grant_type` must be the JWT bearer
/// grant and `assertion` a three-part JWT; the token is `ya29.mock-<n>`.
fn vertex_token(body: &[u8]) -> HttpResponse {
    let form = String::from_utf8_lossy(body);
    let field = |name: &str| {
        form.split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .unwrap_or("")
            .to_owned()
    };
    let grant_ok = field("grant_type") == "urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer";
    if !grant_ok || field("assertion").split('.').count() != 3 {
        return error(
            400,
            json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."}),
        );
    }
    static ISSUED: AtomicU64 = AtomicU64::new(0);
    let n = ISSUED.fetch_add(1, Ordering::Relaxed);
    json_ok(
        &json!({"access_token": format!("ya29.mock-{n}"), "expires_in": 3599, "token_type": "Bearer"}),
    )
}

/// Cohere's rerank answer: the same results, `meta` instead of `usage`.
fn cohere_rerank(ctx: &Ctx) -> Value {
    let mut v = rerank(ctx);
    if let Some(o) = v.as_object_mut() {
        o.remove("usage");
        o.remove("model");
    }
    v["meta"] = json!({"api_version": {"version": "1"}, "billed_units": {"search_units": 1}});
    v
}

fn rerank(ctx: &Ctx) -> Value {
    let docs: &[Value] = ctx
        .body
        .get("documents")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let top_n = ctx
        .body
        .get("top_n")
        .and_then(Value::as_u64)
        .map_or(docs.len(), |n| (n as usize).min(docs.len()));
    let return_documents = ctx
        .body
        .get("return_documents")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let results: Vec<Value> = docs
        .iter()
        .enumerate()
        .take(top_n)
        .map(|(i, d)| {
            let mut r = json!({"index": i, "relevance_score": 0.95 / (i as f64 + 1.0)});
            if return_documents {
                r["document"] = match d {
                    Value::String(s) => json!({"text": s}),
                    other => other.clone(),
                };
            }
            r
        })
        .collect();
    let mut v =
        json!({"id": format!("rerank-mock{}", ctx.id), "model": ctx.model, "results": results});
    if ctx.usage() {
        v["usage"] = json!({"total_tokens": 10});
    }
    v
}

fn models() -> Value {
    let data: Vec<Value> = MODELS
        .iter()
        .map(|m| json!({"id": m, "object": "model", "created": 1_700_000_000, "owned_by": "mock"}))
        .collect();
    json!({"object": "list", "data": data})
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// A value that follows the JSON schema `schema` (objects get every property; `$ref`s into
/// `#/$defs/` or `#/definitions/` of `root` are followed, to a bounded depth): strings are
/// `"mock"` (or the first `enum` value), integers 7, numbers 1.5, booleans `true`, arrays one
/// item; `anyOf`/`oneOf` take their first branch. Structured-output answers are made of it.
pub fn sample_json(schema: &Value, root: &Value) -> Value {
    sample_at(schema, root, 0)
}

fn sample_at(schema: &Value, root: &Value, depth: usize) -> Value {
    if depth > 16 {
        return Value::Null;
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let target = r.strip_prefix('#').and_then(|p| root.pointer(p));
        return target.map_or(Value::Null, |t| sample_at(t, root, depth + 1));
    }
    if let Some(c) = schema.get("const") {
        return c.clone();
    }
    if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
        return first.clone();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = schema.get(key).and_then(|a| a.get(0)) {
            return sample_at(first, root, depth + 1);
        }
    }
    let kind = match schema.get("type") {
        Some(Value::Array(types)) => types.iter().find_map(Value::as_str),
        Some(t) => t.as_str(),
        None if schema.get("properties").is_some() => Some("object"),
        None => None,
    };
    match kind {
        Some("string") => json!("mock"),
        Some("integer") => json!(7),
        Some("number") => json!(1.5),
        Some("boolean") => json!(true),
        Some("null") => Value::Null,
        Some("array") => {
            let item = schema
                .get("items")
                .map_or(json!("mock"), |i| sample_at(i, root, depth + 1));
            json!([item])
        }
        _ => {
            let mut out = serde_json::Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, s) in props {
                    out.insert(name.clone(), sample_at(s, root, depth + 1));
                }
            }
            Value::Object(out)
        }
    }
}

/// `data: <json>\n\n`.
fn data(v: &Value) -> Bytes {
    let mut out = Vec::with_capacity(320);
    out.extend_from_slice(b"data: ");
    let _ = serde_json::to_writer(&mut out, v);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// `data: <json>\n\n`, in spaced JSON for `sk-mock-spaced`.
fn data_of(ctx: &Ctx, v: &Value) -> Bytes {
    if ctx.mode != Mode::Spaced {
        return data(v);
    }
    let mut out = Vec::with_capacity(384);
    out.extend_from_slice(b"data: ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    let _ = serde::Serialize::serialize(v, &mut ser);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// JSON on one line with a space after every `:` and `,`, as Python's `json.dumps` writes it.
struct Spaced;

impl serde_json::ser::Formatter for Spaced {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// An SSE response sending each event as its own chunk, `delay` apart; `cut` ends it with an
/// error, which makes the server drop the connection without finishing the body.
fn sse(events: Vec<Bytes>, delay: Duration, cut: bool) -> HttpResponse {
    stream_body(events, delay, cut, "text/event-stream")
}

/// A streamed body of `events` with `content_type`, cut (the connection dropped) after them
/// when `cut`.
fn stream_body(
    events: Vec<Bytes>,
    delay: Duration,
    cut: bool,
    content_type: &'static str,
) -> HttpResponse {
    let items = events
        .into_iter()
        .map(Some)
        .chain(cut.then_some(None))
        .enumerate();
    let body = stream::unfold(items, move |mut items| async move {
        let (i, item) = items.next()?;
        if i > 0 {
            if item.is_none() {
                // Let what was sent so far reach the client before the connection drops.
                actix_web::rt::time::sleep(delay.max(CUT_GRACE)).await;
            } else if delay.is_zero() {
                // Give the server a chance to flush each event as its own write.
                tokio::task::yield_now().await;
            } else {
                actix_web::rt::time::sleep(delay).await;
            }
        }
        let out = match item {
            Some(bytes) => Ok(bytes),
            None => Err(actix_web::error::ErrorInternalServerError(
                "mock upstream: stream cut",
            )),
        };
        Some((out, items))
    });
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("cache-control", "no-cache"))
        .streaming(body)
}

/// The value of a plain `multipart/form-data` field (no file), found by its name.
fn form_field(body: &[u8], name: &str) -> Option<String> {
    let needle = format!("name=\"{name}\"");
    let at = find(body, needle.as_bytes())?;
    let rest = &body[at + needle.len()..];
    // The headers of the part end with an empty line.
    let start = find(rest, b"\r\n\r\n")? + 4;
    let value = &rest[start..];
    let end = find(value, b"\r\n--").unwrap_or(value.len());
    std::str::from_utf8(&value[..end])
        .ok()
        .map(|s| s.trim().to_owned())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_follow_schemas() {
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "population": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "kind": {"enum": ["town", "city"]},
                "mayor": {"$ref": "#/$defs/Person"},
                "area": {"anyOf": [{"type": "number"}, {"type": "null"}]}
            },
            "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string"}}}}
        });
        assert_eq!(
            sample_json(&schema, &schema),
            json!({"city": "mock", "population": 7, "tags": ["mock"], "kind": "town",
                   "mayor": {"name": "mock"}, "area": 1.5})
        );
        assert_eq!(
            sample_json(&json!({"type": "object"}), &Value::Null),
            json!({})
        );
    }

    #[test]
    fn spaced_json() {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
        let v = json!({"choices": [], "usage": {"a": 1, "b": [1, 2]}});
        serde::Serialize::serialize(&v, &mut ser).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"choices": [], "usage": {"a": 1, "b": [1, 2]}}"#
        );
    }

    #[test]
    fn multipart_fields() {
        let body = b"--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n--b\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\ntext\r\n--b--\r\n";
        assert_eq!(form_field(body, "model").as_deref(), Some("whisper-1"));
        assert_eq!(form_field(body, "response_format").as_deref(), Some("text"));
        assert_eq!(form_field(body, "language"), None);
    }

    #[test]
    fn input_counts() {
        assert_eq!(input_items(Some(&json!("a"))), 1);
        assert_eq!(input_items(Some(&json!(["a", "b", "c"]))), 3);
        assert_eq!(input_items(Some(&json!([1, 2, 3]))), 1);
        assert_eq!(input_items(Some(&json!([[1, 2], [3]]))), 2);
        assert_eq!(input_items(None), 0);
    }
}
