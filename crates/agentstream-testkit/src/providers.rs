//! The prelude test every host runs for the providers of #41 (a macro
//! alone, so WebAssembly, whose tests take only `conformance`, has it
//! too).

/// The prelude test of the providers added in 0.4 (#41): `BedrockModel`,
/// `AzureModel` and `MistralModel` exist in `$host`'s prelude, and each
/// builds its request on the host's client with the provider's URL and
/// authentication headers (Bedrock's SigV4 headers from static
/// credentials at a fixed time). `$test` is the test attribute (`test`,
/// or `wasm_bindgen_test` on WebAssembly).
///
/// ```text
/// agentstream_testkit::provider_alias_tests!(host: agentstream_smol, test: test);
/// ```
#[macro_export]
macro_rules! provider_alias_tests {
    (host: $host:ident, test: $test:path $(,)?) => {
        #[$test]
        fn bedrock_azure_and_mistral_models_build_their_requests() {
            use $host::agentstream_wire::bedrock::auth::sigv4::Credentials;
            use $host::agentstream_wire::endpoint::Endpoint;
            use $host::prelude::*;

            let context = Context::from_messages([user("hi").into()]);
            let credentials = Credentials {
                access_key_id: "AKID".into(),
                secret_access_key: "secret".into(),
                session_token: Some("token".into()),
            };
            let config = BedrockConfig::new("amazon.nova-lite-v1:0", "eu-west-1")
                .with_credentials(credentials);
            let model: BedrockModel = BedrockModel::new(config).expect("client");
            let mut request = model.endpoint().prepare(&context).expect("request");
            model
                .endpoint()
                .sign(&mut request, 1_700_000_000_000)
                .expect("signed");
            assert_eq!(
                request.url,
                "https://bedrock-runtime.eu-west-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse-stream"
            );
            assert_eq!(request.header("x-amz-date"), Some("20231114T221320Z"));
            assert_eq!(request.header("x-amz-security-token"), Some("token"));
            let authorization = request.header("authorization").unwrap_or_default();
            assert!(
                authorization.starts_with(
                    "AWS4-HMAC-SHA256 Credential=AKID/20231114/eu-west-1/bedrock/aws4_request, \
                     SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, \
                     Signature="
                ),
                "{authorization}"
            );

            let config = AzureConfig::new("https://acme.openai.azure.com", "gpt-5")
                .with_deployment("prod")
                .with_api_key("az-key");
            let model: AzureModel = AzureModel::new(config).expect("client");
            let request = model.endpoint().prepare(&context).expect("request");
            assert_eq!(
                request.url,
                "https://acme.openai.azure.com/openai/v1/responses?api-version=v1"
            );
            assert_eq!(request.header("api-key"), Some("az-key"));
            assert_eq!(request.header("authorization"), None);

            let config = MistralConfig::new("https://api.mistral.ai", "mistral-large-latest")
                .with_api_key("m-key");
            let model: MistralModel = MistralModel::new(config).expect("client");
            let request = model.endpoint().prepare(&context).expect("request");
            assert_eq!(request.url, "https://api.mistral.ai/v1/chat/completions");
            assert_eq!(request.header("authorization"), Some("Bearer m-key"));
        }
    };
}

/// A compile-time check that `$host`'s `BedrockModel`, `AzureModel` and
/// `MistralModel` have `from_env` (the native hosts; not called, since
/// the process environment is not a test's to set).
///
/// ```text
/// agentstream_testkit::from_env_exists!(agentstream_smol);
/// ```
#[macro_export]
macro_rules! from_env_exists {
    ($host:ident) => {
        const _: [fn(&str) -> Result<(), $host::agentstream_wire::env::EnvError>; 3] = [
            |m| $host::BedrockModel::from_env(m).map(drop),
            |m| $host::AzureModel::from_env(m).map(drop),
            |m| $host::MistralModel::from_env(m).map(drop),
        ];
    };
}
