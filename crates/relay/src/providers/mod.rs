//! One module per upstream family; [`crate::provider::Provider`] dispatches to them.

pub mod openai;
