//! Switchboard relay: protocol types, provider adapters and dispatch. It never touches the
//! database; the api crate wires it to storage through small traits.
//!
//! A request's way through this crate: [`Endpoint::from_path`] -> [`RelayRequest::parse`] ->
//! [`tokenizer::estimate_prompt`] (the reservation) -> [`Provider::build`] on a client from
//! [`ClientPool`] -> on failure [`Provider::classify`] / [`classify_transport`]; on success
//! [`Provider::answer`] (the body for the client and its usage), or for streams an [`SseTap`]
//! fed every forwarded chunk, after a [`StreamTranslator`] for families whose streams are not
//! OpenAI's. The shapes translated between are the borrowed structs of [`wire`].

pub mod aws;
pub mod bpe;
mod bpe_slots;
pub mod bridge;
pub mod client;
mod conversation;
pub mod direct;
pub mod dispatch;
pub mod endpoint;
pub mod error;
pub mod gemini_client;
pub mod health;
pub mod messages;
pub mod outbound;
pub mod provider;
pub mod providers;
pub mod realtime;
pub mod refusal;
pub mod remote;
pub mod request;
pub mod responses;
pub mod sse;
pub mod stream;
pub mod switches;
pub mod tokenizer;
pub mod translate;
pub mod usage;
pub mod wire;

pub use client::{http_client, ClientPool};
pub use endpoint::Endpoint;
pub use error::{OpenAiErrorBody, RelayError};
pub use provider::{classify_transport, Answer, ChannelTarget, Provider, UpstreamFailure};
pub use request::{parse_multipart_model, RelayRequest};
pub use stream::{ensure_include_usage, SseTap, StreamOutcome};
pub use translate::StreamTranslator;
pub use usage::Usage;
