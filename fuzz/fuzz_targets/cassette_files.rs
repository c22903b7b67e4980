//! A cassette's files from a hostile directory, through serve's loader
//! (`Cassette::from_files`, what `serve --replay` runs on each cassette
//! once its files are read): the input is `request.json`,
//! `response.json`, `response.body` and optionally
//! `response.body.lengths`, separated by `\n\0\n`. No panic; a loaded
//! cassette's pieces cover its body exactly.
#![no_main]

use std::path::Path;

use agentstream_fuzz::split_parts;
use agentstream_serve::cassette::{Cassette, CassetteFiles};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let parts = split_parts(input, 4);
    let files = CassetteFiles {
        request_json: parts[0],
        response_json: parts.get(1).copied().unwrap_or_default(),
        lengths: parts.get(3).copied(),
    };
    let body = parts.get(2).copied().unwrap_or_default().to_vec();
    if let Ok(cassette) = Cassette::from_files(Path::new("fuzz/0000"), files, body) {
        assert!((100..=999).contains(&cassette.status));
        let played: Vec<u8> = cassette.pieces().flatten().copied().collect();
        assert_eq!(played, cassette.body);
        assert_eq!(cassette.pieces().count(), cassette.lengths.count());
    }
});
