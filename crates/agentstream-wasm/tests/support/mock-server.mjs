// A mock OpenAI-compatible and Anthropic endpoint on 127.0.0.1 for the
// fetch tests of agentstream-wasm (tests/fetch.rs). It prints its base URL
// on the first line of stdout and serves until it is killed.
//
// Routes, under `/<scenario>/<id>/`:
//   text/…/v1/chat/completions   three text deltas, usage, [DONE]
//   tool/…/v1/chat/completions   a tool call with arguments in two pieces
//   error/…/v1/chat/completions  429 with an OpenAI error body and Retry-After
//   hang/…/v1/chat/completions   one delta, then nothing, until the client
//                                goes away (counted per id)
//   anthropic/…/v1/messages      an Anthropic Messages stream with text
//   azure/…/openai/v1/responses  Azure OpenAI's recorded Responses stream
//                                (the wire crate's azure-text.1 fixture)
//   bedrock/…/model/M/converse-stream
//                                Bedrock's recorded ConverseStream events
//                                (the wire crate's amazon-bedrock-text
//                                fixture) as AWS event-stream frames
//   stats/<id>                   {"closed": n}: hang requests closed by the client
//   closed-port/-                a loopback port nothing listens on (it was
//                                bound once at start, then closed)
// Every answer allows any origin (CORS), so a browser page may call it.
import http from "node:http";
import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";

const fixtures = new URL("../../../agentstream-wire/tests/fixtures/", import.meta.url);
const lines = (path) =>
  readFileSync(new URL(path, fixtures), "utf8").split("\n").filter((line) => line.trim());

// Azure's recorded Responses events, as SSE.
const azureStream = lines("azure-responses-sse/azure-text.1.chunks.jsonl").map(
  (line) => `event: ${JSON.parse(line).type}\ndata: ${line}\n\n`,
);

// One AWS event-stream message: prelude (lengths, CRC32), three string
// headers, the JSON payload, the message CRC32.
function frame(eventType, payload) {
  const header = (name, value) => {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    const len = Buffer.alloc(2);
    len.writeUInt16BE(v.length);
    return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), len, v]);
  };
  const headers = Buffer.concat([
    header(":event-type", eventType),
    header(":content-type", "application/json"),
    header(":message-type", "event"),
  ]);
  const body = Buffer.from(payload);
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(16 + headers.length + body.length, 0);
  prelude.writeUInt32BE(headers.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const head = Buffer.concat([prelude, headers, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(head));
  return Buffer.concat([head, crc]);
}

// Bedrock's recorded ConverseStream events, as frames.
const bedrockFrames = lines("bedrock/amazon-bedrock-text.events.jsonl").map((line) => {
  const [[eventType, payload]] = Object.entries(JSON.parse(line));
  return frame(eventType, JSON.stringify(payload));
});

const closed = new Map();

// A port that refuses connections: bound, then closed again.
const probe = http.createServer();
await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
const closedPort = probe.address().port;
await new Promise((resolve) => probe.close(resolve));

function sse(res, chunks) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "access-control-allow-origin": "*",
  });
  for (const chunk of chunks) res.write(chunk);
}

const openai = (delta, extra = {}) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    model: "mock",
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  })}\n\n`;

const finish = (reason) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    model: "mock",
    choices: [{ index: 0, delta: {}, finish_reason: reason }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
  })}\n\ndata: [DONE]\n\n`;

const anthropic = (type, data) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

const server = http.createServer((req, res) => {
  if (req.method === "OPTIONS") {
    res.writeHead(204, {
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "POST, GET",
      "access-control-allow-headers": "*",
    });
    res.end();
    return;
  }
  const [, scenario, id] = req.url.split("/");
  // Read the request body before answering.
  const body = [];
  req.on("data", (chunk) => body.push(chunk));
  req.on("end", () => {
    switch (scenario) {
      case "echo": {
        // What the client sent that the options and the config decide: the
        // answer's text is that, as JSON.
        const sent = JSON.parse(Buffer.concat(body).toString("utf8"));
        const seen = {
          header: req.headers["x-agentstream-extra"] ?? null,
          maxTokens: sent.max_completion_tokens ?? sent.max_tokens ?? null,
          extra: sent.extra_field ?? null,
        };
        sse(res, [openai({ role: "assistant", content: JSON.stringify(seen) }), finish("stop")]);
        res.end();
        break;
      }
      case "text":
        sse(res, [
          openai({ role: "assistant", content: "" }),
          openai({ content: "Hello" }),
          // One event split across two writes: the reader must join them.
          openai({ content: ", wo" }).slice(0, 20),
          openai({ content: ", wo" }).slice(20),
          openai({ content: "rld" }),
          finish("stop"),
        ]);
        res.end();
        break;
      case "tool":
        sse(res, [
          openai({
            role: "assistant",
            tool_calls: [
              { index: 0, id: "call_1", type: "function", function: { name: "read", arguments: "" } },
            ],
          }),
          openai({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }),
          openai({ tool_calls: [{ index: 0, function: { arguments: '"README.md"}' } }] }),
          finish("tool_calls"),
        ]);
        res.end();
        break;
      case "error":
        res.writeHead(429, {
          "content-type": "application/json",
          "retry-after": "20",
          "access-control-allow-origin": "*",
          "access-control-expose-headers": "retry-after",
        });
        res.end(JSON.stringify({ error: { message: "slow down", type: "rate_limit_error" } }));
        break;
      case "hang":
        res.on("close", () => closed.set(id, (closed.get(id) ?? 0) + 1));
        sse(res, [openai({ role: "assistant", content: "" }), openai({ content: "partial" })]);
        break;
      case "anthropic":
        sse(res, [
          anthropic("message_start", {
            message: {
              id: "msg_1", type: "message", role: "assistant", model: "mock", content: [],
              stop_reason: null, usage: { input_tokens: 5, output_tokens: 0 },
            },
          }),
          anthropic("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
          anthropic("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi from " } }),
          anthropic("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Claude" } }),
          anthropic("content_block_stop", { index: 0 }),
          anthropic("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } }),
          anthropic("message_stop", {}),
        ]);
        res.end();
        break;
      case "azure":
        sse(res, azureStream);
        res.end();
        break;
      case "bedrock": {
        res.writeHead(200, {
          "content-type": "application/vnd.amazon.eventstream",
          "access-control-allow-origin": "*",
        });
        // Cut inside a frame once: the reader must join the pieces.
        const all = Buffer.concat(bedrockFrames);
        res.write(all.subarray(0, 37));
        res.end(all.subarray(37));
        break;
      }
      case "closed-port":
        res.writeHead(200, { "content-type": "text/plain", "access-control-allow-origin": "*" });
        res.end(String(closedPort));
        break;
      case "stats":
        res.writeHead(200, {
          "content-type": "application/json",
          "access-control-allow-origin": "*",
        });
        res.end(JSON.stringify({ closed: closed.get(id) ?? 0 }));
        break;
      default:
        res.writeHead(404, { "access-control-allow-origin": "*" });
        res.end("no such scenario");
    }
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}`);
});
