//! Settings rows (`options` key/value table). Typing and validation live in the domain catalogue.

use crate::schema::options;
use crate::{DbConn, StoreResult};
use diesel::prelude::*;

pub fn all(conn: &mut DbConn) -> StoreResult<Vec<(String, String)>> {
    Ok(options::table
        .select((options::key, options::value))
        .load(conn)?)
}

/// Writes one setting: update when present, insert otherwise, in one transaction.
pub fn set(conn: &mut DbConn, key: &str, value: &str) -> StoreResult<()> {
    conn.transaction(|c| upsert(c, key, value))
}

/// Writes several settings in one transaction: all of them or, on any failure, none.
pub fn set_many(conn: &mut DbConn, items: &[(String, String)]) -> StoreResult<()> {
    crate::transaction(conn, |c| {
        for (key, value) in items {
            upsert(c, key, value)?;
        }
        Ok(())
    })
}

fn upsert(c: &mut DbConn, key: &str, value: &str) -> StoreResult<()> {
    let n = diesel::update(options::table.find(key))
        .set(options::value.eq(value))
        .execute(c)?;
    if n == 0 {
        diesel::insert_into(options::table)
            .values((options::key.eq(key), options::value.eq(value)))
            .execute(c)?;
    }
    Ok(())
}

/// Replaces a setting's value by `new` only while it is still `old` (another node may have
/// changed it since it was read). Returns whether it was replaced.
pub fn replace(conn: &mut DbConn, key: &str, old: &str, new: &str) -> StoreResult<bool> {
    let n = diesel::update(
        options::table
            .find(key)
            .filter(options::value.eq(old.to_owned())),
    )
    .set(options::value.eq(new))
    .execute(conn)?;
    Ok(n == 1)
}
