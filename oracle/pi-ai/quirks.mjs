// pi-ai 0.73.1 against `agentstream serve` with each stream quirk of
// crates/agentstream-serve/src/quirks.rs: for each quirk and each API that
// has it, the same turn is asked for plain and with the quirk (one server,
// one rule per case, matched by the user's text), and pi-ai's final message
// of the two is compared (the timestamp and the per-call responseId left
// out; Gemini's tool-call ids too, which the client derives from the
// per-call responseId). A quirk pi-ai does not survive is a finding, not a
// failure: the table is printed and the script exits 0 unless a call fails
// outright.
//
// usage (from a folder where `npm install @mariozechner/pi-ai@0.73.1` was
// run, this file copied there): AGENTSTREAM=path/to/agentstream node quirks.mjs

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { stream } from "@mariozechner/pi-ai";

const BIN = process.env.AGENTSTREAM;
if (!BIN) throw new Error("set AGENTSTREAM to the agentstream binary");

const TURN = {
  role: "assistant",
  content: [
    { type: "thinking", thinking: "Zürich, then Tokyo." },
    { type: "text", text: "Grüße aus Zürich — 東京" },
    { type: "toolCall", id: "call_1", name: "weather", arguments: { city: "Zürich" } },
    { type: "toolCall", id: "call_2", name: "time", arguments: { zone: "Asia/Tokyo", n: 2.5, ok: true, at: { h: [1, 2] }, c: "y" } },
  ],
  stopReason: "toolUse",
  usage: { input: 30, output: 25, cacheRead: 0, cacheWrite: 0, totalTokens: 55, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
};

// The catalogue: quirk → the pi-ai APIs that have it.
const ALL = ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"];
const QUIRKS = {
  emptyDeltas: ["openai-completions"],
  toolCallsOnIndex0: ["openai-completions"],
  toolCallsInOneChunk: ["openai-completions"],
  pingFlood: ["anthropic-messages"],
  inputTokensInDelta: ["anthropic-messages"],
  outputIndexGaps: ["openai-responses"],
  partialArgs: ["google-generative-ai"],
  splitUtf8: ALL,
  repeatedRole: ["openai-completions"],
  noToolCallIds: ["openai-completions"],
  usageOnlyFinalChunk: ["openai-completions"],
  reasoningContent: ["openai-completions"],
  keepAliveComments: ["openai-completions"],
  completedWithoutOutput: ["openai-responses"],
  noCallIds: ["google-generative-ai"],
  interleavedToolBlocks: ["anthropic-messages"],
};

const rules = [{ match: { lastUserText: "case:plain" }, reply: TURN }];
for (const quirk of Object.keys(QUIRKS))
  rules.push({ match: { lastUserText: `case:${quirk}` }, reply: { ...TURN, quirks: [quirk] } });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agentstream-quirks-"));
const scriptPath = path.join(dir, "script.json");
fs.writeFileSync(scriptPath, JSON.stringify({ rules, turns: [] }));

const server = spawn(BIN, ["serve", scriptPath, "--seed", "1"], { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve, reject) => {
  let out = "";
  server.stdout.on("data", (d) => {
    out += d;
    const line = out.split("\n")[0];
    if (out.includes("\n")) resolve(line.trim());
  });
  server.on("exit", (code) => reject(new Error(`serve exited ${code}`)));
});
const BASE = url.replace(/\/v1$/, "");

function model(api) {
  const baseUrl = {
    "anthropic-messages": BASE,
    "google-generative-ai": `${BASE}/v1beta`,
  }[api] ?? `${BASE}/v1`;
  return {
    id: "scripted-model", name: "scripted", api, provider: "agentstream", baseUrl,
    reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000, maxTokens: 4096,
  };
}

async function ask(api, text) {
  const messages = [{ role: "user", content: text, timestamp: 0 }];
  const s = stream(model(api), { messages }, { apiKey: "not-needed", maxRetries: 0, timeoutMs: 15000 });
  for await (const _ of s) {
    // Only the final message is compared.
  }
  const message = await s.result();
  const { timestamp, responseId, ...rest } = message;
  if (api === "google-generative-ai")
    rest.content = rest.content.map((b) => (b.type === "toolCall" ? { ...b, id: null } : b));
  return rest;
}

const rows = [];
try {
  for (const [quirk, apis] of Object.entries(QUIRKS)) {
    for (const api of apis) {
      const plain = await ask(api, "case:plain");
      const quirked = await ask(api, `case:${quirk}`);
      const same = JSON.stringify(plain) === JSON.stringify(quirked);
      rows.push({ quirk, api, survives: same, plain, quirked });
    }
  }
} finally {
  server.kill("SIGINT");
}

console.log("| quirk | API | pi-ai 0.73.1 survives |\n|---|---|---|");
for (const row of rows) {
  let note = "";
  if (!row.survives) {
    note = row.quirked.stopReason === "error" ? `: ${row.quirked.errorMessage}` : `: ${JSON.stringify(row.quirked.content)}`;
    if (JSON.stringify(row.plain.content) === JSON.stringify(row.quirked.content) && row.plain.stopReason === row.quirked.stopReason)
      note = `: same content; usage ${JSON.stringify(row.quirked.usage)} vs ${JSON.stringify(row.plain.usage)}`;
    // The same message but for one field of its blocks: name the field.
    for (const field of ["id", "thinkingSignature"]) {
      const without = (m) => JSON.stringify({ ...m, content: m.content.map(({ [field]: _, ...b }) => b) });
      if (without(row.plain) === without(row.quirked)) {
        const values = row.quirked.content.filter((b) => field in b).map((b) => JSON.stringify(b[field]));
        note = `: same message but the blocks' ${field}: ${values.join(", ")}`;
      }
    }
  }
  console.log(`| \`${row.quirk}\` | ${row.api} | ${row.survives ? "yes" : "no" + note} |`);
}
