// Prints what the real Pi (pi-coding-agent 0.73.1) answers for the parts
// of its agent-session policies that run without a model: prepareCompaction
// on each session file's default branch for several keepRecentTokens
// budgets (the first kept entry's index, the split turn, tokensBefore, the previous
// summary, the counts of messages summarized and the read/modified file
// lists), shouldCompact on a few sizes, and AgentSession's
// _isRetryableError on a list of error texts.
//
//   node policies.mjs [--check] OUT.json DIR...
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager, shouldCompact } from "@mariozechner/pi-coding-agent";
import { computeFileLists, prepareCompaction } from "./node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/index.js";
import { AgentSession } from "./node_modules/@mariozechner/pi-coding-agent/dist/core/agent-session.js";

const args = process.argv.slice(2);
const check = args[0] === "--check";
if (check) args.shift();
const [out, ...dirs] = args;

const prepared = {};
for (const dir of dirs) {
  for (const name of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    const tmp = mkdtempSync(join(tmpdir(), "pi-prep-"));
    copyFileSync(join(dir, name), join(tmp, name));
    const branch = SessionManager.open(join(tmp, name), tmp).getBranch();
    prepared[name] = [0, 1, 50, 1000, 20000].map((keep) => {
      const p = prepareCompaction(branch, { enabled: true, reserveTokens: 16384, keepRecentTokens: keep });
      if (!p) return { keep, result: null };
      const { readFiles, modifiedFiles } = computeFileLists(p.fileOps);
      return {
        keep,
        result: {
          // An index, not the id: a migrated version 1 or 2 file gets new
          // random ids each time Pi opens it.
          firstKeptEntryIndex: branch.findIndex((e) => e.id === p.firstKeptEntryId), isSplitTurn: p.isSplitTurn, tokensBefore: p.tokensBefore,
          previousSummary: p.previousSummary ?? null, messagesToSummarize: p.messagesToSummarize.length,
          turnPrefixMessages: p.turnPrefixMessages.length, readFiles, modifiedFiles,
        },
      };
    });
  }
}

const settings = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 };
const thresholds = [[183616, 200000], [183617, 200000], [0, 0], [1, 0], [10, 20000]].map(([tokens, window]) => ({
  tokens, window, result: shouldCompact(tokens, window, settings),
}));

const texts = [
  "529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
  "Provider returned error", "provider_returned error", "Rate limit exceeded", "ratelimit", "rate--limit",
  "Too Many Requests", "429", "HTTP 500", "502 Bad Gateway", "503", "504 Gateway Timeout", "Service Unavailable",
  "service_unavailable", "server error", "Internal Error", "network error", "Connection error.", "connection refused",
  "connection lost", "WebSocket closed", "websocket error", "other side closed", "fetch failed",
  "upstream connect error or disconnect/reset before headers", "socket hang up", "request ended without sending chunks",
  "http2 request did not get a response", "Request timed out", "time out", "tim out", "timeout", "terminated",
  "retry delay exceeded", "rate\nlimit", "rate\u{1F600}limit", "rate\u00e9limit", "Invalid API key", "401 Unauthorized",
  "prompt is too long: 213462 tokens > 200000 maximum", "context_length_exceeded", "overloaded: prompt is too long", "",
];
const probe = Object.create(AgentSession.prototype);
Object.defineProperty(probe, "model", { value: undefined });
const retryable = texts.map((text) => ({
  text, result: probe._isRetryableError({ role: "assistant", stopReason: "error", errorMessage: text, content: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 } }),
}));

const json = JSON.stringify({ prepared, thresholds, retryable }, null, 1) + "\n";
if (check) {
  let old = null;
  try { old = readFileSync(out, "utf8"); } catch {}
  if (old !== json) { console.error(`differs: ${out}`); process.exit(1); }
  console.log(`policy goldens: ${Object.keys(prepared).length} files, ${retryable.length} error texts: unchanged`);
} else {
  writeFileSync(out, json);
  console.log(`policy goldens written: ${Object.keys(prepared).length} files, ${retryable.length} error texts`);
}
