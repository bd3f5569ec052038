//! Switchboard's books: what every user and key may spend, and what they spent.
//!
//! - [`rule`]: the balance rule as pure functions (admission, reservation, settlement charge).
//! - [`Ledger`] (`book.rs`): balances, reservations and unwritten consumption of one node, kept
//!   in memory so that the relay path makes no database round trip in steady state; settled
//!   requests are queued as consume records and written in batches (`store::logs::settle_batch`).
//!   Refunds, credits, resync with the database and, on Redis, the marker generations that keep
//!   every operation applied once.
//! - [`shared`]: the same books on Redis for several nodes (one Lua script per operation), with
//!   what else the nodes share there: rate-limit windows, the response cache, change notices.
//!
//! The lease that lets a single node admit against the database's balances alone is taken by
//! the API's cluster module (`crates/api/src/cluster.rs`), which calls
//! [`Ledger::admit_until`] as it renews it. docs/billing.md tells the rule in prose.

mod book;
pub mod rule;
pub mod shared;
#[cfg(feature = "testing")]
pub mod testing;

pub use book::*;
