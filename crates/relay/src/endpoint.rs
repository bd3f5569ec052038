//! The endpoints the relay serves: OpenAI's, plus Anthropic's Messages API (`/v1/messages`)
//! and Gemini's `generateContent` (`/gemini/{version}/models/{model}:{method}`).

/// One relayed OpenAI endpoint. Paths are the `/v1` ones; channel base URLs are stored without
/// `/v1`, so `base_url + path()` is the upstream URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    ChatCompletions,
    Completions,
    Embeddings,
    Moderations,
    ImagesGenerations,
    AudioSpeech,
    AudioTranscriptions,
    AudioTranslations,
    Rerank,
    Responses,
    /// Anthropic Messages (`POST /v1/messages`), in Anthropic's own protocol.
    Messages,
    /// Gemini `generateContent` and `streamGenerateContent` (`POST
    /// /gemini/{version}/models/{model}:{method}`), in Gemini's own protocol. The model comes
    /// from the path, not the body.
    GenerateContent,
}

impl Endpoint {
    /// Every endpoint, in declaration order.
    pub const ALL: [Endpoint; 12] = [
        Endpoint::ChatCompletions,
        Endpoint::Completions,
        Endpoint::Embeddings,
        Endpoint::Moderations,
        Endpoint::ImagesGenerations,
        Endpoint::AudioSpeech,
        Endpoint::AudioTranscriptions,
        Endpoint::AudioTranslations,
        Endpoint::Rerank,
        Endpoint::Responses,
        Endpoint::Messages,
        Endpoint::GenerateContent,
    ];

    /// The request path, including `/v1` (for [`Endpoint::GenerateContent`], Gemini's path
    /// pattern, which is not served under `/v1`).
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::ChatCompletions => "/v1/chat/completions",
            Endpoint::Completions => "/v1/completions",
            Endpoint::Embeddings => "/v1/embeddings",
            Endpoint::Moderations => "/v1/moderations",
            Endpoint::ImagesGenerations => "/v1/images/generations",
            Endpoint::AudioSpeech => "/v1/audio/speech",
            Endpoint::AudioTranscriptions => "/v1/audio/transcriptions",
            Endpoint::AudioTranslations => "/v1/audio/translations",
            Endpoint::Rerank => "/v1/rerank",
            Endpoint::Responses => "/v1/responses",
            Endpoint::Messages => "/v1/messages",
            Endpoint::GenerateContent => "/v1beta/models/{model}:generateContent",
        }
    }

    /// The endpoint served at `path`. A query string and one trailing slash are ignored; the
    /// match is otherwise exact (case-sensitive, like OpenAI's).
    pub fn from_path(path: &str) -> Option<Endpoint> {
        let path = path.split(['?', '#']).next().unwrap_or(path);
        let path = path.strip_suffix('/').unwrap_or(path);
        Endpoint::ALL.into_iter().find(|e| e.path() == path)
    }

    /// The client sends `multipart/form-data` (audio transcriptions and translations); the body
    /// is then forwarded as raw bytes.
    pub fn is_multipart(self) -> bool {
        matches!(
            self,
            Endpoint::AudioTranscriptions | Endpoint::AudioTranslations
        )
    }

    /// Streams that report usage only when asked with `stream_options.include_usage`.
    pub fn wants_include_usage(self) -> bool {
        matches!(self, Endpoint::ChatCompletions | Endpoint::Completions)
    }

    /// Endpoints whose answer is generated text priced per output token, bounded by an output
    /// limit the relay can set (`max_tokens` and its equivalents).
    pub fn generates_text(self) -> bool {
        matches!(
            self,
            Endpoint::ChatCompletions
                | Endpoint::Completions
                | Endpoint::Responses
                | Endpoint::Messages
                | Endpoint::GenerateContent
        )
    }

    /// Whether the client speaks Anthropic's protocol (requests, answers and errors).
    pub fn is_anthropic(self) -> bool {
        self == Endpoint::Messages
    }

    /// Whether the client speaks Gemini's protocol (requests, answers and errors).
    pub fn is_gemini(self) -> bool {
        self == Endpoint::GenerateContent
    }

    /// Served under `/v1` at [`Endpoint::path`] (every endpoint but Gemini's).
    pub fn under_v1(self) -> bool {
        !self.is_gemini()
    }

    /// The model used when the client sends none, for endpoints where OpenAI has a default.
    pub fn default_model(self) -> Option<&'static str> {
        match self {
            Endpoint::Moderations => Some("omni-moderation-latest"),
            Endpoint::ImagesGenerations => Some("dall-e-2"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_round_trips() {
        for e in Endpoint::ALL {
            assert_eq!(Endpoint::from_path(e.path()), Some(e));
        }
        assert_eq!(Endpoint::Rerank.path(), "/v1/rerank");
    }

    #[test]
    fn from_path_ignores_query_and_trailing_slash_only() {
        assert_eq!(
            Endpoint::from_path("/v1/chat/completions?api-version=1"),
            Some(Endpoint::ChatCompletions)
        );
        assert_eq!(
            Endpoint::from_path("/v1/embeddings/"),
            Some(Endpoint::Embeddings)
        );
        assert_eq!(Endpoint::from_path("/v1/chat/completions/x"), None);
        assert_eq!(Endpoint::from_path("/chat/completions"), None);
        assert_eq!(Endpoint::from_path(""), None);
    }
}
