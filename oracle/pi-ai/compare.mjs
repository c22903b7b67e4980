#!/usr/bin/env node
// Source: the project's shared oracle (shared/oracle/pi-ai/compare.mjs), copied here and
// extended to OpenAI Responses and Google Gemini, and to a list of deliberate differences.
//
// Independent oracle: replay recorded streaming bodies through the real @mariozechner/pi-ai
// via a local 127.0.0.1 HTTP server, and compare the final AssistantMessage + event sequence
// with `agentstream decode [--api API] --jsonl`. Four wire protocols:
//   openai:    pi-ai's openai-completions provider, served at POST /v1/chat/completions
//   anthropic: pi-ai's anthropic-messages provider, served at POST /v1/messages
//   responses: pi-ai's openai-responses provider, served at POST /v1/responses
//   azure:     pi-ai's azure-openai-responses provider, served at
//              POST /openai/v1/responses?api-version=v1
//   mistral:   pi-ai's mistral-conversations provider, served at POST /v1/chat/completions
//   google:    pi-ai's google-generative-ai provider, served at
//              POST /v1beta/models/{model}:streamGenerateContent
//
// Usage (from a folder where `npm install @mariozechner/pi-ai@0.73.1` was run):
//   AGENTSTREAM=PATH/TO/agentstream node compare.mjs [--api openai|anthropic|responses|google]
//       [--deliberate FILE.json] [FIXTURE ...]
//   Without --api, each fixture's protocol is detected from its folder name (a folder whose
//   name contains "responses" is OpenAI Responses, "google" Gemini, "anthropic" Anthropic
//   Messages; anything else is OpenAI-compatible).
//   default fixtures: the folders openai-sse/, anthropic-sse/, openai-responses-sse/ and
//   google-sse/ of FIXTURES_DIR (default: the wire crate's tests/fixtures beside this
//   script in the repository); with --api, only that protocol's folder.
//   --deliberate: a JSON object, fixture file name → {"reason": "...", "fields": [...]}: the
//   fields of that fixture that differ on purpose (a field ending in `*` is a prefix). A fixture is then "equal", a "deliberate
//   difference" (every differing field is listed) or DIFFERENT; a listed fixture that has
//   become equal is reported too (its entry is stale). The exit status is 1 unless every
//   fixture is equal or a deliberate difference, and every entry is still needed.
// Env: PI_PROVIDER, PI_MODEL_ID (default "recorded", matching agentstream decode), OUT_DIR,
//   GOLDEN_DIR (when set, pi-ai's events and final message of each fixture are also written to
//   GOLDEN_DIR/<fixture>.json, the goldens the wire crate's tests/pi_streams.rs reads)
// Outputs under OUT_DIR (default ./out): <fixture>.pi.json, <fixture>.agentstream.json,
//          <fixture>.compare.json, report.md (also printed to stdout), summary.md (the table
//          fixture → equal / deliberate difference, also printed last)

import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { stream } from "@mariozechner/pi-ai";
import { projectEvent } from "./project-event.mjs";

const FIXTURES =
  process.env.FIXTURES_DIR ||
  path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..", "crates", "agentstream-wire", "tests", "fixtures");
const OUT = process.env.OUT_DIR || path.resolve("out");
// Pi model identity; agentstream decode always reports provider/model "recorded".
const PI_PROVIDER = process.env.PI_PROVIDER || "recorded";
const PI_MODEL_ID = process.env.PI_MODEL_ID || "recorded";
const AGENTSTREAM = process.env.AGENTSTREAM || "agentstream";
const DIRS = {
  openai: [path.join(FIXTURES, "openai-sse")],
  anthropic: [path.join(FIXTURES, "anthropic-sse")],
  responses: [path.join(FIXTURES, "openai-responses-sse")],
  google: [path.join(FIXTURES, "google-sse")],
  azure: [path.join(FIXTURES, "azure-responses-sse")],
  mistral: [path.join(FIXTURES, "mistral-sse")],
};
const APIS = Object.keys(DIRS);

// Command line: optional `--api API` (or `--api=...`), `--deliberate FILE`, then fixture paths.
let API_FLAG;
let DELIBERATE_FILE;
const ARGS = [];
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === "--api") API_FLAG = process.argv[++i];
  else if (a.startsWith("--api=")) API_FLAG = a.slice("--api=".length);
  else if (a === "--deliberate") DELIBERATE_FILE = process.argv[++i];
  else ARGS.push(a);
}
if (API_FLAG !== undefined && !APIS.includes(API_FLAG)) {
  console.error(`--api must be one of ${APIS.join(", ")}, got ${JSON.stringify(API_FLAG)}`);
  process.exit(2);
}
const DELIBERATE = DELIBERATE_FILE ? JSON.parse(fs.readFileSync(DELIBERATE_FILE, "utf8")) : {};

// The protocol of a fixture: --api if given, else its folder's name.
function apiOf(file) {
  if (API_FLAG) return API_FLAG;
  const folder = path.basename(path.dirname(path.resolve(file)));
  if (/azure/i.test(folder)) return "azure";
  if (/mistral/i.test(folder)) return "mistral";
  if (/responses/i.test(folder)) return "responses";
  if (/google|gemini/i.test(folder)) return "google";
  return /anthropic/i.test(folder) ? "anthropic" : "openai";
}

// Hard watchdog: the whole run stops by itself even if a socket hangs.
setTimeout(() => {
  console.error("watchdog: run exceeded 240 s, exiting");
  process.exit(3);
}, 240_000).unref();

fs.mkdirSync(OUT, { recursive: true });

function listFixtures() {
  const files = [];
  const dirs = API_FLAG ? DIRS[API_FLAG] : APIS.flatMap((api) => DIRS[api]);
  for (const d of dirs) {
    if (!fs.existsSync(d)) continue;
    for (const f of fs.readdirSync(d).sort()) {
      if (f.endsWith(".sse") || f.endsWith(".chunks.jsonl")) files.push(path.join(d, f));
    }
  }
  return files;
}

function isChunks(file) {
  return file.endsWith(".chunks.jsonl");
}

// Body served to Pi. .sse: the raw bytes, verbatim. .chunks.jsonl, OpenAI: each non-blank line
// wrapped as `data: <line>\n\n`, then `data: [DONE]\n\n`. .chunks.jsonl, Anthropic and
// Responses: each non-blank line wrapped as `event: <its type>\ndata: <line>\n\n` (the
// payload's own `type` names the event, as on the real wire; no [DONE]). .chunks.jsonl,
// Google: each non-blank line as `data: <line>\n\n` (no [DONE]).
function sseBody(file, api) {
  const raw = fs.readFileSync(file);
  if (!isChunks(file)) return raw;
  const lines = raw.toString("utf8").split(/\r?\n/).filter((l) => l.trim() !== "");
  if (api === "anthropic" || api === "responses" || api === "azure") {
    const out = lines.map((l) => {
      let type;
      try {
        type = JSON.parse(l).type;
      } catch {}
      if (typeof type !== "string" || type === "") throw new Error(`${file}: line without a string "type": ${l}`);
      return `event: ${type}\ndata: ${l}\n\n`;
    });
    return Buffer.from(out.join(""), "utf8");
  }
  const done = api === "google" ? "" : "data: [DONE]\n\n";
  return Buffer.from(lines.map((l) => `data: ${l}\n\n`).join("") + done, "utf8");
}

// Where each protocol's provider posts, and the Pi model object for it. The Anthropic SDK
// appends /v1/messages to baseURL (pi-ai's built-in anthropic models use
// baseUrl "https://api.anthropic.com"); the OpenAI SDK appends /chat/completions or
// /responses; pi-ai gives the Google SDK its baseUrl with the version included
// (".../v1beta", as its built-in Gemini models) and the SDK appends
// /models/{model}:streamGenerateContent?alt=sse.
const ENDPOINT = {
  openai: (url) => url === "/v1/chat/completions",
  anthropic: (url) => url === "/v1/messages",
  responses: (url) => url === "/v1/responses",
  // The AzureOpenAI SDK: {base}/responses?api-version=v1 (base …/openai/v1).
  azure: (url) => url === "/openai/v1/responses?api-version=v1",
  // The Mistral SDK appends /v1/chat/completions to its server URL.
  mistral: (url) => url === "/v1/chat/completions",
  google: (url) => /^\/v1beta\/models\/[^/:?]+:streamGenerateContent(\?.*)?$/.test(url),
};
function piModel(api, port) {
  const common = {
    id: PI_MODEL_ID,
    name: PI_MODEL_ID,
    provider: PI_PROVIDER,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    maxTokens: 4096,
  };
  if (api === "anthropic")
    return { ...common, api: "anthropic-messages", baseUrl: `http://127.0.0.1:${port}`, contextWindow: 200000 };
  if (api === "responses")
    return { ...common, api: "openai-responses", baseUrl: `http://127.0.0.1:${port}/v1`, contextWindow: 400000 };
  if (api === "azure")
    return { ...common, api: "azure-openai-responses", baseUrl: `http://127.0.0.1:${port}/openai/v1`, contextWindow: 400000 };
  if (api === "mistral")
    return { ...common, api: "mistral-conversations", baseUrl: `http://127.0.0.1:${port}`, contextWindow: 128000 };
  if (api === "google")
    return { ...common, api: "google-generative-ai", baseUrl: `http://127.0.0.1:${port}/v1beta`, contextWindow: 1048576 };
  return { ...common, api: "openai-completions", baseUrl: `http://127.0.0.1:${port}/v1`, contextWindow: 128000 };
}


async function runPi(file, api) {
  const body = sseBody(file, api);
  const requests = [];
  const server = http.createServer((req, res) => {
    let reqBody = "";
    req.on("data", (c) => (reqBody += c));
    req.on("end", () => {
      let parsed = reqBody;
      try {
        parsed = JSON.parse(reqBody);
      } catch {}
      requests.push({ method: req.method, url: req.url, body: parsed });
      if (req.method === "POST" && ENDPOINT[api](req.url)) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(body);
      } else {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `unexpected ${req.method} ${req.url}` } }));
      }
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const port = server.address().port;
  const model = piModel(api, port);
  const context = { messages: [{ role: "user", content: "replay", timestamp: 0 }] };
  const events = [];
  let final;
  let thrown;
  try {
    const s = stream(model, context, { apiKey: "test-key", maxRetries: 0, timeoutMs: 15000 });
    for await (const e of s) events.push(projectEvent(e));
    final = await s.result();
  } catch (err) {
    thrown = String(err && err.stack ? err.stack : err);
  } finally {
    server.closeAllConnections?.();
    await new Promise((r) => server.close(r));
  }
  return { requests, events, final: final && JSON.parse(JSON.stringify(final)), thrown };
}

function runAgentstream(file, api) {
  const args = ["decode", file, "--jsonl"];
  if (isChunks(file)) args.push("--chunks");
  if (api !== "openai") args.push("--api", api);
  const r = spawnSync(AGENTSTREAM, args, { encoding: "utf8", timeout: 30000 });
  const events = [];
  let final;
  const parseErrors = [];
  for (const line of (r.stdout || "").split("\n")) {
    if (!line.trim()) continue;
    let e;
    try {
      e = JSON.parse(line);
    } catch (err) {
      parseErrors.push(line);
      continue;
    }
    events.push(projectEvent(e));
    if (e.type === "done") final = e.message;
    if (e.type === "error") final = e.error;
  }
  return {
    command: [AGENTSTREAM, ...args].join(" "),
    status: r.status,
    stderr: r.stderr,
    parseErrors,
    events,
    final,
  };
}

// Run-length form of an event type list: "text_delta×30".
function rle(types) {
  const o = [];
  for (const t of types) {
    const l = o[o.length - 1];
    if (l && l[0] === t) l[1]++;
    else o.push([t, 1]);
  }
  return o.map(([t, c]) => (c > 1 ? `${t}×${c}` : t)).join(" ");
}

const J = (v) => (v === undefined ? "—(absent)" : JSON.stringify(v));

function compareFinal(pi, as) {
  const rows = [];
  const add = (field, a, b, eq) =>
    rows.push({ field, pi: J(a), agentstream: J(b), same: eq ?? J(a) === J(b) });
  const pf = pi.final || {};
  const af = as.final || {};
  const pLast = pi.events[pi.events.length - 1];
  const aLast = as.events[as.events.length - 1];
  add("final event type", pLast?.type, aLast?.type);
  add("final event reason", pLast?.reason, aLast?.reason);
  const pc = pf.content || [];
  const ac = af.content || [];
  add("content.length", pc.length, ac.length);
  for (let i = 0; i < Math.max(pc.length, ac.length); i++) {
    const p = pc[i] || {};
    const a = ac[i] || {};
    add(`content[${i}].type`, p.type, a.type);
    const keys = [...new Set([...Object.keys(p), ...Object.keys(a)])].filter((k) => k !== "type");
    for (const k of keys) add(`content[${i}].${k}`, p[k], a[k]);
  }
  add("stopReason", pf.stopReason, af.stopReason);
  add("errorMessage", pf.errorMessage, af.errorMessage);
  for (const k of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"])
    add(`usage.${k}`, pf.usage?.[k], af.usage?.[k]);
  add("usage.cost", pf.usage?.cost, af.usage?.cost);
  const uk = (u) => Object.keys(u || {}).sort();
  add("usage keys", uk(pf.usage), uk(af.usage));
  add("responseId", pf.responseId, af.responseId);
  add("responseModel", pf.responseModel, af.responseModel);
  add("diagnostics", pf.diagnostics, af.diagnostics);
  const ignored = new Set(["timestamp"]);
  add(
    "message keys (excl. timestamp)",
    Object.keys(pf).filter((k) => !ignored.has(k)).sort(),
    Object.keys(af).filter((k) => !ignored.has(k)).sort(),
  );
  const pt = pi.events.map((e) => e.type);
  const at = as.events.map((e) => e.type);
  add("event count", pt.length, at.length);
  rows.push({
    field: "event type sequence",
    pi: rle(pt),
    agentstream: rle(at),
    same: pt.join(" ") === at.join(" "),
  });
  // Full event payloads (type, contentIndex, delta, content, toolCall, reason), order-sensitive.
  add("event payloads (all)", pi.events, as.events);
  // Order-insensitive view of the same: multiset of events by type+contentIndex+payload.
  const sortKey = (evs) => evs.map((e) => JSON.stringify(e)).sort();
  add("event payloads (as multiset)", sortKey(pi.events), sortKey(as.events));
  return rows;
}

function mdEscape(s) {
  return String(s).replace(/\|/g, "\\|").replace(/\n/g, "\\n");
}

function truncate(s, n = 400) {
  s = String(s);
  return s.length > n ? s.slice(0, n) + `… (${s.length} chars)` : s;
}

// Whether `field` is one of the entry's fields (a field ending in `*` names every field that
// starts with what comes before it: `content[*` is every content field).
function isListed(entry, field) {
  return (entry.fields || []).some((f) => (f.endsWith("*") ? field.startsWith(f.slice(0, -1)) : f === field));
}

const fixtures = ARGS.length > 0 ? ARGS : listFixtures();
const summary = [];
let report = `# pi-ai 0.73.1 vs agentstream decode\n\nagentstream: ${AGENTSTREAM}; Pi model: provider=${PI_PROVIDER} id=${PI_MODEL_ID}; --api: ${API_FLAG ?? "(by folder)"}\n\n`;
let allSame = true;
for (const file of fixtures) {
  const name = path.basename(file);
  const api = apiOf(file);
  const pi = await runPi(file, api);
  const as = runAgentstream(file, api);
  if (process.env.GOLDEN_DIR) {
    // pi-ai's own output for the fixture, for the wire crate's tests: its events and final
    // message (the timestamp, Date.now(), left out).
    const final = pi.final && { ...pi.final };
    if (final) delete final.timestamp;
    const golden = { source: `pi-ai 0.73.1, ${piModel(api, 0).api}`, fixture: name, events: pi.events, final, thrown: pi.thrown };
    fs.mkdirSync(process.env.GOLDEN_DIR, { recursive: true });
    fs.writeFileSync(path.join(process.env.GOLDEN_DIR, `${name}.json`), JSON.stringify(golden, null, 1) + "\n");
  }
  fs.writeFileSync(
    path.join(OUT, `${name}.pi.json`),
    JSON.stringify(
      {
        fixture: file,
        api,
        requests: pi.requests,
        eventTypes: pi.events.map((e) => e.type),
        events: pi.events,
        final: pi.final,
        thrown: pi.thrown,
      },
      null,
      2,
    ),
  );
  fs.writeFileSync(
    path.join(OUT, `${name}.agentstream.json`),
    JSON.stringify(
      {
        fixture: file,
        api,
        command: as.command,
        exitStatus: as.status,
        stderr: as.stderr,
        parseErrors: as.parseErrors,
        eventTypes: as.events.map((e) => e.type),
        events: as.events,
        final: as.final,
      },
      null,
      2,
    ),
  );
  const rows = compareFinal(pi, as);
  fs.writeFileSync(path.join(OUT, `${name}.compare.json`), JSON.stringify(rows, null, 2));
  const diffs = rows.filter((r) => !r.same);
  const listed = DELIBERATE[name];
  let verdict;
  if (diffs.length === 0) {
    verdict = listed ? `equal, but listed as deliberate (remove its entry): ${listed.reason}` : "equal";
    if (listed) allSame = false;
  } else if (listed && diffs.every((r) => isListed(listed, r.field))) {
    const fields = diffs.length > 8 ? `${diffs.length} fields` : diffs.map((r) => r.field).join(", ");
    verdict = `deliberate difference (${fields}): ${listed.reason}`;
  } else {
    const unlisted = diffs.filter((r) => !listed || !isListed(listed, r.field));
    verdict = `**DIFFERENT** (not listed: ${unlisted.map((r) => r.field).join(", ")})`;
    allSame = false;
  }
  summary.push(`| ${name} | ${api} | ${mdEscape(verdict)} |`);
  report += `## ${name}\n\nsource: ${file} (api: ${api})\n\n`;
  report += `Pi request: ${pi.requests.map((r) => `${r.method} ${r.url}`).join(", ") || "(none)"}`;
  report += pi.thrown ? `; Pi threw: ${mdEscape(truncate(pi.thrown))}` : "";
  report += `; agentstream exit ${as.status}${as.stderr ? `, stderr: ${mdEscape(truncate(as.stderr))}` : ""}\n\n`;
  report += `| field | Pi | agentstream | same? |\n|---|---|---|---|\n`;
  for (const r of rows) {
    const big = r.field.startsWith("event payloads");
    const pv = big && r.same ? "(equal)" : truncate(r.pi, big ? 200 : 400);
    const av = big && r.same ? "(equal)" : truncate(r.agentstream, big ? 200 : 400);
    report += `| ${mdEscape(r.field)} | ${mdEscape(pv)} | ${mdEscape(av)} | ${r.same ? "yes" : "**NO**"} |\n`;
  }
  report += `\n`;
}
fs.writeFileSync(path.join(OUT, "report.md"), report);
process.stdout.write(report);
const table = `# fixture → equal / deliberate difference\n\n| fixture | api | verdict |\n|---|---|---|\n${summary.join("\n")}\n`;
fs.writeFileSync(path.join(OUT, "summary.md"), table);
process.stdout.write(table);
process.exitCode = allSame ? 0 : 1;
