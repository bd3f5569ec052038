//! One-time e-mail codes (registration, password reset). Only a hash of the code is stored.

use crate::schema::verification_codes as vc;
use crate::{DbConn, StoreResult};
use diesel::prelude::*;

/// Stores (or replaces) the code for this purpose and address.
pub fn put(
    conn: &mut DbConn,
    purpose: &str,
    email: &str,
    code_hash: &str,
    now: i64,
    ttl: i64,
) -> StoreResult<()> {
    conn.transaction(|c| {
        diesel::delete(
            vc::table
                .filter(vc::purpose.eq(purpose))
                .filter(vc::email.eq(email)),
        )
        .execute(c)?;
        diesel::insert_into(vc::table)
            .values((
                vc::purpose.eq(purpose),
                vc::email.eq(email),
                vc::code_hash.eq(code_hash),
                vc::created_at.eq(now),
                vc::expires_at.eq(now + ttl),
            ))
            .execute(c)?;
        Ok(())
    })
}

/// Consumes a matching unexpired code that has not used up its attempts: returns true once,
/// then the code is gone.
pub fn take(
    conn: &mut DbConn,
    purpose: &str,
    email: &str,
    code_hash: &str,
    now: i64,
    max_attempts: i32,
) -> StoreResult<bool> {
    let n = diesel::delete(
        vc::table
            .filter(vc::purpose.eq(purpose))
            .filter(vc::email.eq(email))
            .filter(vc::code_hash.eq(code_hash))
            .filter(vc::expires_at.gt(now))
            .filter(vc::attempts.lt(max_attempts)),
    )
    .execute(conn)?;
    Ok(n > 0)
}

/// Checks a code without consuming it. A wrong one counts against the address's code, which is
/// deleted at the `max_attempts`-th wrong try (so guessing ends there, even with the right code
/// later). Returns whether the code matched.
pub fn check(
    conn: &mut DbConn,
    purpose: &str,
    email: &str,
    code_hash: &str,
    now: i64,
    max_attempts: i32,
) -> StoreResult<bool> {
    let found: i64 = vc::table
        .filter(vc::purpose.eq(purpose))
        .filter(vc::email.eq(email))
        .filter(vc::code_hash.eq(code_hash))
        .filter(vc::expires_at.gt(now))
        .filter(vc::attempts.lt(max_attempts))
        .count()
        .get_result(conn)?;
    if found > 0 {
        return Ok(true);
    }
    diesel::update(
        vc::table
            .filter(vc::purpose.eq(purpose))
            .filter(vc::email.eq(email)),
    )
    .set(vc::attempts.eq(vc::attempts + 1))
    .execute(conn)?;
    diesel::delete(
        vc::table
            .filter(vc::purpose.eq(purpose))
            .filter(vc::email.eq(email))
            .filter(vc::attempts.ge(max_attempts)),
    )
    .execute(conn)?;
    Ok(false)
}
