//! The consume and error records of relayed calls, built in one place: who called (the key, its
//! owner, the address), with which model and group, on which channel, for how long. Each entry
//! point adds what it counted (quota, tokens, content, metadata) to [`Caller::record`].

use std::time::{Duration, Instant};
use switchboard_domain::log::LogType;
use switchboard_store::logs::{ConsumeRecord, Text};
use switchboard_store::now;

use super::AuthToken;

/// Who a relayed call is billed to and what it asked for.
pub struct Caller<'a> {
    pub token: &'a AuthToken,
    pub model: &'a str,
    pub group: &'a str,
    pub ip: &'a str,
}

impl Caller<'_> {
    /// A record of `log_type` for the call `request_id` on `channel_id`, begun at `started`,
    /// with nothing counted yet.
    pub fn record(
        &self,
        log_type: LogType,
        request_id: Text,
        channel_id: i64,
        started: Instant,
    ) -> ConsumeRecord {
        ConsumeRecord {
            request_id: Some(request_id),
            created_at: now(),
            log_type: log_type.as_i32(),
            user_id: self.token.user_id,
            username: self.token.username.as_str().into(),
            token_id: self.token.id,
            token_name: self.token.name.as_str().into(),
            channel_id,
            model_name: self.model.into(),
            group_name: self.group.into(),
            quota: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            use_time_ms: millis(started.elapsed()),
            first_response_ms: 0,
            is_stream: false,
            source_ip: self.ip.into(),
            content: String::new(),
            metadata: String::new(),
            cache_hit: false,
        }
    }
}

/// A duration in whole milliseconds, as a record's column holds it.
pub fn millis(d: Duration) -> i32 {
    i32::try_from(d.as_millis()).unwrap_or(i32::MAX)
}

/// A token count, as a record's column holds it.
pub fn tokens(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
