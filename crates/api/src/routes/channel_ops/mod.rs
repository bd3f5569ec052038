//! Channel operations (administrators): test one channel or all of them, fetch the upstream's
//! model list, read the upstream balance, batch delete, delete the disabled channels, and the
//! tag operations. Every change reloads the relay's channel snapshot.
//!
//! A test sends a minimal non-streamed chat completion through the channel's adapter. It is
//! never billed and writes no consume log. A failure that the adapter marks `auto_disable`
//! disables an enabled channel when `AutomaticDisableChannelEnabled` is on; a success enables an
//! automatically disabled channel when `AutomaticEnableChannelEnabled` is on. The periodic test
//! ([`test_all`]) also disables enabled channels slower than `ChannelDisableThreshold` seconds
//! (when automatic disabling is on) and does not re-enable them.
//!
//! One file per kind of operation: [`testing`] (channel tests, by hand and periodic),
//! [`upstream`] (the upstream's model list and balance), [`batch`] (deletes, batch edits and
//! copies) and [`tags`].

mod batch;
mod tags;
mod testing;
mod upstream;

pub use batch::{
    batch_azure_api, batch_delete, batch_remove_model, copy, delete_disabled, BatchValueBody,
    CopyQuery, IdsBody,
};
pub use tags::{delete_tag_disabled, tags, update_tag, TagBody};
pub use testing::{
    scheduled_test_all, test_all, test_all_route, test_one, TestFailure, TestQuery, TestSummary,
};
pub use upstream::{fetch_models, update_balance};

use super::channels::not_found;
use super::paging::found_or;
use crate::error::{ApiError, ApiResult};
use crate::relay::snapshot::{ChannelInfo, Snapshot};
use crate::AppState;
use actix_web::http::StatusCode;
use std::time::Duration;
use switchboard_domain::ErrorCode;
use switchboard_relay::provider::{Provider, UpstreamFailure};
use switchboard_store::channels::{self, ChannelRow};

/// Every upstream call made here (a test, the model list, the balance) ends within this time.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest upstream error body read.
const MAX_ERROR_BODY: usize = 64 << 10;

fn upstream_error(code: ErrorCode, f: &UpstreamFailure) -> ApiError {
    ApiError::new(StatusCode::BAD_GATEWAY, code, f.message.clone())
}

async fn load(state: &AppState, id: i64) -> ApiResult<ChannelRow> {
    state
        .db(move |c| found_or(channels::find(c, id), not_found))
        .await
}

/// How to reach the channel as stored now (not as the relay's snapshot last saw it), its key
/// opened, with the upstream calls bounded by [`TEST_TIMEOUT`]. A key that cannot be opened is
/// refused here (`key_unavailable`), never sent upstream.
fn reach(state: &AppState, mut row: ChannelRow) -> ApiResult<(Provider, ChannelInfo)> {
    let id = row.id;
    row.key = crate::at_rest::channel_key(state, &row)?;
    let info = Snapshot::build(vec![row])
        .channel(id)
        .ok_or_else(not_found)?;
    let mut info = (*info).clone();
    info.target.timeout = TEST_TIMEOUT;
    let provider = info.provider.clone().ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::UnsupportedChannelType,
            format!(
                "channels of type {} cannot be used yet (no adapter)",
                info.channel_type
            ),
        )
    })?;
    Ok((provider, info))
}

fn client(state: &AppState, info: &ChannelInfo) -> ApiResult<reqwest::Client> {
    crate::relay::channel_client(state, info)
        .map_err(|e| ApiError::bad_request(ErrorCode::InvalidChannel, e.to_string()))
}

fn timed_out() -> UpstreamFailure {
    UpstreamFailure {
        status: 504,
        message: "the upstream did not answer in time".into(),
        code: Some("upstream_timeout".into()),
        retryable: true,
        auto_disable: false,
        kind: None,
        retry_after: None,
        gateway: false,
    }
}
