//! Cohere (type 36) and Jina (type 47). Cohere's chat completions and embeddings go to its
//! OpenAI Compatibility API (`{base}/compatibility/v1/...`, OpenAI bodies and answers, without
//! `stream_options`, which it refuses). Rerank: both `POST {base}/v1/rerank` with
//! `Authorization: Bearer <key>` and the same request (`model`, `query`, `documents`, `top_n`,
//! `return_documents`; the client's body is sent with the model mapped). Answers are given to
//! clients in one shape, Jina's (which OpenAI-compatible rerank services share):
//! `{"model", "results": [{"index", "relevance_score", "document"}], "usage": {"prompt_tokens",
//! "total_tokens"}}`; Cohere's `meta` is kept beside it.
//!
//! Rerank tokens are all input: the usage billed is `prompt_tokens` (else `total_tokens`, else
//! Cohere's `meta.billed_units.input_tokens` / `meta.tokens.input_tokens`), with no completion.
//! When the upstream reports no token count (Cohere bills search units), the tokenizer counts
//! the query and the documents and the log marks the usage as estimated; a per-call (`times`)
//! price ignores tokens anyway.

use serde_json::{json, Value};

use crate::endpoint::Endpoint;
use crate::error::RelayError;
use crate::provider::{classify_openai, Answer, ChannelTarget, UpstreamFailure};
use crate::providers::openai::{
    apply_custom_headers, auth_headers, config_failure, get_json_at, invalid_answer, parse_url,
    post,
};
use crate::request::RelayRequest;
use crate::usage::Usage;

/// A rerank vendor (Cohere also serves chat and embeddings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerankVendor {
    Cohere,
    Jina,
}

impl RerankVendor {
    /// Rerank; for Cohere also chat completions and embeddings.
    pub fn supports(&self, endpoint: Endpoint) -> bool {
        match self {
            RerankVendor::Cohere => matches!(
                endpoint,
                Endpoint::Rerank | Endpoint::ChatCompletions | Endpoint::Embeddings
            ),
            RerankVendor::Jina => endpoint == Endpoint::Rerank,
        }
    }

    /// `POST {base}/v1/rerank` with the client's body (model mapped); Cohere's chat and
    /// embeddings to `{base}/compatibility/v1/...` with the body's model mapped and its
    /// `stream_options` removed.
    pub fn build(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
        req: &RelayRequest,
        raw_body: Option<&[u8]>,
    ) -> Result<reqwest::RequestBuilder, RelayError> {
        if !self.supports(req.endpoint) {
            return Err(RelayError::UnsupportedEndpoint(req.endpoint.path().into()));
        }
        if req.endpoint != Endpoint::Rerank {
            let mut body = req.body.as_object().cloned().ok_or_else(|| {
                RelayError::InvalidRequest("the request body must be a JSON object".into())
            })?;
            body.remove("stream_options");
            body.insert("model".into(), json!(target.upstream_model(&req.model)));
            let url = parse_url(&format!(
                "{}/compatibility{}",
                target.effective_base_url()?,
                req.endpoint.path()
            ))?;
            let mut headers = auth_headers(target)?;
            headers.insert(
                reqwest::header::CONTENT_TYPE,
                reqwest::header::HeaderValue::from_static("application/json"),
            );
            apply_custom_headers(&mut headers, target)?;
            let body = serde_json::to_vec(&body).map_err(|e| {
                RelayError::InvalidRequest(format!("cannot serialise the request: {e}"))
            })?;
            let mut builder = client.post(url).headers(headers).body(body);
            if !req.stream && !target.timeout.is_zero() {
                builder = builder.timeout(target.timeout);
            }
            return Ok(builder);
        }
        let url = parse_url(&format!("{}/v1/rerank", target.effective_base_url()?))?;
        post(
            client,
            url,
            auth_headers(target)?,
            target,
            req,
            raw_body,
            None,
        )
    }

    /// Cohere: `GET {base}/v1/models?endpoint=rerank` (`models[].name`). Jina publishes no
    /// model list.
    pub async fn list_models(
        &self,
        client: &reqwest::Client,
        target: &ChannelTarget,
    ) -> Result<Vec<String>, UpstreamFailure> {
        match self {
            RerankVendor::Cohere => {
                let base = target.effective_base_url().map_err(config_failure)?;
                let headers = auth_headers(target).map_err(config_failure)?;
                let url = format!("{base}/v1/models?endpoint=rerank&page_size=1000");
                let v = get_json_at(client, target, &url, headers, classify_openai).await?;
                let models = v
                    .get("models")
                    .and_then(Value::as_array)
                    .ok_or_else(|| invalid_answer("the model list has no models array"))?;
                Ok(models
                    .iter()
                    .filter_map(|m| m.get("name").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect())
            }
            RerankVendor::Jina => Err(UpstreamFailure {
                status: 501,
                message: "Jina publishes no model list; enter the models by hand".into(),
                code: Some("model_list_unsupported".into()),
                retryable: false,
                auto_disable: false,
                kind: None,
                retry_after: None,
                gateway: false,
            }),
        }
    }
}

/// The billed usage of a rerank answer (see the module documentation); `None` without counts.
pub fn usage(v: &Value) -> Option<Usage> {
    let int = |p: &str| v.pointer(p).and_then(Value::as_i64).filter(|n| *n >= 0);
    let prompt = int("/usage/prompt_tokens")
        .or_else(|| int("/usage/total_tokens"))
        .or_else(|| int("/meta/billed_units/input_tokens"))
        .or_else(|| int("/meta/tokens/input_tokens"))?;
    Some(Usage {
        prompt_tokens: prompt,
        ..Usage::default()
    })
}

/// [`usage`] of a raw body.
pub fn usage_of(body: &[u8]) -> Option<Usage> {
    usage(&serde_json::from_slice(body).ok()?)
}

/// The answer for the client in the common shape, and its usage (Cohere's chat and embeddings
/// answers are OpenAI's, passed through).
pub fn answer(
    vendor: RerankVendor,
    req: &RelayRequest,
    body: Vec<u8>,
) -> Result<Answer, UpstreamFailure> {
    if req.endpoint != Endpoint::Rerank {
        return Ok(Answer {
            usage: crate::usage::from_openai_bytes(&body),
            body,
        });
    }
    if vendor == RerankVendor::Jina {
        return Ok(Answer {
            usage: usage_of(&body),
            body,
        });
    }
    let v: Value =
        serde_json::from_slice(&body).map_err(|_| invalid_answer("the answer is not JSON"))?;
    let results = v
        .get("results")
        .filter(|r| r.is_array())
        .ok_or_else(|| invalid_answer("the rerank answer has no results"))?;
    let reported = usage(&v);
    let prompt = reported.map_or_else(
        || crate::tokenizer::estimate_prompt(&req.model, Endpoint::Rerank, &req.body),
        |u| u.prompt_tokens,
    );
    let mut out = json!({
        "model": req.model,
        "results": results,
        "usage": {"prompt_tokens": prompt, "total_tokens": prompt},
    });
    if let Some(id) = v.get("id") {
        out["id"] = id.clone();
    }
    if let Some(meta) = v.get("meta") {
        out["meta"] = meta.clone();
    }
    Ok(Answer {
        body: serde_json::to_vec(&out).unwrap_or_default(),
        usage: reported,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> RelayRequest {
        RelayRequest::parse(
            Endpoint::Rerank,
            br#"{"model":"rerank-v3.5","query":"capital of France","documents":["Paris is the capital.","Berlin"]}"#,
        )
        .unwrap()
    }

    #[test]
    fn rerank_tokens_are_input() {
        assert_eq!(
            usage(&json!({"usage": {"total_tokens": 12}}))
                .map(|u| (u.prompt_tokens, u.completion_tokens)),
            Some((12, 0))
        );
        assert_eq!(
            usage(&json!({"usage": {"prompt_tokens": 9, "total_tokens": 12}}))
                .map(|u| u.prompt_tokens),
            Some(9)
        );
        assert_eq!(
            usage(&json!({"meta": {"billed_units": {"search_units": 1, "input_tokens": 30}}}))
                .map(|u| u.prompt_tokens),
            Some(30)
        );
        assert_eq!(
            usage(&json!({"meta": {"billed_units": {"search_units": 1}}})),
            None
        );
    }

    #[test]
    fn cohere_answers_take_the_common_shape() {
        let body = json!({
            "id": "r-1",
            "results": [{"index": 1, "relevance_score": 0.9, "document": {"text": "Berlin"}}],
            "meta": {"api_version": {"version": "1"}, "billed_units": {"search_units": 1}}
        });
        let a = answer(RerankVendor::Cohere, &req(), body.to_string().into_bytes()).unwrap();
        assert_eq!(a.usage, None, "no token count: billing counts and marks it");
        let v: Value = serde_json::from_slice(&a.body).unwrap();
        assert_eq!(v["model"], "rerank-v3.5");
        assert_eq!(v["id"], "r-1");
        assert_eq!(v["results"], body["results"]);
        assert_eq!(v["meta"]["billed_units"]["search_units"], 1);
        let n = v["usage"]["prompt_tokens"].as_i64().unwrap();
        assert_eq!(
            n,
            crate::tokenizer::estimate_prompt("rerank-v3.5", Endpoint::Rerank, &req().body)
        );
        assert!(n > 0);

        let jina =
            json!({"model": "jina-reranker-v2", "usage": {"total_tokens": 7}, "results": []});
        let a = answer(RerankVendor::Jina, &req(), jina.to_string().into_bytes()).unwrap();
        assert_eq!(a.body, jina.to_string().into_bytes(), "passed through");
        assert_eq!(a.usage.map(|u| u.prompt_tokens), Some(7));
        assert!(answer(RerankVendor::Cohere, &req(), b"{}".to_vec()).is_err());
    }
}
