// Writes the session corpus of the differential test with the real Pi
// (pi-coding-agent 0.73.1): version 3 trees built through Pi's own
// SessionManager (branches, labels, compactions, branch summaries, custom
// messages, session names, model and thinking-level changes), and version
// 1 and 2 files and hostile ones written line by line in the shapes those
// versions had. Run once; the output is committed and never regenerated
// by CI (ids and times are random).
//
//   node generate-corpus.mjs OUT_DIR
import { mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@mariozechner/pi-coding-agent";

const out = process.argv[2];
if (!out) throw new Error("usage: node generate-corpus.mjs OUT_DIR");
mkdirSync(out, { recursive: true });

let clock = 1764979200000;
const ts = () => (clock += 1000);
const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
  cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 } };
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: ts() });
const assistant = (text, model = "claude-sonnet-4-5", provider = "anthropic") => ({
  role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider, model,
  usage, stopReason: "stop", timestamp: ts() });
const callRead = (id, path) => ({
  role: "assistant", content: [{ type: "text", text: "Reading." },
    { type: "toolCall", id, name: "read", arguments: { path } }],
  api: "openai-completions", provider: "openai", model: "gpt-5.1", usage, stopReason: "toolUse", timestamp: ts() });
const result = (id, text) => ({ role: "toolResult", toolCallId: id, toolName: "read",
  content: [{ type: "text", text }], isError: false, timestamp: ts() });
const bash = (extra) => ({ role: "bashExecution", command: "ls -la", output: "a\nb", exitCode: 0,
  cancelled: false, truncated: false, timestamp: ts(), ...extra });

function managed(name, build) {
  const dir = mkdtempSync(join(tmpdir(), "pi-corpus-"));
  const sm = SessionManager.create("/work/project", dir);
  build(sm);
  const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`${name}: ${files.length} files written`);
  renameSync(join(dir, files[0]), join(out, `${name}.jsonl`));
}

managed("v3-linear", (sm) => {
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  sm.appendThinkingLevelChange("medium");
  sm.appendMessage(user("What is in README.md?"));
  sm.appendMessage(callRead("call_1", "README.md"));
  sm.appendMessage(result("call_1", "# agentstream"));
  sm.appendMessage(assistant("It is the project's readme."));
  sm.appendSessionInfo("  readme question  ");
});

managed("v3-branches-labels", (sm) => {
  const u1 = sm.appendMessage(user("Plan a refactor"));
  const a1 = sm.appendMessage(assistant("Plan A"));
  sm.appendMessage(user("Go with A"));
  sm.appendMessage(assistant("Done A", "gpt-5.1", "openai"));
  sm.appendLabelChange(a1, "checkpoint");
  sm.branch(a1);
  sm.appendThinkingLevelChange("high");
  sm.appendMessage(user("Actually, B"));
  sm.appendMessage(assistant("Done B"));
  sm.appendLabelChange(u1, "start");
  sm.appendLabelChange(u1, undefined);
  sm.branch(u1);
  sm.appendMessage(assistant("Third way"));
  sm.appendCustomEntry("my-ext", { state: [1, 2, 3] });
  sm.appendSessionInfo("branchy");
});

managed("v3-branch-summary", (sm) => {
  const u1 = sm.appendMessage(user("Try approach X"));
  sm.appendMessage(assistant("X failed"));
  sm.appendMessage(user("And now?"));
  sm.appendMessage(assistant("Still failing"));
  sm.branchWithSummary(u1, "Approach X failed twice: the build breaks.", { readFiles: ["a.rs"] }, false);
  sm.appendMessage(user("Try Y"));
  sm.appendMessage(assistant("Y works"));
  sm.branchWithSummary(null, "Everything was abandoned.");
  sm.appendMessage(user("From scratch"));
  sm.appendMessage(assistant("ok"));
  sm.branchWithSummary(u1, "");
  sm.appendMessage(assistant("after an empty summary"));
});

managed("v3-compaction", (sm) => {
  sm.appendModelChange("openai", "gpt-5.1");
  sm.appendMessage(user("one"));
  sm.appendMessage(assistant("reply one"));
  const keep = sm.appendMessage(user("two"));
  sm.appendMessage(callRead("call_2", "src/lib.rs"));
  sm.appendMessage(result("call_2", "pub mod x;"));
  sm.appendMessage(assistant("reply two"));
  const c1 = sm.appendCompaction("User asked one and two.", keep, 12345,
    { readFiles: ["src/lib.rs"], modifiedFiles: [] });
  sm.appendMessage(user("three"));
  sm.appendMessage(assistant("reply three"));
  sm.appendCustomMessageEntry("reminder", "Remember the tests.", true, { n: 1 });
  sm.appendMessage(assistant("reply four"));
  const keep2 = sm.appendMessage(user("five"));
  sm.appendMessage(assistant("reply five"));
  sm.appendCompaction("Second summary.", keep2, 999, undefined, true);
  sm.appendMessage(user("six"));
  sm.appendMessage(assistant("reply six"));
  // A branch from before the second compaction: only the first applies.
  sm.branch(c1);
  sm.appendCustomMessageEntry("blocks", [{ type: "text", text: "block text" }], false);
  sm.appendMessage(assistant("on the side"));
  // A compaction whose first kept entry is not on the path: nothing kept.
  sm.appendCompaction("Nothing kept.", "deadbeef", 5);
  sm.appendMessage(user("seven"));
  sm.appendMessage(assistant("reply seven"));
});

managed("v3-app-roles", (sm) => {
  sm.appendMessage(user("run ls"));
  sm.appendMessage(bash({}));
  sm.appendMessage(bash({ output: "", exitCode: 2 }));
  sm.appendMessage(bash({ cancelled: true, exitCode: 130 }));
  sm.appendMessage(bash({ truncated: true, fullOutputPath: "/tmp/out.txt", exitCode: undefined }));
  sm.appendMessage(bash({ excludeFromContext: true }));
  sm.appendMessage({ role: "custom", customType: "note", content: "a note", display: true, timestamp: ts() });
  sm.appendMessage({ role: "custom", customType: "img", display: false, timestamp: ts(),
    content: [{ type: "text", text: "see" }, { type: "image", data: "AAAA", mimeType: "image/png" }] });
  sm.appendMessage({ role: "branchSummary", summary: "old branch", fromId: "abc", timestamp: ts() });
  sm.appendMessage({ role: "compactionSummary", summary: "old summary", tokensBefore: 7, timestamp: ts() });
  sm.appendMessage({ role: "system", content: "an unknown role", timestamp: ts() });
  sm.appendMessage(assistant("done"));
});

// Files written line by line.
const line = (o) => JSON.stringify(o);
const iso = () => new Date(ts()).toISOString();
function raw(name, lines) {
  writeFileSync(join(out, `${name}.jsonl`), lines.map((l) => (typeof l === "string" ? l : line(l))).join("\n") + "\n");
}

raw("v1-compaction", [
  { type: "session", id: "11111111-1111-4111-8111-111111111111", timestamp: iso(), cwd: "/old", provider: "anthropic", modelId: "claude-sonnet-4", thinkingLevel: "off" },
  { type: "message", timestamp: iso(), message: user("first") },
  { type: "message", timestamp: iso(), message: assistant("first reply") },
  { type: "thinking_level_change", timestamp: iso(), thinkingLevel: "low" },
  { type: "message", timestamp: iso(), message: user("second") },
  { type: "message", timestamp: iso(), message: assistant("second reply") },
  { type: "compaction", timestamp: iso(), summary: "v1 summary", firstKeptEntryIndex: 4, tokensBefore: 100 },
  { type: "message", timestamp: iso(), message: user("third") },
  { type: "message", timestamp: iso(), message: assistant("third reply", "gpt-4o", "openai") },
]);

raw("v1-compaction-forward-index", [
  { type: "session", id: "22222222-2222-4222-8222-222222222222", timestamp: iso(), cwd: "/old" },
  { type: "message", timestamp: iso(), message: user("a") },
  { type: "compaction", timestamp: iso(), summary: "points forward", firstKeptEntryIndex: 3, tokensBefore: 1 },
  { type: "message", timestamp: iso(), message: user("b") },
  { type: "compaction", timestamp: iso(), summary: "points at the header", firstKeptEntryIndex: 0, tokensBefore: 2 },
  { type: "message", timestamp: iso(), message: assistant("c") },
]);

raw("v2-hook-message", [
  { type: "session", version: 2, id: "33333333-3333-4333-8333-333333333333", timestamp: iso(), cwd: "/v2" },
  { type: "message", id: "a0000001", parentId: null, timestamp: iso(), message: user("hello") },
  { type: "message", id: "a0000002", parentId: "a0000001", timestamp: iso(), message: { role: "hookMessage", customType: "hook", content: "from a hook", display: true, timestamp: ts() } },
  { type: "message", id: "a0000003", parentId: "a0000002", timestamp: iso(), message: assistant("hi") },
  { type: "message", id: "a0000004", parentId: "a0000001", timestamp: iso(), message: assistant("other") },
]);

raw("v3-hostile", [
  { type: "session", version: 3, id: "44444444-4444-4444-8444-444444444444", timestamp: iso(), cwd: "/h" },
  "",
  "{not json",
  { type: "message", id: "b0000001", parentId: null, timestamp: iso(), message: user("root") },
  { type: "future_entry", id: "b0000002", parentId: "b0000001", timestamp: iso(), payload: { x: [1, 2.5, "y"] } },
  { type: "message", id: "b0000003", parentId: "b0000002", timestamp: iso(), message: assistant("after unknown") },
  { type: "message", id: "b0000004", parentId: "missing!", timestamp: iso(), message: user("orphan") },
  { type: "message", id: "b0000005", parentId: "b0000003", timestamp: iso(), message: user("first copy") },
  { type: "message", id: "b0000005", parentId: "b0000003", timestamp: iso(), message: user("duplicate id, second copy") },
  { type: "message", id: "b0000006", parentId: "b0000005", timestamp: iso(), message: assistant("after the duplicate") },
  { type: "thinking_level_change", id: "b0000007", parentId: "b0000006", timestamp: "not a date", thinkingLevel: "xhigh" },
  { type: "custom_message", id: "b0000008", parentId: "b0000007", timestamp: "2025-02-30T00:00:00.000Z", customType: "bad-date", content: "x", display: true },
  { type: "branch_summary", id: "b0000009", parentId: "b0000008", timestamp: "2025-06-01", fromId: "root", summary: "date only" },
  { type: "message", id: "b000000a", parentId: "", timestamp: iso(), message: user("empty parentId is a root") },
  { type: "message", id: "b000000b", parentId: "b000000a", timestamp: iso(), message: assistant("extra fields", "m", "p"), extraField: { kept: true } },
]);

raw("v3-empty-leaf-before-first", [
  { type: "session", version: 3, id: "55555555-5555-4555-8555-555555555555", timestamp: iso(), cwd: "/e" },
]);
