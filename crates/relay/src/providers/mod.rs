//! One module per upstream family; [`crate::provider::Provider`] dispatches to them.

pub mod anthropic;
pub mod azure;
pub mod bedrock;
pub mod gemini;
pub mod openai;
pub mod rerank;
pub mod vertex;
