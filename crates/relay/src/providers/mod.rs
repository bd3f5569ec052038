//! One module per upstream family; [`crate::provider::Provider`] dispatches to them.

pub mod anthropic;
pub mod azure;
pub mod gemini;
pub mod openai;
