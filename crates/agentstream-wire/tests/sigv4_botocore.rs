//! Bedrock requests signed by botocore (`tests/fixtures/sigv4/
//! botocore_bedrock.py` wrote `botocore_bedrock.json`) and by the crate's
//! signer from the same inputs and time: the same `x-amz-date`,
//! `x-amz-security-token` and `authorization`.
//!
//! The model id's `:` and `/` go on the wire as `%3A` and `%2F`, so the
//! canonical URI holds `%253A`: this checks SigV4's second encoding of the
//! path where the suite's vectors (raw paths, one encoding) cannot.

use std::path::Path;

use agentstream_wire::bedrock::auth::sigv4::{
    sign, SignableRequest, SigningParams, SigningSettings,
};
use agentstream_wire::bedrock::auth::split_url;
use serde_json::Value;

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn bedrock_requests_sign_as_botocore_signs_them() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sigv4/botocore_bedrock.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let sent: Vec<(String, String)> = case["headers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| {
                (
                    pair[0].as_str().unwrap().to_string(),
                    pair[1].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let authorization = header(&sent, "authorization").unwrap();
        let signed_names = authorization
            .split("SignedHeaders=")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .unwrap();
        assert!(signed_names.contains("host"), "{name}: {signed_names}");

        // The request as it was when botocore signed it: the headers it
        // signed, plus User-Agent (present, left unsigned by both), plus
        // the Host the HTTP layer writes. amz-sdk-request and
        // Content-Length are added by botocore after signing.
        let url = case["url"].as_str().unwrap();
        let parts = split_url(url).unwrap();
        let mut headers: Vec<(&str, &str)> = sent
            .iter()
            .filter(|(n, _)| {
                let lower = n.to_ascii_lowercase();
                lower == "user-agent" || signed_names.split(';').any(|s| s == lower)
            })
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        headers.push(("Host", parts.host));

        let params = SigningParams {
            access_key_id: case["access_key_id"].as_str().unwrap(),
            secret_access_key: case["secret_access_key"].as_str().unwrap(),
            session_token: case["session_token"].as_str(),
            region: case["region"].as_str().unwrap(),
            service: case["service"].as_str().unwrap(),
            time: case["time"].as_u64().unwrap(),
            settings: SigningSettings::default(),
        };
        let signed = sign(
            &params,
            &SignableRequest {
                method: case["method"].as_str().unwrap(),
                path: parts.path,
                query: parts.query,
                headers: &headers,
                body: case["body"].as_str().unwrap().as_bytes(),
            },
        )
        .unwrap();
        assert!(
            signed.canonical_request().contains("%253A"),
            "{name}: the path is encoded twice"
        );
        for (ours, value) in signed.headers() {
            assert_eq!(Some(value.as_str()), header(&sent, ours), "{name}: {ours}");
        }
        let ours: Vec<&str> = signed.headers().iter().map(|(n, _)| *n).collect();
        let expected_count = if params.session_token.is_some() { 3 } else { 2 };
        assert_eq!(ours.len(), expected_count, "{name}: {ours:?}");
    }
}
