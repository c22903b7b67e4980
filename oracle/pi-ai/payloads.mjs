#!/usr/bin/env node
// The requests pi-ai 0.73.1 sends, captured offline: for every case of the
// two matrices below (catalogue models × cache retentions with pi-ai's
// `stream`; thinking models × thinking levels with `streamSimple`, as Pi's
// agent calls it, `off` sent as no `reasoning`), one context with a system
// prompt, a tool, an image and a tool result, pi-ai is
// run with `fetch` replaced by a recorder that answers 599 without any
// network; the recorded request ({method, url, headers, body}) is written
// out. Header names are lower-cased and secret values redacted as
// `agentstream chat --dry-run` does.
//
// Usage (from a folder where the oracle's package-lock was installed):
//   node payloads.mjs OUT.json          write the captured requests
//   node payloads.mjs --cases           print the matrix (one JSON case a line)
// The committed golden file is oracle/pi-ai/golden/payloads.json; the
// context is oracle/pi-ai/golden/context.json (Pi's JSON).

import fs from "node:fs";
import path from "node:path";
import { getModel, stream, streamSimple } from "@mariozechner/pi-ai";

const HERE = path.dirname(new URL(import.meta.url).pathname);
const CONTEXT_FILE = process.env.CONTEXT_FILE || path.join(HERE, "golden", "context.json");

// At least one model per api we speak (Azure OpenAI Responses and Mistral too), the OpenRouter anthropic/* cache
// markers (on a reasoning and a plain model), a plain OpenRouter model with
// images and a DeepSeek model.
export const MODELS = [
  ["anthropic", "claude-sonnet-4-5"],
  ["anthropic", "claude-opus-4-7"],
  ["openai", "gpt-4o"],
  ["openai", "gpt-5"],
  ["groq", "llama-3.3-70b-versatile"],
  ["openrouter", "anthropic/claude-sonnet-4"],
  ["openrouter", "anthropic/claude-3.5-haiku"],
  ["openrouter", "meta-llama/llama-4-scout"],
  ["deepseek", "deepseek-v4-flash"],
  ["google", "gemini-2.5-flash"],
  ["azure-openai-responses", "gpt-5"],
  ["mistral", "mistral-medium-latest"],
];
// Azure's catalogue models have no base URL: pi-ai builds it from the
// resource name (the command line reads the same variable).
export const AZURE_RESOURCE_NAME = "agentstream-test";
process.env.AZURE_OPENAI_RESOURCE_NAME = AZURE_RESOURCE_NAME;
export const RETENTIONS = ["none", "short", "long"];
// Thinking levels: one model per api and per thinking format the catalogue
// uses (qwen-chat-template has no catalogue model), the adaptive and the
// budget Claude families, and three Gemini families (2.5 budgets, 3 Pro
// and 3 Flash levels).
export const THINKING_MODELS = [
  ["anthropic", "claude-opus-4-7"],
  ["anthropic", "claude-opus-4-6"],
  ["anthropic", "claude-sonnet-4-5"],
  ["openai", "gpt-5.2"],
  ["groq", "openai/gpt-oss-120b"],
  ["xai", "grok-4"],
  ["openrouter", "openai/gpt-5"],
  ["deepseek", "deepseek-v4-flash"],
  ["zai", "glm-4.5-air"],
  ["opencode-go", "qwen3.5-plus"],
  ["google", "gemini-2.5-pro"],
  ["google", "gemini-3-pro-preview"],
  ["google", "gemini-3-flash-preview"],
];
export const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
export const SESSION_ID = "session-0001";
export const MAX_TOKENS = 1024;

const SECRET_WORDS = ["key", "token", "secret", "auth", "password", "passwd", "signature", "credential"];
const isSecret = (name) => SECRET_WORDS.some((w) => name.includes(w));

function cases() {
  const out = [];
  for (const [provider, id] of MODELS) {
    if (!getModel(provider, id)) throw new Error(`no model ${provider}/${id} in pi-ai's catalogue`);
    for (const cacheRetention of RETENTIONS) out.push({ provider, id, cacheRetention });
  }
  for (const [provider, id] of THINKING_MODELS) {
    if (!getModel(provider, id)) throw new Error(`no model ${provider}/${id} in pi-ai's catalogue`);
    for (const thinking of LEVELS) out.push({ provider, id, cacheRetention: "short", thinking });
  }
  return out;
}

async function capture(c, context) {
  let request;
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init = {}) => {
    const url = typeof input === "string" ? input : input.url;
    const headers = {};
    for (const [k, v] of new Headers(init.headers ?? (typeof input === "string" ? {} : input.headers))) {
      headers[k.toLowerCase()] = isSecret(k.toLowerCase()) ? "<redacted>" : v;
    }
    // The Mistral SDK hands fetch a Request that carries the method and body.
    const method = init.method ?? (typeof input === "string" ? "GET" : input.method);
    const body = init.body ?? (typeof input === "string" ? undefined : await input.text());
    request = { method, url, headers, body: JSON.parse(body) };
    return new Response("captured", { status: 599 });
  };
  try {
    const model = getModel(c.provider, c.id);
    const options = {
      apiKey: "test-key",
      cacheRetention: c.cacheRetention,
      sessionId: SESSION_ID,
      maxTokens: MAX_TOKENS,
      maxRetries: 0,
    };
    const s = c.thinking
      ? streamSimple(model, context, { ...options, reasoning: c.thinking === "off" ? undefined : c.thinking })
      : stream(model, context, options);
    await s.result();
  } finally {
    globalThis.fetch = realFetch;
  }
  if (!request) throw new Error(`${c.provider}/${c.id}: no request captured`);
  return request;
}

const args = process.argv.slice(2);
if (args[0] === "--cases") {
  for (const c of cases()) console.log(JSON.stringify(c));
} else if (args[0]) {
  const context = JSON.parse(fs.readFileSync(CONTEXT_FILE, "utf8"));
  const results = [];
  for (const c of cases()) results.push({ case: c, request: await capture(c, context) });
  fs.writeFileSync(args[0], JSON.stringify(results, null, 1) + "\n");
  console.log(`${results.length} requests captured`);
} else {
  console.error("usage: node payloads.mjs OUT.json | --cases");
  process.exit(2);
}
