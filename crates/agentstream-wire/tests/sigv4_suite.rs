//! The AWS SigV4 test suite (aws-c-auth's `v4` vectors, copied into
//! `tests/fixtures/sigv4/`): for each vector, the canonical request, the
//! string to sign, the signature and the signed request's added headers
//! equal the published files.
//!
//! Every `v4` vector is run with header signing. Not run: the
//! `query-*.txt` files of each vector (presigned-URL signing, which
//! Bedrock does not use and the signer does not implement) and the `v4a`
//! suite (ECDSA signing, not used by Bedrock).

use std::fs;
use std::path::{Path, PathBuf};

use agentstream_wire::bedrock::auth::sigv4::{
    sign, SessionTokenPlacement, SignableRequest, SigningParams, SigningSettings,
};
use serde_json::Value;

/// A request.txt: method, path, query, headers, body.
struct Request {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// Parses a suite request: `METHOD target HTTP/1.1`, `Name:value` lines
/// (a line starting with whitespace continues the previous value), an
/// empty line, the body.
fn parse_request(bytes: &[u8]) -> Request {
    let text = std::str::from_utf8(bytes).expect("request.txt is UTF-8");
    let (head, body) = match text.split_once("\n\n") {
        Some((head, body)) => (head, body.as_bytes().to_vec()),
        None => (text.trim_end_matches('\n'), Vec::new()),
    };
    let mut lines = head.lines();
    let request_line = lines.next().expect("request line");
    let request_line = request_line.strip_suffix(" HTTP/1.1").expect("HTTP/1.1");
    let (method, target) = request_line.split_once(' ').expect("method and target");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        if line.starts_with([' ', '\t']) {
            let last = headers.last_mut().expect("a continuation follows a header");
            last.1.push(' ');
            last.1.push_str(line);
        } else {
            let (name, value) = line.split_once(':').expect("name:value");
            headers.push((name.to_string(), value.to_string()));
        }
    }
    Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers,
        body,
    }
}

/// The suite's one timestamp as UNIX seconds (the signer's date
/// formatting is checked by every canonical request's `x-amz-date`).
fn parse_timestamp(text: &str) -> u64 {
    assert_eq!(text, "2015-08-30T12:36:00Z", "a vector with another time");
    1_440_938_160
}

fn vectors() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sigv4");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("context.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
}

/// The headers the signed request adds to request.txt's, lower-cased.
fn added_headers(signed_request: &str, original: &Request) -> Vec<(String, String)> {
    let signed = parse_request(signed_request.as_bytes());
    let mut added: Vec<(String, String)> = signed
        .headers
        .into_iter()
        .filter(|header| !original.headers.contains(header))
        .map(|(name, value)| (name.to_ascii_lowercase(), value))
        .collect();
    added.sort();
    added
}

#[test]
fn every_v4_vector_signs_as_published() {
    let dirs = vectors();
    assert_eq!(dirs.len(), 38, "the fixture holds the 38 v4 vectors");
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let context: Value = serde_json::from_str(&read(dir, "context.json")).unwrap();
        let request = parse_request(&fs::read(dir.join("request.txt")).unwrap());
        let credentials = &context["credentials"];
        let settings = SigningSettings {
            normalize_path: context["normalize"].as_bool().unwrap(),
            encode_path: true,
            content_sha256_header: context["sign_body"].as_bool().unwrap(),
            session_token: if context["omit_session_token"].as_bool() == Some(true) {
                SessionTokenPlacement::AppendedAfter
            } else {
                SessionTokenPlacement::Signed
            },
        };
        let params = SigningParams {
            access_key_id: credentials["access_key_id"].as_str().unwrap(),
            secret_access_key: credentials["secret_access_key"].as_str().unwrap(),
            session_token: credentials["token"].as_str(),
            region: context["region"].as_str().unwrap(),
            service: context["service"].as_str().unwrap(),
            time: parse_timestamp(context["timestamp"].as_str().unwrap()),
            settings,
        };
        let headers: Vec<(&str, &str)> = request
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let signed = sign(
            &params,
            &SignableRequest {
                method: &request.method,
                path: &request.path,
                query: &request.query,
                headers: &headers,
                body: &request.body,
            },
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut ours: Vec<(String, String)> = signed
            .headers()
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        ours.sort();
        let checks = [
            (
                "canonical request",
                signed.canonical_request().to_string(),
                read(dir, "header-canonical-request.txt"),
            ),
            (
                "string to sign",
                signed.string_to_sign().to_string(),
                read(dir, "header-string-to-sign.txt"),
            ),
            (
                "signature",
                signed.signature().to_string(),
                read(dir, "header-signature.txt"),
            ),
            (
                "added headers",
                format!("{ours:?}"),
                format!(
                    "{:?}",
                    added_headers(&read(dir, "header-signed-request.txt"), &request)
                ),
            ),
        ];
        for (what, got, want) in checks {
            if got != want {
                failures.push(format!("{name}: {what}\n  got:  {got:?}\n  want: {want:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
