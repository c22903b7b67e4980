//! `agentstream`: play scripted model turns, chat with OpenAI-compatible
//! endpoints, decode recorded streams, and validate and normalize Pi
//! session logs.
//!
//! This file holds only the argument definitions and the dispatch; each
//! subcommand lives in its own module with its own `Args` and `run`.
// One `unsafe` call, in `heap.rs` (glibc's `mallopt`); everything else
// is safe code.
#![deny(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod agent;
mod cassette;
mod catalogue;
mod chat;
mod decode;
#[allow(unsafe_code)]
mod heap;
mod input;
mod jsonl;
mod models;
mod normalize;
mod play;
mod provider;
mod redact;
mod sandbox;
mod serve;
mod session;
mod terminal;
mod transcript;
mod validate;

/// Tools for Pi-compatible agent logs.
#[derive(Debug, Parser)]
#[command(name = "agentstream", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Play scripted turns through a ScriptedModel and print each call's
    /// event types and final text (or every event with --jsonl).
    Play(play::Args),
    /// Check that every message parses and round-trips, and that tool calls
    /// and tool results link up. Exits 1 on any finding, 2 on bad input.
    Validate(validate::Args),
    /// Project a recorded OpenAI-compatible response or (with --api
    /// anthropic|responses|google|azure|mistral|bedrock) an Anthropic
    /// Messages, OpenAI Responses, Gemini, Azure, Mistral or Bedrock one
    /// (SSE or AWS event-stream frames, or one payload per line with
    /// --chunks), or a cassette, offline and print its event types and
    /// final message (or every event with --jsonl).
    Decode(decode::Args),
    /// Stream one answer from an OpenAI-compatible endpoint or (with --api
    /// anthropic|responses|google|azure|mistral|bedrock, or a catalogue
    /// --model) Anthropic's Messages API, OpenAI's Responses API, Google
    /// Gemini, Azure OpenAI, Mistral or Amazon Bedrock: text live,
    /// thinking dimmed, usage at the end; Ctrl-C aborts. The API key is
    /// read from an environment variable.
    Chat(chat::Args),
    /// Run the agent loop with read-only `read` and `ls` tools confined to
    /// a root directory: a script, the built-in demo, or an endpoint of
    /// any --api.
    Agent(agent::Args),
    /// Re-serialize every message through the message IR, one JSON value
    /// per line on stdout.
    Normalize(normalize::Args),
    /// Serve scripted turns (or a recording proxy, or cassettes) as
    /// OpenAI (/v1/chat/completions, /v1/responses), Anthropic
    /// (/v1/messages), Gemini (/v1beta/models/{model}:streamGenerateContent,
    /// :generateContent), Azure OpenAI (/openai/v1/responses), Mistral
    /// (/mistral/v1/chat/completions) and Bedrock
    /// (/model/{id}/converse-stream, /converse) endpoints; prints the base
    /// URL on its first line and runs until Ctrl-C.
    Serve(serve::Args),
    /// List a cassette directory, or find the cassette closest to a request.
    Cassette(cassette::Args),
    /// Read a Pi session file as Pi does: `context` prints what Pi's
    /// buildSessionContext returns for a leaf (or, with --llm, the
    /// messages after convertToLlm); `tree` draws the tree of entries.
    Session(session::Args),
    /// List pi-ai's model catalogue: every model (or one provider's) with
    /// its context window and prices per million tokens; --json prints it
    /// as pi-ai's objects.
    Models(models::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Play(args) => play::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Normalize(args) => normalize::run(args),
        Command::Decode(args) => decode::run(args),
        Command::Chat(args) => chat::run(args),
        Command::Agent(args) => agent::run(args),
        Command::Models(args) => models::run(args),
        Command::Serve(args) => {
            heap::give_back_freed_memory();
            serve::run(args)
        }
        Command::Session(args) => session::run(args),
        Command::Cassette(args) => cassette::run(args),
    };
    match result {
        Ok(code) => code,
        // A closed pipe (`| head`) is not worth a message.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(2),
        Err(e) => {
            eprintln!("agentstream: error: cannot write output: {e}");
            ExitCode::from(2)
        }
    }
}
