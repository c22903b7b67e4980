//! The canonical request's parts: the URI path (normalised and
//! percent-encoded), the sorted query and the canonical headers, and the
//! split of a URL into the host, path and query SigV4 signs.

use alloc::string::String;
use alloc::vec::Vec;

use super::sigv4::SigningError;

/// Headers never signed: the ones the signer writes itself, and those a
/// proxy or the HTTP stack may change on the way (the AWS SDKs leave the
/// same ones out).
const UNSIGNED_HEADERS: [&str; 11] = [
    "authorization",
    "connection",
    "expect",
    "keep-alive",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "x-amzn-trace-id",
];

/// Whether SigV4 leaves `byte` as it is (RFC 3986's unreserved set).
fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~')
}

/// Appends `bytes` percent-encoded: everything but the unreserved set
/// (and `/` when `keep_slash`) as `%XX`, upper-case hex.
pub(crate) fn percent_encode_into(out: &mut String, bytes: &[u8], keep_slash: bool) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &byte in bytes {
        if is_unreserved(byte) || (keep_slash && byte == b'/') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
}

/// `text` with its `%XX` escapes decoded; a `%` not followed by two hex
/// digits stays as it is.
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        if byte == b'%' {
            let hi = bytes.get(i + 1).and_then(|b| char::from(*b).to_digit(16));
            let lo = bytes.get(i + 2).and_then(|b| char::from(*b).to_digit(16));
            if let (Some(hi), Some(lo)) = (hi, lo) {
                // Two hex digits are at most 0xff.
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(byte);
        i += 1;
    }
    out
}

/// Removes empty, `.` and `..` segments (RFC 3986 §5.2.4, with repeated
/// slashes collapsed as SigV4 asks); the result starts with `/` and keeps
/// a trailing slash.
fn normalize_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    let mut out = String::with_capacity(path.len() + 1);
    for segment in &segments {
        out.push('/');
        out.push_str(segment);
    }
    let trailing = path.ends_with('/') || path.ends_with("/.") || path.ends_with("/..");
    if out.is_empty() || (trailing && !segments.is_empty()) {
        out.push('/');
    }
    out
}

/// The canonical URI of `path` (as it goes on the wire): dot segments
/// removed when `normalize`, then every byte but the unreserved set and
/// `/` percent-encoded when `encode` (so an escape already on the wire is
/// encoded a second time, as SigV4 asks of every service but S3).
pub(crate) fn canonical_uri(path: &str, normalize: bool, encode: bool) -> String {
    let path = if path.is_empty() { "/" } else { path };
    let normalized;
    let path = if normalize {
        normalized = normalize_path(path);
        normalized.as_str()
    } else {
        path
    };
    if encode {
        let mut out = String::with_capacity(path.len() + 8);
        percent_encode_into(&mut out, path.as_bytes(), true);
        out
    } else {
        String::from(path)
    }
}

/// The canonical query string: each `name=value` pair decoded and
/// encoded again with SigV4's unreserved set, sorted by name then value,
/// joined with `&`. A pair without `=` has an empty value.
pub(crate) fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let mut encoded_name = String::new();
            percent_encode_into(&mut encoded_name, &percent_decode(name), false);
            let mut encoded_value = String::new();
            percent_encode_into(&mut encoded_value, &percent_decode(value), false);
            (encoded_name, encoded_value)
        })
        .collect();
    pairs.sort();
    let mut out = String::with_capacity(query.len() + 8);
    for (i, (name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(name);
        out.push('=');
        out.push_str(value);
    }
    out
}

/// Whether `name` is an HTTP token (RFC 9110 `tchar`s, at least one).
fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Appends `value` trimmed, with each run of spaces and tabs inside it
/// as one space.
fn push_folded(out: &mut String, value: &str) {
    let mut words = value.split([' ', '\t']).filter(|word| !word.is_empty());
    if let Some(first) = words.next() {
        out.push_str(first);
        for word in words {
            out.push(' ');
            out.push_str(word);
        }
    }
}

/// The canonical headers block (`name:value\n` each, names in lower case
/// and sorted, repeated names joined with `,` in order) and the signed
/// headers list (`a;b;c`), over the request's headers minus the
/// [`UNSIGNED_HEADERS`] and `skip` (the signer's own), plus `extra`.
///
/// # Errors
/// [`SigningError::InvalidHeader`] for a name that is not an HTTP token
/// or a value with a control character other than tab.
pub(crate) fn canonical_headers(
    headers: &[(&str, &str)],
    skip: &[&str],
    extra: &[(&str, &str)],
) -> Result<(String, String), SigningError> {
    let mut lowered: Vec<(String, &str)> = Vec::with_capacity(headers.len() + extra.len());
    for (i, (name, value)) in headers.iter().chain(extra).enumerate() {
        if !is_token(name) || value.bytes().any(|b| b != b'\t' && (b < 0x20 || b == 0x7f)) {
            return Err(SigningError::InvalidHeader(String::from(*name)));
        }
        let name = name.to_ascii_lowercase();
        let from_request = i < headers.len();
        if UNSIGNED_HEADERS.contains(&name.as_str())
            || (from_request && skip.contains(&name.as_str()))
        {
            continue;
        }
        lowered.push((name, value));
    }
    // Stable: repeated names keep the request's order.
    lowered.sort_by(|a, b| a.0.cmp(&b.0));
    let mut block = String::new();
    let mut signed = String::new();
    let mut previous: Option<&str> = None;
    for (name, value) in &lowered {
        if previous == Some(name.as_str()) {
            block.push(',');
        } else {
            if previous.is_some() {
                block.push('\n');
                signed.push(';');
            }
            block.push_str(name);
            block.push(':');
            signed.push_str(name);
        }
        push_folded(&mut block, value);
        previous = Some(name.as_str());
    }
    if previous.is_some() {
        block.push('\n');
    }
    Ok((block, signed))
}

/// A URL's parts as SigV4 signs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// The `host` header's value: the host, and the port unless it is
    /// the scheme's default.
    pub host: &'a str,
    /// The path as on the wire, `/` when the URL has none.
    pub path: &'a str,
    /// The query without its `?`, empty when there is none.
    pub query: &'a str,
}

/// Splits an `http` or `https` URL into the host, path and query SigV4
/// signs (a fragment is dropped, a default port left out of the host).
///
/// # Errors
/// [`SigningError::InvalidUrl`] for another scheme, an empty host or
/// user information (`user@host`).
pub fn split_url(url: &str) -> Result<UrlParts<'_>, SigningError> {
    let invalid = || SigningError::InvalidUrl(String::from(url));
    let (scheme, rest) = url.split_once("://").ok_or_else(invalid)?;
    let default_port = if scheme.eq_ignore_ascii_case("https") {
        ":443"
    } else if scheme.eq_ignore_ascii_case("http") {
        ":80"
    } else {
        return Err(invalid());
    };
    let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if authority.is_empty() || authority.contains('@') {
        return Err(invalid());
    }
    let host = authority.strip_suffix(default_port).unwrap_or(authority);
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let path = if path.is_empty() { "/" } else { path };
    Ok(UrlParts { host, path, query })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_as_rfc_3986_with_slashes_collapsed() {
        for (path, expected) in [
            ("/", "/"),
            ("", "/"),
            ("//", "/"),
            ("/a/b/../c", "/a/c"),
            ("/a/b/..", "/a/"),
            ("/../..", "/"),
            ("/a/./b/", "/a/b/"),
            ("//a//b//", "/a/b/"),
        ] {
            assert_eq!(normalize_path(path), expected, "{path}");
        }
    }

    #[test]
    fn escapes_on_the_wire_are_encoded_again() {
        assert_eq!(
            canonical_uri("/model/a.b-v1%3A0/converse", true, true),
            "/model/a.b-v1%253A0/converse"
        );
        assert_eq!(canonical_uri("/a%3Ab", true, false), "/a%3Ab");
    }

    #[test]
    fn queries_decode_then_encode_and_sort() {
        assert_eq!(
            canonical_query("b=2&a=%7e&a=1&c&%zz=+"),
            "%25zz=%2B&a=1&a=~&b=2&c="
        );
        assert_eq!(canonical_query(""), "");
    }

    #[test]
    fn headers_reject_control_characters_and_bad_names() {
        assert!(canonical_headers(&[("a", "x\ny")], &[], &[]).is_err());
        assert!(canonical_headers(&[("a b", "x")], &[], &[]).is_err());
        assert!(canonical_headers(&[("", "x")], &[], &[]).is_err());
        let (block, signed) = canonical_headers(
            &[
                ("B", " 1\t 2 "),
                ("a", "x"),
                ("User-Agent", "u"),
                ("b", "3"),
            ],
            &[],
            &[],
        )
        .unwrap();
        assert_eq!(block, "a:x\nb:1 2,3\n");
        assert_eq!(signed, "a;b");
    }

    #[test]
    fn urls_split_into_host_path_and_query() {
        let parts =
            split_url("https://bedrock-runtime.us-east-1.amazonaws.com:443/model/m/converse?x=1#f")
                .unwrap();
        assert_eq!(parts.host, "bedrock-runtime.us-east-1.amazonaws.com");
        assert_eq!(parts.path, "/model/m/converse");
        assert_eq!(parts.query, "x=1");
        let parts = split_url("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (parts.host, parts.path, parts.query),
            ("127.0.0.1:8080", "/", "")
        );
        assert!(split_url("ftp://h/").is_err());
        assert!(split_url("https:///x").is_err());
        assert!(split_url("https://u@h/").is_err());
        assert!(split_url("no scheme").is_err());
    }
}
