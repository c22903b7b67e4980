//! [`Api`]: the wire protocols this crate speaks, by name, by Pi's `api`
//! id, by request path, with each one's default endpoint and key.
//!
//! This is the one list of protocols: the replay model, `agentstream
//! serve` and the command line all name a protocol with it, and
//! [`Api::visit`] is the one place that turns the name into the
//! protocol's type. Adding a protocol adds one variant here, one line to
//! [`FACTS`] and one arm to `visit`.

use crate::anthropic::AnthropicMessages;
use crate::azure::AzureOpenAiResponses;
use crate::bedrock::Bedrock;
use crate::config::Protocol;
use crate::gemini::Gemini;
use crate::mistral::Mistral;
use crate::openai::OpenAiChat;
use crate::responses::OpenAiResponses;

/// A wire protocol: which provider's request and stream format a call
/// speaks.
///
/// ```
/// use agentstream_wire::Api;
///
/// assert_eq!(Api::from_name("anthropic"), Some(Api::Anthropic));
/// assert_eq!(Api::Anthropic.pi_api(), "anthropic-messages");
/// assert_eq!(Api::from_path("/v1/messages"), Some(Api::Anthropic));
/// assert_eq!(Api::Anthropic.default_key_env(), "ANTHROPIC_API_KEY");
/// assert_eq!(Api::Anthropic.default_base_url(), Some("https://api.anthropic.com"));
/// // Chat Completions is spoken by many endpoints: none is the default.
/// assert_eq!(Api::OpenAi.default_base_url(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Api {
    /// OpenAI-compatible Chat Completions (`POST …/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST …/v1/messages`).
    Anthropic,
    /// OpenAI Responses (`POST …/responses`).
    Responses,
    /// Google Gemini (`POST …/models/{model}:streamGenerateContent` and
    /// `:generateContent`; the Gemini API or Vertex AI).
    Gemini,
    /// Azure OpenAI Responses (`POST …/openai/v1/responses?api-version=…`).
    Azure,
    /// Mistral chat completions (`POST …/v1/chat/completions`; served
    /// under the prefix `/mistral`, as OpenAI's Chat Completions has the
    /// path `/v1/chat/completions`).
    Mistral,
    /// Amazon Bedrock `ConverseStream` (`POST …/model/{modelId}/converse-stream`,
    /// and `…/converse` for a call that does not stream; event-stream
    /// framing, not SSE).
    Bedrock,
}

/// One protocol's facts, in the order of [`Api::ALL`].
struct Facts {
    api: Api,
    /// The command line's name.
    name: &'static str,
    /// Pi's `api` id.
    pi_api: &'static str,
    default_base_url: Option<&'static str>,
    default_key_env: &'static str,
    /// The path a call is posted to, where the path names no model.
    call_path: Option<&'static str>,
}

/// Every protocol's facts: one line each.
const FACTS: [Facts; 7] = [
    Facts {
        api: Api::OpenAi,
        name: "openai",
        pi_api: crate::openai::OPENAI_COMPLETIONS_API,
        default_base_url: None,
        default_key_env: "OPENAI_API_KEY",
        call_path: Some("/v1/chat/completions"),
    },
    Facts {
        api: Api::Anthropic,
        name: "anthropic",
        pi_api: crate::anthropic::ANTHROPIC_MESSAGES_API,
        default_base_url: Some(crate::anthropic::ANTHROPIC_BASE_URL),
        default_key_env: "ANTHROPIC_API_KEY",
        call_path: Some("/v1/messages"),
    },
    Facts {
        api: Api::Responses,
        name: "responses",
        pi_api: crate::responses::OPENAI_RESPONSES_API,
        default_base_url: Some(crate::responses::OPENAI_BASE_URL),
        default_key_env: "OPENAI_API_KEY",
        call_path: Some("/v1/responses"),
    },
    Facts {
        api: Api::Gemini,
        name: "google",
        pi_api: crate::gemini::GEMINI_API,
        default_base_url: Some(crate::gemini::GEMINI_BASE_URL),
        default_key_env: "GEMINI_API_KEY",
        call_path: None,
    },
    Facts {
        api: Api::Azure,
        name: "azure",
        pi_api: crate::azure::AZURE_OPENAI_RESPONSES_API,
        default_base_url: None,
        default_key_env: "AZURE_OPENAI_API_KEY",
        call_path: Some("/openai/v1/responses"),
    },
    Facts {
        api: Api::Mistral,
        name: "mistral",
        pi_api: crate::mistral::MISTRAL_API,
        default_base_url: Some(crate::mistral::MISTRAL_BASE_URL),
        default_key_env: "MISTRAL_API_KEY",
        call_path: Some("/mistral/v1/chat/completions"),
    },
    Facts {
        api: Api::Bedrock,
        name: "bedrock",
        pi_api: crate::bedrock::BEDROCK_API,
        // The endpoint is per region (see `bedrock::auth::regional_endpoint`).
        default_base_url: None,
        default_key_env: "AWS_BEARER_TOKEN_BEDROCK",
        call_path: None,
    },
];

impl Api {
    /// Every protocol, in declaration order.
    pub const ALL: [Api; 7] = [
        Api::OpenAi,
        Api::Anthropic,
        Api::Responses,
        Api::Gemini,
        Api::Azure,
        Api::Mistral,
        Api::Bedrock,
    ];

    /// The old name of [`Api::Gemini`].
    #[deprecated(note = "renamed to `Api::Gemini`")]
    #[allow(non_upper_case_globals)]
    pub const Google: Api = Api::Gemini;

    fn facts(self) -> &'static Facts {
        // `FACTS` lists the protocols in declaration order (a test checks).
        &FACTS[self as usize]
    }

    /// The protocol's short name, as the command line's `--api` takes it:
    /// `openai`, `anthropic`, `responses`, `google`, `azure`, `mistral` or `bedrock`.
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// The protocol of a short [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Api> {
        FACTS.iter().find(|f| f.name == name).map(|f| f.api)
    }

    /// Pi's `api` id of the protocol, as messages carry it:
    /// `openai-completions`, `anthropic-messages`, `openai-responses` or
    /// `google-generative-ai`.
    pub fn pi_api(self) -> &'static str {
        self.facts().pi_api
    }

    /// The protocol of Pi's `api` id (see [`pi_api`](Self::pi_api)).
    ///
    /// ```
    /// use agentstream_wire::Api;
    /// assert_eq!(Api::from_pi_api("openai-responses"), Some(Api::Responses));
    /// assert_eq!(Api::from_pi_api("gopher"), None);
    /// ```
    pub fn from_pi_api(pi_api: &str) -> Option<Api> {
        FACTS.iter().find(|f| f.pi_api == pi_api).map(|f| f.api)
    }

    /// The provider's own endpoint, when the protocol has one: `None` for
    /// Chat Completions, which many endpoints speak.
    pub fn default_base_url(self) -> Option<&'static str> {
        self.facts().default_base_url
    }

    /// The environment variable that holds the provider's API key by
    /// convention.
    pub fn default_key_env(self) -> &'static str {
        self.facts().default_key_env
    }

    /// The path a call is posted to, where the protocol's path names no
    /// model: `/v1/chat/completions`, `/v1/messages`, `/v1/responses`.
    /// `None` for Gemini and Bedrock, whose paths name the model and
    /// whether the call streams (`/v1beta/models/{model}:streamGenerateContent`,
    /// `/model/{modelId}/converse-stream`).
    ///
    /// ```
    /// use agentstream_wire::Api;
    /// assert_eq!(Api::Anthropic.call_path(), Some("/v1/messages"));
    /// assert_eq!(Api::Gemini.call_path(), None);
    /// ```
    pub fn call_path(self) -> Option<&'static str> {
        self.facts().call_path
    }

    /// Whether the protocol's stream is binary (Bedrock's AWS event-stream
    /// messages) rather than SSE text.
    pub fn binary_stream(self) -> bool {
        self == Api::Bedrock
    }

    /// The `content-type` of a streamed answer: `text/event-stream;
    /// charset=utf-8`, Bedrock's `application/vnd.amazon.eventstream`.
    ///
    /// ```
    /// use agentstream_wire::Api;
    /// assert_eq!(Api::Bedrock.stream_content_type(), "application/vnd.amazon.eventstream");
    /// assert!(Api::OpenAi.stream_content_type().starts_with("text/event-stream"));
    /// ```
    pub fn stream_content_type(self) -> &'static str {
        if self.binary_stream() {
            "application/vnd.amazon.eventstream"
        } else {
            "text/event-stream; charset=utf-8"
        }
    }

    /// The methods a call's route takes, as an HTTP `Allow` header lists
    /// them: every protocol posts its calls.
    pub fn call_methods(self) -> &'static str {
        "POST"
    }

    /// The protocol a request to `path` speaks: `…/chat/completions`,
    /// `…/messages`, `…/responses`, or a Gemini model method
    /// (`…:streamGenerateContent`, `…:generateContent`), a Bedrock model's
    /// `…/model/{modelId}/converse-stream` or `…/converse`; a query or
    /// fragment is ignored. `None` for another path.
    ///
    /// ```
    /// use agentstream_wire::Api;
    ///
    /// assert_eq!(Api::from_path("/v1/responses"), Some(Api::Responses));
    /// let gemini = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    /// assert_eq!(Api::from_path(gemini), Some(Api::Gemini));
    /// let bedrock = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream";
    /// assert_eq!(Api::from_path(bedrock), Some(Api::Bedrock));
    /// assert_eq!(Api::from_path("/v1/models"), None);
    /// ```
    pub fn from_path(path: &str) -> Option<Api> {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        let path = path.trim_end_matches('/');
        if path.ends_with(":streamGenerateContent") || path.ends_with(":generateContent") {
            Some(Api::Gemini)
        } else if crate::bedrock::route(path).is_some() {
            Some(Api::Bedrock)
        } else if path.ends_with("/openai/v1/responses") {
            Some(Api::Azure)
        } else if path.ends_with("/mistral/v1/chat/completions") {
            Some(Api::Mistral)
        } else if path.ends_with("/chat/completions") {
            Some(Api::OpenAi)
        } else if path.ends_with("/messages") {
            Some(Api::Anthropic)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else {
            None
        }
    }
}

/// Code generic over a [`Protocol`], run by [`Api::visit`] for the
/// protocol an [`Api`] names: choosing a protocol at run time is then one
/// `match`, in `visit`, instead of one in every caller.
///
/// ```
/// use agentstream_wire::config::Protocol;
/// use agentstream_wire::{Api, ProtocolVisitor};
///
/// /// The provider name each protocol's configuration starts with.
/// struct Provider;
///
/// impl ProtocolVisitor for Provider {
///     type Output = &'static str;
///     fn visit<P: Protocol + Send + Sync + 'static>(self, _protocol: P) -> &'static str {
///         P::PROVIDER
///     }
/// }
///
/// assert_eq!(Api::Anthropic.visit(Provider), "anthropic");
/// ```
pub trait ProtocolVisitor {
    /// What the visit gives.
    type Output;

    /// Runs with `protocol`: the protocol's default configuration (what
    /// its `…Config::new` starts from).
    fn visit<P: Protocol + Send + Sync + 'static>(self, protocol: P) -> Self::Output;
}

impl Api {
    /// Runs `visitor` with this protocol's default [`Protocol`] value.
    pub fn visit<V: ProtocolVisitor>(self, visitor: V) -> V::Output {
        match self {
            Api::OpenAi => visitor.visit(OpenAiChat::default()),
            Api::Anthropic => visitor.visit(AnthropicMessages::default()),
            Api::Responses => visitor.visit(OpenAiResponses::default()),
            Api::Gemini => visitor.visit(Gemini::default()),
            Api::Azure => visitor.visit(AzureOpenAiResponses::default()),
            Api::Mistral => visitor.visit(Mistral),
            Api::Bedrock => visitor.visit(Bedrock::default()),
        }
    }
}

impl core::fmt::Display for Api {
    /// The short [`name`](Api::name).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_facts_are_in_declaration_order_and_names_round_trip() {
        for (index, api) in Api::ALL.into_iter().enumerate() {
            assert_eq!(FACTS[index].api, api);
            assert_eq!(api as usize, index);
            assert_eq!(Api::from_name(api.name()), Some(api));
            assert_eq!(Api::from_pi_api(api.pi_api()), Some(api));
        }
        assert_eq!(Api::from_name("gopher"), None);
    }
}
