//! The conversations of bridged Responses API answers (`switchboard_relay::responses`): for
//! each answered request that did not say `store: false`, its Responses items (the conversation
//! it continued, its input and its output, a JSON array) under the response's id, so that a
//! later request of the same user naming that id as `previous_response_id` continues it. Reads
//! ignore other users' and expired rows; [`purge`] removes expired ones.

use crate::schema::response_history;
use crate::{DbConn, StoreResult};
use diesel::prelude::*;

/// How long a conversation is kept: 30 days (OpenAI keeps stored responses as long).
pub const TTL_SECS: i64 = 30 * 24 * 3600;
/// The largest conversation kept, in bytes of JSON (MySQL's MEDIUMTEXT holds 16 MiB).
pub const MAX_BYTES: usize = 16 * 1024 * 1024 - 1;

/// One kept conversation.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = response_history)]
pub struct Conversation {
    pub response_id: String,
    pub user_id: i64,
    pub model_name: String,
    /// The Responses items, a JSON array.
    pub items: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// The unexpired conversation of `response_id` if it is `user_id`'s.
pub fn find(
    conn: &mut DbConn,
    response_id: &str,
    user_id: i64,
    now: i64,
) -> StoreResult<Option<Conversation>> {
    Ok(response_history::table
        .find(response_id)
        .filter(response_history::user_id.eq(user_id))
        .filter(response_history::expires_at.gt(now))
        .select(Conversation::as_select())
        .first(conn)
        .optional()?)
}

/// Keeps `conversation` (a response id is fresh, so an existing row under it is replaced).
pub fn put(conn: &mut DbConn, conversation: &Conversation) -> StoreResult<()> {
    crate::transaction(conn, |c| {
        diesel::delete(response_history::table.find(&conversation.response_id)).execute(c)?;
        diesel::insert_into(response_history::table)
            .values(conversation)
            .execute(c)?;
        Ok(())
    })
}

/// Removes the expired conversations. Returns the rows removed.
pub fn purge(conn: &mut DbConn, now: i64) -> StoreResult<usize> {
    Ok(
        diesel::delete(response_history::table.filter(response_history::expires_at.le(now)))
            .execute(conn)?,
    )
}
