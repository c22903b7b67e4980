// Prints what the real Pi (pi-ai and pi-coding-agent 0.73.1) answers for
// the deterministic parts of compaction: isContextOverflow on a list of
// provider error texts and usages, and estimateTokens for every message of
// the default-leaf context of each session file in the given directories
// and for a few messages written here (floats, surrogate pairs, controls),
// findCutPoint on each file's default branch for several budgets, and
// serializeConversation and generateSummary's prompts (read from the
// request a stand-in provider receives) for each file's default context.
//
//   node compaction.mjs [--check] OUT.json DIR...
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isContextOverflow } from "@mariozechner/pi-ai";
import {
  convertToLlm, estimateTokens, findCutPoint, generateSummary, serializeConversation, SessionManager,
} from "@mariozechner/pi-coding-agent";
import { standIn } from "./stand-in.mjs";

// A provider that answers at once and keeps the request, so that
// generateSummary's prompts can be read without a model.
const seen = standIn("oracle");
const oracleModel = { id: "oracle", name: "oracle", api: "oracle", provider: "oracle", baseUrl: "", reasoning: false,
  input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
async function prompts(messages, custom, previous) {
  await generateSummary(messages, oracleModel, 1000, "key", undefined, undefined, custom, previous);
  const { context } = seen.request;
  return { system: context.systemPrompt, prompt: context.messages[0].content[0].text };
}

let args = process.argv.slice(2);
const check = args[0] === "--check";
if (check) args = args.slice(1);
const [out, ...dirs] = args;

const usage = (input, output, cacheRead) => ({ input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const msg = (stopReason, errorMessage, u = usage(10, 5, 0)) => ({ role: "assistant", content: [], api: "x", provider: "x", model: "x",
  usage: u, stopReason, timestamp: 0, ...(errorMessage === undefined ? {} : { errorMessage }) });

const texts = [
  "prompt is too long: 213462 tokens > 200000 maximum",
  "PROMPT IS TOO LONG",
  "request_too_large",
  "Input is too long for requested model.",
  "Your input exceeds the context window of this model",
  "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
  "The input token count is big\nand exceeds the maximum",
  "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
  "maximum prompt length is many",
  "Please reduce the length of the messages or completion.",
  "This endpoint's maximum context length is 128000 tokens. However, you requested 200000",
  "maximum context length is 128000 token",
  "prompt token count of 9000 exceeds the limit of 8192",
  "the request exceeds the available context size, try increasing it",
  "tokens to keep from the initial prompt is greater than the context length",
  "invalid params, context window exceeds limit (2013)",
  "Your request exceeded model token limit: 262144 (requested: 291351)",
  "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
  "model_context_window_exceeded",
  "prompt too long; exceeded max context length by 100 tokens",
  "prompt too long; exceeded context length by 100 tokens",
  "context_length_exceeded",
  "context length exceeded",
  "context_length-exceeded",
  "Too many tokens in the request",
  "token limit exceeded",
  "400 (no body)",
  "413 status code (no body)",
  "400\u00a0 status code\t(no body)",
  "400status code(no body)",
  "4000 (no body)",
  " 400 (no body)",
  "Throttling error: prompt is too long",
  "Service unavailable: too many tokens",
  "rate limit reached: prompt is too long",
  "Too Many Requests: context_length_exceeded",
  "Throttling errors: prompt is too long",
  "connection reset",
  "",
];
const overflow = [];
for (const t of texts) overflow.push({ message: msg("error", t), contextWindow: 200000 });
overflow.push({ message: msg("error", undefined), contextWindow: 200000 });
overflow.push({ message: msg("stop", "prompt is too long"), contextWindow: 0 });
for (const [stop, u, w] of [
  ["stop", usage(150000, 10, 60000), 200000], ["stop", usage(150000, 10, 50000), 200000],
  ["stop", usage(150000, 10, 60000), 0], ["stop", usage(150000, 10, 60000), undefined],
  ["length", usage(198000, 0, 0), 200000], ["length", usage(197999, 0, 0), 200000],
  ["length", usage(198000, 1, 0), 200000], ["toolUse", usage(300000, 0, 0), 200000],
]) overflow.push({ message: msg(stop, undefined, u), contextWindow: w });
for (const o of overflow) o.result = isContextOverflow(o.message, o.contextWindow);

const tc = (args) => ({ role: "assistant", api: "x", provider: "x", model: "x", usage: usage(0, 0, 0), stopReason: "toolUse", timestamp: 0,
  content: [{ type: "toolCall", id: "c", name: "calc", arguments: args }] });
const extra = [
  tc({ big: 1e21, small: 1e-7, tiny: 0.000001, neg: -5.5, huge: 123456789012345680000, third: 1 / 3, e: 2.5e-10, int: 42 }),
  tc({ s: "quote \" back \\ nl \n tab \t ctl \u0001 emoji 😀 é", nested: [null, true, false, { a: [] }] }),
  { role: "user", content: "😀😀😀", timestamp: 0 },
  { role: "user", content: [{ type: "text", text: "abc" }, { type: "image", data: "AA", mimeType: "image/png" }], timestamp: 0 },
  { role: "toolResult", toolCallId: "c", toolName: "r", isError: false, timestamp: 0,
    content: [{ type: "text", text: "abcde" }, { type: "image", data: "AA", mimeType: "image/png" }] },
  { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "ok" }], api: "x", provider: "x", model: "x",
    usage: usage(0, 0, 0), stopReason: "stop", timestamp: 0 },
  { role: "system", content: "ignored", timestamp: 0 },
].map((message) => ({ message, tokens: estimateTokens(message) }));

const files = {};
const cuts = {};
const serialized = {};
for (const dir of dirs) {
  for (const name of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    const tmp = mkdtempSync(join(tmpdir(), "pi-est-"));
    copyFileSync(join(dir, name), join(tmp, name));
    const sm = SessionManager.open(join(tmp, name), tmp);
    const contextMessages = sm.buildSessionContext().messages;
    files[name] = contextMessages.map(estimateTokens);
    serialized[name] = { conversation: serializeConversation(convertToLlm(contextMessages)) };
    // The prompts repeat the conversation: only for the small files.
    if (sm.getEntries().length <= 300) {
      serialized[name].plain = await prompts(contextMessages, undefined, undefined);
      serialized[name].update = await prompts(contextMessages, "Focus on the tests.", "The previous summary.");
    }
    const branch = sm.getBranch();
    let lastCompaction = -1;
    branch.forEach((e, i) => { if (e.type === "compaction") lastCompaction = i; });
    cuts[name] = [];
    for (const start of new Set([0, lastCompaction + 1])) {
      for (const keep of [0, 1, 5, 20, 50, 200, 1000, 20000, 1e9]) {
        cuts[name].push({ start, keep, result: findCutPoint(branch, start, branch.length, keep) });
      }
    }
  }
}
const json = JSON.stringify({ overflow, estimate: { messages: extra, files }, cuts, serialized }, null, 1) + "\n";
if (check) {
  let old = null;
  try { old = readFileSync(out, "utf8"); } catch {}
  if (old !== json) { console.error(`differs: ${out}`); process.exit(1); }
  console.log(`compaction goldens: ${overflow.length} overflow cases, ${extra.length} messages, ${Object.keys(files).length} files: unchanged`);
} else {
  writeFileSync(out, json);
  console.log(`compaction goldens written: ${overflow.length} overflow cases`);
}
