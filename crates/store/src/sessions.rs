//! Server-side console sessions. Only a hash of the session id is stored, so a database leak does
//! not hand out live sessions; deleting the row ends the session on every node at once.

use crate::schema::sessions;
use crate::{DbConn, StoreResult};
use diesel::prelude::*;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable, Insertable)]
#[diesel(table_name = sessions)]
pub struct SessionRow {
    pub id_hash: String,
    pub user_id: i64,
    pub created_at: i64,
    pub expires_at: i64,
    pub last_seen_at: i64,
    pub ip: String,
    pub user_agent: String,
}

pub fn insert(conn: &mut DbConn, row: &SessionRow) -> StoreResult<()> {
    diesel::insert_into(sessions::table)
        .values(row)
        .execute(conn)?;
    Ok(())
}

/// The session with this id hash if it has not expired at `now`.
pub fn find_valid(conn: &mut DbConn, id_hash: &str, now: i64) -> StoreResult<Option<SessionRow>> {
    Ok(sessions::table
        .find(id_hash)
        .filter(sessions::expires_at.gt(now))
        .select(SessionRow::as_select())
        .first(conn)
        .optional()?)
}

/// Slides the expiry forward (called at most once a minute per session by the caller).
pub fn touch(conn: &mut DbConn, id_hash: &str, now: i64, expires_at: i64) -> StoreResult<()> {
    diesel::update(sessions::table.find(id_hash))
        .set((
            sessions::last_seen_at.eq(now),
            sessions::expires_at.eq(expires_at),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn delete(conn: &mut DbConn, id_hash: &str) -> StoreResult<()> {
    diesel::delete(sessions::table.find(id_hash)).execute(conn)?;
    Ok(())
}

/// Ends every session of a user (password change, disable, delete).
pub fn delete_for_user(conn: &mut DbConn, user_id: i64) -> StoreResult<usize> {
    Ok(diesel::delete(sessions::table.filter(sessions::user_id.eq(user_id))).execute(conn)?)
}

pub fn purge_expired(conn: &mut DbConn, now: i64) -> StoreResult<usize> {
    Ok(diesel::delete(sessions::table.filter(sessions::expires_at.le(now))).execute(conn)?)
}

/// Ends every session of a user but one (after a password change from that session).
pub fn delete_for_user_except(
    conn: &mut DbConn,
    user_id: i64,
    keep_hash: &str,
) -> StoreResult<usize> {
    Ok(diesel::delete(
        sessions::table
            .filter(sessions::user_id.eq(user_id))
            .filter(sessions::id_hash.ne(keep_hash)),
    )
    .execute(conn)?)
}
