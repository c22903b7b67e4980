//! Bedrock credential and region resolution in pi-ai 0.73.1's order,
//! the headers each kind of auth adds, and redaction of every secret in
//! `Debug` output.

use std::collections::HashMap;

use agentstream_wire::bedrock::auth::sigv4::{sign, Credentials, SignableRequest, SigningParams};
use agentstream_wire::bedrock::auth::{
    regional_endpoint, resolve_auth, resolve_region, AuthError, AuthOptions, BedrockAuth,
    RegionResolution,
};
use agentstream_wire::options::{is_secret_header, SECRET_HEADERS};

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const TOKEN: &str = "session-token-EXAMPLE";
const BEARER: &str = "ABSKbedrock-api-key-EXAMPLE";

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

fn keys(session_token: Option<&str>) -> BedrockAuth {
    BedrockAuth::SigV4(Credentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: SECRET.into(),
        session_token: session_token.map(String::from),
    })
}

const STATIC_KEYS: [(&str, &str); 2] = [
    ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
    ("AWS_SECRET_ACCESS_KEY", SECRET),
];

#[test]
fn static_keys_and_a_session_token_sign_with_sigv4() {
    let none = AuthOptions::default();
    assert_eq!(resolve_auth(&none, env(&STATIC_KEYS)), Ok(keys(None)));
    let mut with_token = STATIC_KEYS.to_vec();
    with_token.push(("AWS_SESSION_TOKEN", TOKEN));
    assert_eq!(resolve_auth(&none, env(&with_token)), Ok(keys(Some(TOKEN))));
    // An empty token is no token, as in the AWS SDK.
    with_token.pop();
    with_token.push(("AWS_SESSION_TOKEN", ""));
    assert_eq!(resolve_auth(&none, env(&with_token)), Ok(keys(None)));
}

#[test]
fn a_bearer_token_comes_first() {
    let mut vars = STATIC_KEYS.to_vec();
    vars.push(("AWS_BEARER_TOKEN_BEDROCK", BEARER));
    let none = AuthOptions::default();
    assert_eq!(
        resolve_auth(&none, env(&vars)),
        Ok(BedrockAuth::Bearer(BEARER.into()))
    );
    // The call's own token over the environment's.
    let options = AuthOptions {
        bearer_token: Some("call-token"),
        ..AuthOptions::default()
    };
    assert_eq!(
        resolve_auth(&options, env(&vars)),
        Ok(BedrockAuth::Bearer("call-token".into()))
    );
    // A bearer token also wins over a profile.
    vars.push(("AWS_PROFILE", "work"));
    assert_eq!(
        resolve_auth(&none, env(&vars)),
        Ok(BedrockAuth::Bearer(BEARER.into()))
    );
    // Empty is unset.
    let vars = [
        STATIC_KEYS[0],
        STATIC_KEYS[1],
        ("AWS_BEARER_TOKEN_BEDROCK", ""),
    ];
    assert_eq!(resolve_auth(&none, env(&vars)), Ok(keys(None)));
}

#[test]
fn skip_auth_signs_with_pi_ais_dummy_keys() {
    let none = AuthOptions::default();
    let options = AuthOptions {
        bearer_token: Some("call-token"),
        ..AuthOptions::default()
    };
    let vars = [
        STATIC_KEYS[0],
        STATIC_KEYS[1],
        ("AWS_BEDROCK_SKIP_AUTH", "1"),
    ];
    let dummy = BedrockAuth::SigV4(Credentials {
        access_key_id: "dummy-access-key".into(),
        secret_access_key: "dummy-secret-key".into(),
        session_token: None,
    });
    assert_eq!(resolve_auth(&none, env(&vars)), Ok(dummy.clone()));
    assert_eq!(resolve_auth(&options, env(&vars)), Ok(dummy));
    // The SDK still prefers the environment's bearer token.
    let vars = [
        ("AWS_BEDROCK_SKIP_AUTH", "1"),
        ("AWS_BEARER_TOKEN_BEDROCK", BEARER),
    ];
    assert_eq!(
        resolve_auth(&none, env(&vars)),
        Ok(BedrockAuth::Bearer(BEARER.into()))
    );
    // Only "1" skips.
    let vars = [("AWS_BEDROCK_SKIP_AUTH", "true")];
    assert_eq!(
        resolve_auth(&none, env(&vars)),
        Err(AuthError::NoCredentials)
    );
}

#[test]
fn profiles_and_missing_keys_are_reported_not_guessed() {
    let none = AuthOptions::default();
    let mut vars = STATIC_KEYS.to_vec();
    vars.push(("AWS_PROFILE", "work"));
    // With a profile the AWS SDK skips the environment's keys.
    assert_eq!(
        resolve_auth(&none, env(&vars)),
        Err(AuthError::ProfileUnsupported("work".into()))
    );
    let options = AuthOptions {
        profile: Some("dev"),
        ..AuthOptions::default()
    };
    assert_eq!(
        resolve_auth(&options, env(&STATIC_KEYS)),
        Err(AuthError::ProfileUnsupported("dev".into()))
    );
    assert_eq!(resolve_auth(&none, env(&[])), Err(AuthError::NoCredentials));
    assert_eq!(
        resolve_auth(&none, env(&[("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")])),
        Err(AuthError::NoCredentials)
    );
    let message = AuthError::NoCredentials.to_string();
    assert!(
        message.contains("AWS_BEARER_TOKEN_BEDROCK") && message.contains("not supported"),
        "{message}"
    );
}

#[test]
fn regions_resolve_in_pi_ais_order() {
    let standard = "https://bedrock-runtime.us-west-2.amazonaws.com";
    let custom = "https://bedrock.example.internal/proxy";
    let none = AuthOptions::default();
    let resolved = |region: Option<&str>, use_base_url| RegionResolution {
        region: region.map(String::from),
        use_base_url,
    };
    let call = AuthOptions {
        region: Some("ap-south-1"),
        ..AuthOptions::default()
    };
    let both = [
        ("AWS_REGION", "eu-west-1"),
        ("AWS_DEFAULT_REGION", "eu-central-1"),
    ];

    assert_eq!(
        resolve_region(&call, standard, env(&both)),
        resolved(Some("ap-south-1"), false)
    );
    assert_eq!(
        resolve_region(&none, standard, env(&both)),
        resolved(Some("eu-west-1"), false)
    );
    assert_eq!(
        resolve_region(&none, standard, env(&both[1..])),
        resolved(Some("eu-central-1"), false)
    );
    // No configured region: the standard endpoint's own.
    assert_eq!(
        resolve_region(&none, standard, env(&[])),
        resolved(Some("us-west-2"), true)
    );
    assert_eq!(
        resolve_region(
            &none,
            "https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com/",
            env(&[])
        ),
        resolved(Some("us-gov-west-1"), true)
    );
    // A custom endpoint is always used; its region is the configured one
    // or us-east-1.
    assert_eq!(
        resolve_region(&none, custom, env(&both)),
        resolved(Some("eu-west-1"), true)
    );
    assert_eq!(
        resolve_region(&none, custom, env(&[])),
        resolved(Some("us-east-1"), true)
    );
    // A profile alone leaves the region to the profile: unresolved here.
    let profile = [("AWS_PROFILE", "work")];
    assert_eq!(
        resolve_region(&none, standard, env(&profile)),
        resolved(None, false)
    );
    assert_eq!(
        resolve_region(&none, custom, env(&profile)),
        resolved(None, true)
    );
    // Empty is unset.
    assert_eq!(
        resolve_region(
            &none,
            custom,
            env(&[("AWS_REGION", ""), ("AWS_DEFAULT_REGION", "sa-east-1")])
        ),
        resolved(Some("sa-east-1"), true)
    );

    assert_eq!(
        regional_endpoint("eu-west-1"),
        "https://bedrock-runtime.eu-west-1.amazonaws.com"
    );
    assert_eq!(
        regional_endpoint("cn-north-1"),
        "https://bedrock-runtime.cn-north-1.amazonaws.com.cn"
    );
}

fn request<'a>(headers: &'a [(&'a str, &'a str)]) -> SignableRequest<'a> {
    SignableRequest {
        method: "POST",
        path: "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream",
        query: "",
        headers,
        body: br#"{"messages":[]}"#,
    }
}

#[test]
fn each_kind_of_auth_adds_its_headers() {
    let headers = [
        ("host", "bedrock-runtime.us-east-1.amazonaws.com"),
        ("content-type", "application/json"),
    ];
    let time = 1_796_537_109;
    let bearer = BedrockAuth::Bearer(BEARER.into())
        .headers("us-east-1", time, &request(&headers))
        .unwrap();
    assert_eq!(bearer, vec![("authorization", format!("Bearer {BEARER}"))]);
    assert!(BedrockAuth::None
        .headers("us-east-1", time, &request(&headers))
        .unwrap()
        .is_empty());

    let signed = keys(Some(TOKEN))
        .headers("us-east-1", time, &request(&headers))
        .unwrap();
    let names: Vec<&str> = signed.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        ["x-amz-date", "x-amz-security-token", "authorization"]
    );
    assert_eq!(signed[0].1, "20261206T060509Z");
    assert_eq!(signed[1].1, TOKEN);
    assert!(
        signed[2].1.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261206/us-east-1/bedrock/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature="
        ),
        "{}",
        signed[2].1
    );
    // SigV4 without a host header is an error, not a signature the
    // server will refuse.
    let no_host = [("content-type", "application/json")];
    assert!(keys(None)
        .headers("us-east-1", time, &request(&no_host))
        .is_err());
}

#[test]
fn hostile_requests_are_errors_not_panics() {
    let credentials = Credentials {
        access_key_id: "A".into(),
        secret_access_key: "S".into(),
        session_token: None,
    };
    let params = SigningParams::new(&credentials, "us-east-1", "bedrock", 0);
    let host = ("host", "h");
    let cases: [(&str, Vec<(&str, &str)>); 4] = [
        ("POST", vec![host, ("x", "a\r\nInjected: 1")]),
        ("POST", vec![host, ("bad name", "v")]),
        ("", vec![host]),
        ("PO ST", vec![host]),
    ];
    for (method, headers) in &cases {
        let request = SignableRequest {
            method,
            path: "/",
            query: "",
            headers,
            body: b"",
        };
        assert!(sign(&params, &request).is_err(), "{method:?} {headers:?}");
    }
    let late = SigningParams {
        time: u64::MAX,
        ..params
    };
    let headers = [host];
    let request = SignableRequest {
        method: "GET",
        path: "/../%zz/\u{0}?",
        query: "&&=&%",
        headers: &headers,
        body: b"",
    };
    assert!(sign(&late, &request).is_err());
    // Odd paths and queries sign (they are the caller's), without panics.
    assert!(sign(&params, &request).is_ok());
}

#[test]
fn debug_output_never_holds_a_secret() {
    let headers = [("host", "bedrock-runtime.us-east-1.amazonaws.com")];
    let credentials = Credentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: SECRET.into(),
        session_token: Some(TOKEN.into()),
    };
    let params = SigningParams::new(&credentials, "us-east-1", "bedrock", 1_796_537_109);
    let signed = sign(&params, &request(&headers)).unwrap();
    let options = AuthOptions {
        bearer_token: Some(BEARER),
        ..AuthOptions::default()
    };
    let outputs = [
        format!("{credentials:?}"),
        format!("{params:?}"),
        format!("{signed:?}"),
        format!("{:?}", BedrockAuth::SigV4(credentials.clone())),
        format!("{:?}", BedrockAuth::Bearer(BEARER.into())),
        format!("{options:?}"),
    ];
    for output in &outputs {
        for secret in [SECRET, TOKEN, BEARER, signed.signature()] {
            assert!(!output.contains(secret), "{output} holds a secret");
        }
        assert!(output.contains("<redacted>"), "{output}");
    }
    assert!(
        outputs[0].contains("AKIDEXAMPLE"),
        "the key id is not a secret"
    );
    assert!(outputs[2].contains("x-amz-date"), "{}", outputs[2]);
    for name in ["authorization", "x-amz-security-token"] {
        assert!(SECRET_HEADERS.contains(&name) && is_secret_header(name));
    }
}

proptest::proptest! {
    /// Any method, path, query, headers, body and time: a signature or an
    /// error, never a panic.
    #[test]
    fn any_request_signs_or_errs_without_panicking(
        method in "\\PC{0,8}",
        path in "\\PC{0,40}",
        query in "\\PC{0,40}",
        headers in proptest::collection::vec(("\\PC{0,12}", "\\PC{0,24}"), 0..6),
        body in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
        time in proptest::num::u64::ANY,
    ) {
        let credentials = Credentials { access_key_id: "A".into(), secret_access_key: "S".into(), session_token: Some("T".into()) };
        let params = SigningParams::new(&credentials, "us-east-1", "bedrock", time);
        let mut pairs: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        pairs.push(("host", "h"));
        let request = SignableRequest { method: &method, path: &path, query: &query, headers: &pairs, body: &body };
        if let Ok(signed) = sign(&params, &request) {
            proptest::prop_assert_eq!(signed.signature().len(), 64);
        }
    }
}
