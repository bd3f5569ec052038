//! Pure business rules of Switchboard. Nothing in this crate performs I/O, spawns tasks or knows
//! about the database: every function here is deterministic and unit-testable.

pub mod channel;
pub mod channel_settings;
pub mod code;
pub mod dispatch;
pub mod error;
pub mod group;
pub mod html;
pub mod invoice;
pub mod log;
pub mod net;
pub mod options;
pub mod payment;
pub mod price;
pub mod quota;
pub mod ratelimit;
pub mod redemption;
pub mod response_cache;
pub mod routing;
pub mod task;
pub mod token;
pub mod user;
pub mod validate;

pub use code::ErrorCode;
pub use error::DomainError;

/// The version the console expects from `/api/status` (spec section 9).
pub const VERSION: &str = "v0.17";
