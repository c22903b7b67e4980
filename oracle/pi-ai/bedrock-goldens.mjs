// Goldens for the Bedrock projector, from pi-ai 0.73.1 itself: each
// `*.events.jsonl` of crates/agentstream-wire/tests/fixtures/bedrock/ is
// encoded here as AWS event-stream messages (an encoder of this script's
// own, CRC32 from node:zlib) and served on 127.0.0.1 at
// /model/{modelId}/converse-stream to pi-ai's `bedrock-converse-stream`
// provider (AWS_BEDROCK_SKIP_AUTH=1, the model's baseUrl pointed at the
// server). Its events (without the live `partial`) and final message are
// written to tests/fixtures/bedrock/pi-ai/<name>.json, which
// `tests/bedrock_projector.rs` compares with ours.
//
// It also writes pi-ai's request body for a context that exercises the
// whole builder (request.context.json there, the wire body as pi-ai's AWS
// SDK sent it to request.pi.json), which `tests/bedrock_request.rs`
// compares with ours.
//
// Usage (from a directory whose node_modules holds @mariozechner/pi-ai
// 0.73.1, e.g. target/pi-ai-oracle after .ci/pi-ai-oracle.sh):
//   FIXTURES_DIR=crates/agentstream-wire/tests/fixtures/bedrock node bedrock-goldens.mjs
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import { stream } from "@mariozechner/pi-ai";
import { projectEvent } from "./project-event.mjs";

const FIXTURES = process.env.FIXTURES_DIR;
const MODEL_ID = "anthropic.claude-sonnet-4-5";

function header(name, value) {
  const n = Buffer.from(name);
  const v = Buffer.from(value);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(v.length);
  return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), len, v]);
}

function message(eventType, payload) {
  const headers = Buffer.concat([
    header(":event-type", eventType),
    header(":content-type", "application/json"),
    header(":message-type", "event"),
  ]);
  const body = Buffer.from(payload);
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(16 + headers.length + body.length, 0);
  prelude.writeUInt32BE(headers.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(zlib.crc32(prelude));
  const head = Buffer.concat([prelude, preludeCrc, headers, body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(head));
  return Buffer.concat([head, crc]);
}

function bodyOf(file) {
  const frames = [];
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const [[eventType, payload]] = Object.entries(JSON.parse(line));
    frames.push(message(eventType, JSON.stringify(payload)));
  }
  return Buffer.concat(frames);
}

async function run(file, context = { messages: [{ role: "user", content: "replay", timestamp: 0 }] }, options = {}, modelId = MODEL_ID) {
  const body = file ? bodyOf(file) : Buffer.alloc(0);
  const requests = [];
  const server = http.createServer((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      requests.push({ url: req.url, body: text ? JSON.parse(text) : null });
      if (req.method === "POST" && req.url === `/model/${encodeURIComponent(modelId)}/converse-stream`) {
        res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
        res.end(body);
      } else {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: `unexpected ${req.method} ${req.url}` }));
      }
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const model = {
    id: modelId,
    name: modelId,
    api: "bedrock-converse-stream",
    provider: "amazon-bedrock",
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200000,
    maxTokens: 4096,
  };
  const events = [];
  let final;
  try {
    const s = stream(model, context, { maxRetries: 0, ...options });
    for await (const e of s) events.push(projectEvent(e));
    final = JSON.parse(JSON.stringify(await s.result()));
    final.timestamp = 0;
  } finally {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(r));
  }
  return { events, final, requests };
}

process.env.AWS_BEDROCK_SKIP_AUTH = "1";
process.env.AWS_REGION = "us-east-1";
// The SDK speaks HTTP/2 by default; this server is HTTP/1.1.
process.env.AWS_BEDROCK_FORCE_HTTP1 = "1";
const out = path.join(FIXTURES, "pi-ai");
fs.mkdirSync(out, { recursive: true });
for (const name of fs.readdirSync(FIXTURES).sort()) {
  if (!name.endsWith(".events.jsonl")) continue;
  const { events, final } = await run(path.join(FIXTURES, name));
  const result = { events, final };
  const target = path.join(out, name.replace(".events.jsonl", ".json"));
  fs.writeFileSync(target, JSON.stringify(result, null, 2) + "\n");
  console.log(`${name}: ${result.events.map((e) => e.type).join(" ")}`);
}

// The request body: a Claude 4.5 model (prompt caching, budget thinking),
// every kind of message, two tool results in a row, an id to normalise.
const requestModel = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const meta = { api: "bedrock-converse-stream", provider: "amazon-bedrock", model: requestModel };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const context = {
  systemPrompt: "Be brief.",
  messages: [
    { role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], timestamp: 0 },
    { role: "assistant", content: [
      { type: "thinking", thinking: "Look it up.", thinkingSignature: "sig-1" },
      { type: "text", text: "  " },
      { type: "text", text: "Looking." },
      { type: "toolCall", id: "call|1", name: "lookup", arguments: { q: "x" } },
      { type: "toolCall", id: "call_2", name: "lookup", arguments: {} },
    ], ...meta, usage, stopReason: "toolUse", timestamp: 0 },
    { role: "toolResult", toolCallId: "call|1", toolName: "lookup", content: [{ type: "text", text: "found" }], isError: false, timestamp: 0 },
    { role: "toolResult", toolCallId: "call_2", toolName: "lookup", content: [{ type: "text", text: "failed" }], isError: true, timestamp: 0 },
    { role: "assistant", content: [{ type: "thinking", thinking: "unsigned" }, { type: "text", text: "Done." }], ...meta, usage, stopReason: "stop", timestamp: 0 },
    { role: "user", content: "Thanks", timestamp: 0 },
  ],
  tools: [{ name: "lookup", description: "Look up", parameters: { type: "object", properties: { q: { type: "string" } } } }],
};
const options = { maxTokens: 1000, temperature: 0.5, reasoning: "medium", toolChoice: "auto" };
const { requests } = await run(null, context, options, requestModel);
fs.writeFileSync(path.join(out, "request.context.json"), JSON.stringify({ context, options }, null, 2) + "\n");
fs.writeFileSync(path.join(out, "request.pi.json"), JSON.stringify(requests[0], null, 2) + "\n");
console.log(`request: ${requests[0].url}`);
