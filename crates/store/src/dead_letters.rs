//! Dead letters: records the database refused even after sanitising (see
//! [`crate::logs::settle_isolated`]), parked so that one bad record never blocks the others and
//! none is dropped silently. Each keeps who and how much, the database's reason and the record
//! as JSON, for an administrator to look at; `resolved_at` is 0 while the letter is open.
//!
//! Whatever the caller hands in, [`insert`] stores it: strings lose their control characters
//! (PostgreSQL refuses NUL) and are bounded to their columns, so parking itself cannot fail on
//! the data that made the record fail.

use crate::schema::dead_letters;
use crate::text::{truncate_bytes, truncate_chars, without_controls};
use crate::{now, DbConn, Page, PageReq, StoreResult};
use diesel::prelude::*;

/// The kind of a parked consume record (a settled relay request).
pub const KIND_CONSUME: &str = "consume";
/// Characters kept of the database's error message.
pub const REASON_MAX_CHARS: usize = 1000;
/// Characters kept of the record's request id (the column is `VARCHAR(255)`; the full id is in
/// the payload).
pub const REQUEST_ID_MAX_CHARS: usize = 255;
/// Bytes kept of the payload (MySQL's `TEXT` holds 65,535).
pub const PAYLOAD_MAX_BYTES: usize = 60_000;
const KIND_MAX_CHARS: usize = 32;
/// Largest page [`list_page`] returns.
pub const MAX_PAGE_SIZE: i64 = 100;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = dead_letters)]
pub struct DeadLetterRow {
    pub id: i64,
    pub created_at: i64,
    pub kind: String,
    pub request_id: Option<String>,
    pub user_id: i64,
    pub token_id: i64,
    pub quota: i64,
    pub reason: String,
    pub payload: String,
    pub resolved_at: i64,
}

/// A record to park. [`insert`] makes every string storable.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDeadLetter {
    pub kind: String,
    pub request_id: Option<String>,
    pub user_id: i64,
    pub token_id: i64,
    pub quota: i64,
    /// The database's error message.
    pub reason: String,
    /// The record as JSON.
    pub payload: String,
}

/// Parks one record (open, created now) and returns true; or returns false when an open letter
/// of the same kind and request id is there already (a batch written twice parks its record
/// once).
pub fn insert(conn: &mut DbConn, d: &NewDeadLetter) -> StoreResult<bool> {
    let kind = without_controls(&d.kind, false);
    let kind = truncate_chars(&kind, KIND_MAX_CHARS);
    let request_id = d
        .request_id
        .as_deref()
        .map(|r| without_controls(r, false))
        .map(|r| truncate_chars(&r, REQUEST_ID_MAX_CHARS).to_owned());
    if let Some(rid) = &request_id {
        let open: i64 = dead_letters::table
            .filter(dead_letters::request_id.eq(rid))
            .filter(dead_letters::kind.eq(kind))
            .filter(dead_letters::resolved_at.eq(0_i64))
            .count()
            .get_result(conn)?;
        if open > 0 {
            return Ok(false);
        }
    }
    let reason = without_controls(&d.reason, true);
    let payload = without_controls(&d.payload, true);
    diesel::insert_into(dead_letters::table)
        .values((
            dead_letters::created_at.eq(now()),
            dead_letters::kind.eq(kind),
            dead_letters::request_id.eq(request_id),
            dead_letters::user_id.eq(d.user_id),
            dead_letters::token_id.eq(d.token_id),
            dead_letters::quota.eq(d.quota),
            dead_letters::reason.eq(truncate_chars(&reason, REASON_MAX_CHARS)),
            dead_letters::payload.eq(truncate_bytes(&payload, PAYLOAD_MAX_BYTES)),
            dead_letters::resolved_at.eq(0_i64),
        ))
        .execute(conn)?;
    Ok(true)
}

/// One page of dead letters, newest first (`created_at` desc, then `id` desc), open and
/// resolved, with the total number of them. The page size is bounded by [`MAX_PAGE_SIZE`].
pub fn list_page(conn: &mut DbConn, page: PageReq) -> StoreResult<Page<DeadLetterRow>> {
    let page = PageReq {
        page: page.page.max(1),
        size: page.size.clamp(1, MAX_PAGE_SIZE),
    };
    let total: i64 = dead_letters::table.count().get_result(conn)?;
    let items = dead_letters::table
        .order((dead_letters::created_at.desc(), dead_letters::id.desc()))
        .limit(page.size)
        .offset(page.offset())
        .select(DeadLetterRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

/// How many dead letters are still open (`resolved_at = 0`).
pub fn count_open(conn: &mut DbConn) -> StoreResult<i64> {
    Ok(dead_letters::table
        .filter(dead_letters::resolved_at.eq(0_i64))
        .count()
        .get_result(conn)?)
}
