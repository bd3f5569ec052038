//! The response cache in the database (used when Redis is not configured): answers of
//! non-streamed chat requests under their key (`switchboard_domain::response_cache::key`), each
//! with an expiry. Reads ignore expired rows; [`purge`] removes them and keeps the table within
//! its entry cap (oldest first).

use crate::schema::response_cache;
use crate::{DbConn, StoreResult};
use diesel::prelude::*;

/// One kept answer.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = response_cache)]
pub struct CachedAnswer {
    pub cache_key: String,
    pub user_id: i64,
    pub model_name: String,
    /// The answer's body as the client got it.
    pub body: String,
    /// The answer's usage (`switchboard_domain::price::Usage` as JSON), priced again on a hit.
    pub usage_json: String,
    pub created_at: i64,
    pub expires_at: i64,
}

/// The unexpired answer under `key`, if any.
pub fn get(conn: &mut DbConn, key: &str, now: i64) -> StoreResult<Option<CachedAnswer>> {
    Ok(response_cache::table
        .find(key)
        .filter(response_cache::expires_at.gt(now))
        .select(CachedAnswer::as_select())
        .first(conn)
        .optional()?)
}

/// Keeps `answer`, replacing what its key held.
pub fn put(conn: &mut DbConn, answer: &CachedAnswer) -> StoreResult<()> {
    crate::transaction(conn, |c| {
        diesel::delete(response_cache::table.find(&answer.cache_key)).execute(c)?;
        diesel::insert_into(response_cache::table)
            .values(answer)
            .execute(c)?;
        Ok(())
    })
}

/// Removes the expired answers, then the oldest beyond `max_entries`. Returns the rows removed.
pub fn purge(conn: &mut DbConn, now: i64, max_entries: i64) -> StoreResult<usize> {
    let mut removed =
        diesel::delete(response_cache::table.filter(response_cache::expires_at.le(now)))
            .execute(conn)?;
    let count: i64 = response_cache::table.count().get_result(conn)?;
    let excess = count - max_entries.max(0);
    if excess > 0 {
        // The creation time of the newest row to remove (index on created_at); rows created in
        // that same second may go too, which a cap does not mind.
        let cutoff: Option<i64> = response_cache::table
            .select(response_cache::created_at)
            .order(response_cache::created_at.asc())
            .offset(excess - 1)
            .first(conn)
            .optional()?;
        if let Some(cutoff) = cutoff {
            removed +=
                diesel::delete(response_cache::table.filter(response_cache::created_at.le(cutoff)))
                    .execute(conn)?;
        }
    }
    Ok(removed)
}

/// How many answers are kept (expired ones included until the next purge).
pub fn count(conn: &mut DbConn) -> StoreResult<i64> {
    Ok(response_cache::table.count().get_result(conn)?)
}
