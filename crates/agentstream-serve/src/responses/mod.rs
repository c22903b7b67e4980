//! OpenAI Responses (`POST /v1/responses`), sans IO: a request body to a
//! Pi [`Context`](agentstream::message::Context) and options, and model
//! events to the SSE events (or the one Response object) OpenAI sends.
//!
//! # Requests
//!
//! `input` is required: a string (one user message) or an array of items.
//! `instructions`, and `system` and `developer` messages, become the
//! system prompt (joined with a blank line). A `user` message's content is
//! a string or `input_text` and `input_image` parts (a `data:` URL becomes
//! an image block; other images are dropped). Consecutive `message` items
//! of role `assistant`, `reasoning` items and `function_call` items make
//! one assistant turn, as the request builder of the wire crate writes
//! one: an assistant message is a text block whose `textSignature` is
//! `{"v":1,"id":ITEM_ID}`; a reasoning item is a thinking block (its
//! summary texts joined by a blank line) whose `thinkingSignature` is the
//! item's JSON, `encrypted_content` included, so it goes back unchanged; a
//! function call is a tool call with Pi's id `CALL_ID|ITEM_ID` (`CALL_ID`
//! when the item has no id). A `function_call_output` is the result of the
//! call with its `call_id`, its output a string or `input_text` and
//! `input_image` parts. Tools of type `function` become Pi tools (others,
//! such as `web_search`, are dropped, as are the items of built-in tools).
//! Options: `max_output_tokens`, `temperature`, `top_p`, `tool_choice`,
//! `reasoning.effort` and `text.format` (see
//! [`options_json`](crate::options_json)).
//!
//! # Streams
//!
//! As OpenAI sends them, each SSE event with `event: TYPE` and a payload
//! with its `type` and a `sequence_number` counting from 0:
//! `response.created` and `response.in_progress` (the Response with
//! `status: "in_progress"`), then per content block one output item
//! (`output_index` the block's index): `response.output_item.added`; for
//! text `response.content_part.added`, `response.output_text.delta`…,
//! `response.output_text.done`, `response.content_part.done`; for thinking
//! `response.reasoning_summary_part.added`,
//! `response.reasoning_summary_text.delta`…, `….done`, `…part.done`, the
//! finished item carrying the thinking signature (a reasoning item's JSON
//! as it was, or an item with the signature as `encrypted_content`); for a
//! tool call `response.function_call_arguments.delta`… and `….done`; then
//! `response.output_item.done`. The turn ends with `response.completed`
//! (the whole Response, with usage), `response.incomplete`
//! (`incomplete_details.reason: "max_output_tokens"`) for a `length` turn,
//! or `response.failed` (`error: {code: "server_error", message}`) for a
//! model error. A script's mid-stream error is an `error` event.
//!
//! Item ids: a text's `textSignature` id, else `msg_agentstream_N`; a call's
//! item part of `CALL_ID|ITEM_ID`, else `fc_agentstream_N`; a reasoning
//! item's own id, else `rs_agentstream_N` (N the output index). The wire
//! crate's projector reads such a stream back into the scripted message;
//! a call id without `|` comes back as `ID|fc_agentstream_N`.

mod decode;
mod stream;

pub use decode::{decode_body, decode_request};
pub use stream::{response, usage_json, StreamEncoder};
