//! Named leases (`job_locks`) so that a periodic job runs on one node only.
//!
//! [`try_acquire`] is race-safe on all three backends without backend-specific SQL:
//! 1. `UPDATE job_locks SET holder, expires_at WHERE name = ? AND expires_at < now` takes over an
//!    expired lease. PostgreSQL and InnoDB re-check the condition after waiting for a concurrent
//!    writer's row lock and SQLite serialises writers, so of concurrent takers exactly one
//!    changes the row.
//! 2. When nothing changed, `INSERT` creates the lease; the primary key refuses all but one
//!    concurrent inserter ([`StoreError::Conflict`], meaning "held by someone else"). The insert
//!    runs in a savepoint so that the refusal does not abort a caller's PostgreSQL transaction.

use crate::schema::job_locks;
use crate::{DbConn, StoreError, StoreResult};
use diesel::prelude::*;

/// Takes the lease `name` for `holder` until `now + ttl_secs` when nobody holds it or the holder's
/// lease has expired. Returns whether the caller now holds it.
pub fn try_acquire(
    conn: &mut DbConn,
    name: &str,
    holder: &str,
    now: i64,
    ttl_secs: i64,
) -> StoreResult<bool> {
    let expires = now.saturating_add(ttl_secs.max(1));
    let taken = diesel::update(
        job_locks::table
            .filter(job_locks::name.eq(name))
            .filter(job_locks::expires_at.lt(now)),
    )
    .set((
        job_locks::holder.eq(holder),
        job_locks::expires_at.eq(expires),
    ))
    .execute(conn)?;
    if taken > 0 {
        return Ok(true);
    }
    let inserted = conn.transaction::<usize, diesel::result::Error, _>(|c| {
        diesel::insert_into(job_locks::table)
            .values((
                job_locks::name.eq(name),
                job_locks::holder.eq(holder),
                job_locks::expires_at.eq(expires),
            ))
            .execute(c)
    });
    match inserted.map_err(StoreError::from) {
        Ok(n) => Ok(n > 0),
        Err(StoreError::Conflict(_)) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Like [`try_acquire`], but the current holder also renews its own lease (or takes over its
/// own lease of an earlier run) before it expires.
pub fn acquire_or_renew(
    conn: &mut DbConn,
    name: &str,
    holder: &str,
    now: i64,
    ttl_secs: i64,
) -> StoreResult<bool> {
    let renewed = diesel::update(
        job_locks::table
            .filter(job_locks::name.eq(name))
            .filter(job_locks::holder.eq(holder)),
    )
    .set(job_locks::expires_at.eq(now.saturating_add(ttl_secs.max(1))))
    .execute(conn)?;
    Ok(renewed > 0 || try_acquire(conn, name, holder, now, ttl_secs)?)
}

/// Gives the lease up (only the holder's own). Returns whether a lease was removed.
pub fn release(conn: &mut DbConn, name: &str, holder: &str) -> StoreResult<bool> {
    let n = diesel::delete(
        job_locks::table
            .filter(job_locks::name.eq(name))
            .filter(job_locks::holder.eq(holder)),
    )
    .execute(conn)?;
    Ok(n > 0)
}

/// The current holder and expiry of a lease, if any row exists (expired or not).
pub fn find(conn: &mut DbConn, name: &str) -> StoreResult<Option<(String, i64)>> {
    Ok(job_locks::table
        .filter(job_locks::name.eq(name))
        .select((job_locks::holder, job_locks::expires_at))
        .first(conn)
        .optional()?)
}

/// Every lease row (held or expired): name, holder and expiry, by name.
pub fn all(conn: &mut DbConn) -> StoreResult<Vec<(String, String, i64)>> {
    Ok(job_locks::table
        .select((job_locks::name, job_locks::holder, job_locks::expires_at))
        .order(job_locks::name.asc())
        .limit(100)
        .load(conn)?)
}

/// The leases whose names start with `prefix` that are held at `now` (not expired): name and
/// holder, by name (at most 100).
pub fn held_with_prefix(
    conn: &mut DbConn,
    prefix: &str,
    now: i64,
) -> StoreResult<Vec<(String, String)>> {
    Ok(job_locks::table
        .filter(job_locks::name.like(format!("{prefix}%")))
        .filter(job_locks::expires_at.ge(now))
        .select((job_locks::name, job_locks::holder))
        .order(job_locks::name.asc())
        .limit(100)
        .load(conn)?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::testing::TestDb;

    #[test]
    fn lease_is_exclusive_until_it_expires() {
        for db in TestDb::all() {
            let mut c = db.conn();
            assert!(try_acquire(&mut c, "job", "a", 100, 60).unwrap());
            // Held: neither another holder nor the same one takes it again before expiry.
            assert!(!try_acquire(&mut c, "job", "b", 120, 60).unwrap());
            assert!(!try_acquire(&mut c, "job", "a", 120, 60).unwrap());
            assert!(!try_acquire(&mut c, "job", "b", 160, 60).unwrap());
            assert_eq!(find(&mut c, "job").unwrap(), Some(("a".into(), 160)));
            // Expired: taken over.
            assert!(try_acquire(&mut c, "job", "b", 161, 60).unwrap());
            assert_eq!(find(&mut c, "job").unwrap(), Some(("b".into(), 221)));
            // Only the holder releases.
            assert!(!release(&mut c, "job", "a").unwrap());
            assert!(release(&mut c, "job", "b").unwrap());
            assert!(try_acquire(&mut c, "job", "a", 170, 60).unwrap());
            // Other names are independent.
            assert!(try_acquire(&mut c, "other", "b", 170, 60).unwrap());
        }
    }

    #[test]
    fn refused_insert_keeps_an_outer_transaction_usable() {
        for db in TestDb::all() {
            let mut c = db.conn();
            assert!(try_acquire(&mut c, "job", "a", 100, 60).unwrap());
            let r: StoreResult<Option<(String, i64)>> = crate::transaction(&mut c, |c| {
                assert!(!try_acquire(c, "job", "b", 110, 60)?);
                find(c, "job")
            });
            assert_eq!(r.unwrap(), Some(("a".into(), 160)));
        }
    }

    #[test]
    fn concurrent_takers_get_one_lease() {
        for db in TestDb::all() {
            for round in 0..3 {
                let name = format!("race-{round}");
                let wins: usize = std::thread::scope(|s| {
                    let handles: Vec<_> = (0..4)
                        .map(|i| {
                            let pool = db.pool.clone();
                            let name = name.clone();
                            s.spawn(move || {
                                let mut c = pool.get().unwrap();
                                try_acquire(&mut c, &name, &format!("h{i}"), 1_000, 60).unwrap()
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| usize::from(h.join().unwrap()))
                        .sum()
                });
                assert_eq!(wins, 1, "{:?} round {round}", db.backend);
            }
        }
    }
}
