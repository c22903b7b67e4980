//! The server half's request decoders fed arbitrary bodies (the first
//! byte picks the protocol): no panic, and a body with a lone surrogate
//! escape decodes as the same body with `\ufffd` in its place does (the
//! rule of the projectors), so nothing is decoded twice differently.
#![no_main]

use agentstream_wire::server::decode_body;
use agentstream_wire::surrogates::replace_lone_surrogates;
use agentstream_wire::Api;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, body)) = input.split_first() else {
        return;
    };
    let api = Api::ALL[usize::from(pick) % Api::ALL.len()];
    let gemini = (api == Api::Gemini).then_some(("m", pick & 0x80 != 0));
    let decoded = decode_body(api, gemini, body);
    let replaced = std::str::from_utf8(body)
        .ok()
        .and_then(replace_lone_surrogates);
    if let Some(replaced) = replaced {
        let again = decode_body(api, gemini, replaced.as_bytes());
        if let (Ok(decoded), Ok(again)) = (&decoded, &again) {
            assert_eq!(decoded.context, again.context);
        }
    }
    if let Ok(decoded) = decoded {
        serde_json::to_string(&decoded.context).expect("a context serializes");
    }
});
