//! The shaped pump's tests: events a quirk holds at a cut, and Bedrock's
//! binary stream shaped.

mod held {
    //! A script's cut or error, or chaos's disconnect, right after an
    //! event a quirk holds: what was held is written before it.
    use super::super::*;
    use agentstream::message::{
        assistant, text, tool_call, user, AssistantMessage, Context, StopReason,
    };
    use agentstream::model::{Model, ScriptedModel, StreamOptions};
    use agentstream_wire::server::{ApiError, Encoder};
    use agentstream_wire::Api;
    use futures_util::StreamExt;

    /// A turn of two tool calls after a word of text.
    fn calls() -> AssistantMessage {
        assistant(
            [
                text("ok"),
                tool_call("call_1", "lookup", serde_json::json!({"city": "Paris"})),
                tool_call("call_2", "weather", serde_json::json!({"day": "Monday"})),
            ],
            StopReason::ToolUse,
        )
    }

    /// The body a shaped pump writes for `turn` on `api`, and whether it
    /// ended in a cut (an error item).
    fn body(api: Api, step: Step, quirks: &[&str], chaos: Chaos) -> (String, bool) {
        let context = Context::from_messages([user("hi").into()]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let mut events =
                ScriptedModel::new([calls()]).stream(&context, StreamOptions::default());
            let first = events.next().await.unwrap();
            let encoder = Encoder::new(api, "id".into(), "m".into(), 0);
            let pump = Pump::new(encoder, step, Duration::ZERO, &first, events, ());
            let manner = Manner {
                timing: None,
                quirks: Quirks::from_value(serde_json::json!(quirks)).unwrap(),
            };
            let shape = Shape::new(manner, chaos, Rng::for_call(7, None, 0), Box::new(|_| {}));
            let mut body = Vec::new();
            let mut stream = std::pin::pin!(pump.shaped(shape));
            while let Some(item) = stream.next().await {
                match item {
                    Ok(frame) => body.extend_from_slice(&frame.into_data().unwrap()),
                    Err(_) => return (String::from_utf8(body).unwrap(), true),
                }
            }
            (String::from_utf8(body).unwrap(), false)
        })
    }

    use std::time::Duration;

    /// The script's two endings after `n` encoded events.
    fn endings(n: usize) -> [Step; 2] {
        [
            Step::Cut { after_events: n },
            Step::StreamError {
                after_events: n,
                error: ApiError::new(500, "scripted failure"),
            },
        ]
    }

    /// Checks that each ending after `n` events of `api` with `quirk`
    /// writes `held` (what the quirk held then) and not `later`.
    fn check(api: Api, quirk: &str, n: usize, held: &str, later: &str) {
        for step in endings(n) {
            let error = matches!(step, Step::StreamError { .. });
            let (body, cut) = body(api, step, &[quirk], Chaos::default());
            assert!(body.contains(held), "{quirk}: {held} missing in {body}");
            assert!(
                !body.contains(later),
                "{quirk}: {later} is past the end: {body}"
            );
            assert_eq!(cut, !error, "{quirk}: {body}");
            if error {
                assert!(body.contains("scripted failure"), "{body}");
                let at = body.find(held).unwrap_or(usize::MAX);
                assert!(at < body.find("scripted failure").unwrap_or(0), "{body}");
            }
        }
    }

    #[test]
    fn tool_calls_in_one_chunk_writes_the_held_start() {
        // Events 0..3: role, text, call_1's start (held, gathering).
        check(Api::OpenAi, "toolCallsInOneChunk", 3, "call_1", "Paris");
    }

    #[test]
    fn usage_only_final_chunk_writes_the_held_finish() {
        // Event 6 is the finish chunk, held for a usage chunk.
        check(
            Api::OpenAi,
            "usageOnlyFinalChunk",
            7,
            "tool_calls\"",
            "[DONE]",
        );
    }

    #[test]
    fn no_call_ids_writes_the_held_call() {
        // Events 0..2: the text, then `lookup`'s call (held for the end).
        check(Api::Gemini, "noCallIds", 2, "lookup", "weather");
    }

    #[test]
    fn interleaved_tool_blocks_writes_the_held_block() {
        // Events 0..6: the text block, then call_1's start and delta (held).
        check(
            Api::Anthropic,
            "interleavedToolBlocks",
            6,
            "Paris",
            "weather",
        );
    }
}

mod binary {
    //! Bedrock's event stream shaped: timing paces its messages,
    //! `splitUtf8` splits a character inside a payload, a cut counts
    //! messages.
    use super::super::*;
    use agentstream::message::{assistant, text, user, Context, StopReason};
    use agentstream::model::{Model, ModelEvent, ScriptedModel, StreamOptions};
    use agentstream_wire::bedrock::BedrockStream;
    use agentstream_wire::server::Encoder;
    use agentstream_wire::Api;
    use futures_util::StreamExt;
    use std::time::Duration;

    /// The frames of a shaped Bedrock pump for a text turn, with the
    /// paused clock's time after each frame.
    fn frames(manner: Manner, step: Step) -> (Vec<(Bytes, Duration)>, bool) {
        let (frames, cut, _) = chaotic(manner, step, Chaos::default());
        (frames, cut)
    }

    /// [`frames`] with `chaos`, and what it noted.
    fn chaotic(
        manner: Manner,
        step: Step,
        chaos: Chaos,
    ) -> (Vec<(Bytes, Duration)>, bool, Injected) {
        let noted = std::sync::Arc::new(std::sync::Mutex::new(Injected::default()));
        let into = noted.clone();
        let note: Note = Box::new(move |injected| *into.lock().unwrap() = injected);
        let turn = assistant([text("Grüße, Welt")], StopReason::Stop);
        let context = Context::from_messages([user("hi").into()]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let (frames, cut) = runtime.block_on(async {
            let start = tokio::time::Instant::now();
            let mut events = ScriptedModel::new([turn]).stream(&context, StreamOptions::default());
            let first = events.next().await.unwrap();
            let encoder = Encoder::new(Api::Bedrock, "id".into(), "m".into(), 0);
            let pump = Pump::new(encoder, step, Duration::ZERO, &first, events, ());
            let shape = Shape::new(manner, chaos, Rng::for_call(3, None, 0), note).binary(true);
            let mut out = Vec::new();
            let mut stream = std::pin::pin!(pump.shaped(shape));
            while let Some(item) = stream.next().await {
                match item {
                    Ok(frame) => out.push((frame.into_data().unwrap(), start.elapsed())),
                    Err(_) => return (out, true),
                }
            }
            (out, false)
        });
        let injected = noted.lock().unwrap().clone();
        (frames, cut, injected)
    }

    /// The text our Bedrock client decodes from `bytes`, fed in pieces.
    fn decoded(pieces: &[Bytes]) -> (String, usize) {
        let mut stream = BedrockStream::new("m", "amazon-bedrock", None);
        let mut events: Vec<ModelEvent> = Vec::new();
        for piece in pieces {
            events.extend(stream.feed(piece));
        }
        events.extend(stream.finish_input());
        let text = events
            .iter()
            .filter_map(|event| match event {
                ModelEvent::TextDelta { delta, .. } => Some(&**delta),
                _ => None,
            })
            .collect();
        (text, events.len())
    }

    fn manner(value: serde_json::Value, timing: Option<serde_json::Value>) -> Manner {
        Manner {
            timing: timing.map(|t| Timing::from_value(t).unwrap()),
            quirks: Quirks::from_value(value).unwrap(),
        }
    }

    #[test]
    fn split_utf8_splits_inside_a_payload_and_decodes_the_same() {
        let (plain, _) = frames(Manner::default(), Step::Model);
        let (split, _) = frames(manner(serde_json::json!(["splitUtf8"]), None), Step::Model);
        let plain: Vec<Bytes> = plain.into_iter().map(|(b, _)| b).collect();
        let split: Vec<Bytes> = split.into_iter().map(|(b, _)| b).collect();
        assert_eq!(split.concat(), plain.concat());
        assert_eq!(split.len(), plain.len() + 1);
        // Some frame ends inside a character: not valid UTF-8 where it ends.
        let at = split
            .iter()
            .position(|frame| frame.last().is_some_and(|b| *b >= 0xC0))
            .expect("a frame ending with a character's first byte");
        assert!(at + 1 < split.len());
        // The cut falls between the two bytes of "ü" (C3 BC), in a payload.
        let end: usize = split[..=at].iter().map(Bytes::len).sum();
        let all = plain.concat();
        assert_eq!(&all[end - 1..=end], "ü".as_bytes());
        assert_eq!(decoded(&split), decoded(&plain));
        assert_eq!(decoded(&split).0, "Grüße, Welt");
    }

    #[test]
    fn timing_paces_the_messages_on_the_paused_clock() {
        let timing = serde_json::json!({"ttftMs": 500, "tokensPerSecond": 4});
        let (paced, _) = frames(manner(serde_json::json!([]), Some(timing)), Step::Model);
        let (plain, _) = frames(Manner::default(), Step::Model);
        assert!(paced[0].1 >= Duration::from_millis(500), "{paced:?}");
        assert!(plain.iter().all(|(_, at)| at.is_zero()), "{plain:?}");
        let last = paced.last().map(|(_, at)| *at).unwrap_or_default();
        assert!(last > Duration::from_millis(500), "{paced:?}");
        let paced: Vec<Bytes> = paced.into_iter().map(|(b, _)| b).collect();
        let plain: Vec<Bytes> = plain.into_iter().map(|(b, _)| b).collect();
        assert_eq!(paced.concat(), plain.concat());
    }

    #[test]
    fn a_cut_counts_messages() {
        let (plain, _) = frames(Manner::default(), Step::Model);
        let all = plain
            .iter()
            .map(|(b, _)| b.clone())
            .collect::<Vec<_>>()
            .concat();
        let (cut, ended) = frames(
            manner(serde_json::json!(["splitUtf8"]), None),
            Step::Cut { after_events: 2 },
        );
        assert!(ended);
        let cut = cut.into_iter().map(|(b, _)| b).collect::<Vec<_>>().concat();
        let first = usize::try_from(u32::from_be_bytes(all[..4].try_into().unwrap())).unwrap();
        let second = usize::try_from(u32::from_be_bytes(
            all[first..first + 4].try_into().unwrap(),
        ))
        .unwrap();
        assert_eq!(cut, all[..first + second]);
    }

    /// The frames' bytes, joined.
    fn joined(frames: &[(Bytes, Duration)]) -> Vec<u8> {
        frames
            .iter()
            .map(|(b, _)| b.clone())
            .collect::<Vec<_>>()
            .concat()
    }

    #[test]
    fn chaos_drops_breaks_and_cuts_messages_and_notes_them() {
        let (plain, _) = frames(Manner::default(), Step::Model);
        let messages = plain.len();
        let (dropped, _, noted) = chaotic(
            Manner::default(),
            Step::Model,
            Chaos::parse("drop=1").unwrap(),
        );
        assert!(joined(&dropped).is_empty());
        assert!(
            noted.0.len() >= 3 && noted.0.iter().all(|(_, k)| *k == Kind::Drop),
            "{noted:?}"
        );
        let (cut, ended, noted) = chaotic(
            Manner::default(),
            Step::Model,
            Chaos::parse("disconnect=1").unwrap(),
        );
        assert!(ended && joined(&cut).is_empty());
        assert_eq!(noted.0, vec![(0, Kind::Disconnect)]);
        let (broken, _, noted) = chaotic(
            Manner::default(),
            Step::Model,
            Chaos::parse("malformed=1").unwrap(),
        );
        assert!(
            noted.0.iter().all(|(_, k)| *k == Kind::Malformed),
            "{noted:?}"
        );
        assert!(messages >= 1);
        // Every message still decodes (prelude and CRCs valid); no payload
        // is JSON.
        let mut decoder = agentstream_wire::eventstream::EventStreamDecoder::new();
        decoder.feed(&joined(&broken));
        let mut count = 0;
        while let Some(message) = decoder.next_message() {
            let message = message.expect("a valid message");
            assert!(serde_json::from_slice::<serde_json::Value>(message.payload()).is_err());
            count += 1;
        }
        assert_eq!(count, noted.0.len());
        assert!(count >= 3);
        // Our client ends the stream with an error event on the first one.
        let mut stream = BedrockStream::new("m", "amazon-bedrock", None);
        let mut events: Vec<ModelEvent> = stream.feed(&joined(&broken)).collect();
        events.extend(stream.finish_input());
        assert!(
            matches!(events.last(), Some(ModelEvent::Error { .. })),
            "{events:?}"
        );
    }
}
