//! Azure OpenAI: the OpenAI protocol under
//! `{base}/openai/deployments/{deployment}/{path}?api-version={version}` with an `api-key`
//! header. Bodies and answers are OpenAI's, so usage and streams are read as OpenAI's.
//!
//! - The deployment is the upstream model: the channel's model mapping entry for the requested
//!   model, used verbatim when there is one (the operator named the deployment); otherwise the
//!   requested model with its dots removed, as Azure deployments are usually named
//!   (`gpt-3.5-turbo` -> `gpt-35-turbo`, `gpt-4.1` -> `gpt-41`).
//! - The API version is the channel config's `api_version`, else
//!   [`AZURE_DEFAULT_API_VERSION`].

use reqwest::header::HeaderMap;
use serde_json::Value;
use switchboard_domain::channel::{AZURE_API_VERSION_KEY, AZURE_DEFAULT_API_VERSION};

use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::provider::{classify_openai, ChannelTarget, UpstreamFailure};
use crate::providers::openai::{
    config_failure, data_ids, get_json_at, key_header, parse_url, post,
};
use crate::request::RelayRequest;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Azure;

/// The deployment serving `model` on `target` (see the module documentation).
pub fn deployment(target: &ChannelTarget, model: &str) -> String {
    match target.model_mapping.get(model) {
        Some(m) if !m.trim().is_empty() => m.trim().to_owned(),
        _ => model.replace('.', ""),
    }
}

/// The channel's `api-version`.
pub fn api_version(target: &ChannelTarget) -> &str {
    target
        .config_str(AZURE_API_VERSION_KEY)
        .unwrap_or(AZURE_DEFAULT_API_VERSION)
}

impl Azure {
    /// Chat, completions, embeddings, image generations and audio (speech, transcriptions,
    /// translations). Moderations, rerank and the Responses API are not served by deployments;
    /// other protocols' clients come as chat requests (see [`crate::bridge`]).
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        !matches!(
            endpoint,
            Endpoint::Moderations
                | Endpoint::Rerank
                | Endpoint::Responses
                | Endpoint::GenerateContent
                | Endpoint::Messages
        )
    }

    /// See [`crate::provider::Provider::build`].
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        raw_body: Option<&[u8]>,
        content_type: Option<&str>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if !self.supports(req.endpoint) || req.endpoint == Endpoint::Messages {
            return Err(RelayError::UnsupportedEndpoint(req.endpoint.path().into()));
        }
        let base = target.effective_base_url()?;
        let suffix = req
            .endpoint
            .path()
            .strip_prefix("/v1")
            .unwrap_or(req.endpoint.path());
        let mut url = parse_url(&format!(
            "{base}/openai/deployments/{}{suffix}",
            deployment(target, &req.model)
        ))?;
        url.query_pairs_mut()
            .append_pair("api-version", api_version(target));
        post(
            client,
            url,
            auth_headers(target)?,
            target,
            req,
            raw_body,
            content_type,
        )
    }

    /// GET `{base}/openai/models?api-version=...`: the ids of the models the resource offers.
    pub async fn list_models(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<Vec<String>, UpstreamFailure> {
        let base = target.effective_base_url().map_err(config_failure)?;
        let mut url = parse_url(&format!("{base}/openai/models")).map_err(config_failure)?;
        url.query_pairs_mut()
            .append_pair("api-version", api_version(target));
        let headers = auth_headers(target).map_err(config_failure)?;
        let v: Value = get_json_at(client, target, url.as_str(), headers, classify_openai).await?;
        data_ids(&v)
    }
}

/// `api-key: <key>`.
pub(crate) fn auth_headers(target: &ChannelTarget) -> Result<HeaderMap, RelayError> {
    let mut headers = HeaderMap::new();
    let key = target.key.trim();
    if !key.is_empty() {
        headers.insert("api-key", key_header(target, key)?);
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn deployments_and_versions() {
        let mut t = ChannelTarget {
            model_mapping: HashMap::from([("gpt-4o".to_owned(), "my.gpt4o".to_owned())]),
            ..ChannelTarget::default()
        };
        assert_eq!(deployment(&t, "gpt-3.5-turbo"), "gpt-35-turbo");
        assert_eq!(deployment(&t, "gpt-4o"), "my.gpt4o");
        assert_eq!(api_version(&t), "2024-10-21");
        t.config.insert(
            "api_version".into(),
            Value::String("2025-01-01-preview".into()),
        );
        assert_eq!(api_version(&t), "2025-01-01-preview");
    }
}
