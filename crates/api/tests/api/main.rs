//! End-to-end tests of the management API over real HTTP on a real (SQLite) database.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

mod accounts;
mod admin_users;
mod analytics;
mod balance;
mod channel_ops;
mod channel_settings;
mod channels;
mod dead_letters;
mod groups;
mod invoices;
mod logs;
mod mail;
mod openapi;
mod options;
mod pricing;
mod realtime;
mod redemptions;
mod relay;
mod relay_anthropic;
mod relay_azure;
mod relay_bedrock;
mod relay_gemini;
mod relay_gemini_native;
mod relay_messages;
mod relay_messages_openai;
mod relay_refusals;
mod relay_rerank;
mod relay_vertex;
mod security;
mod site;
mod system;
mod tasks;
mod tokens;
