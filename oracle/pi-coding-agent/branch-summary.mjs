// Prints what the real Pi (pi-coding-agent 0.73.1) does to summarize a
// branch left behind in tree navigation: collectEntriesForBranchSummary
// between leaves and other entries of each session file in the given
// directories (files of at most 300 entries), and for each pair
// generateBranchSummary's request (system prompt, prompt, maxTokens,
// reasoning, read from a stand-in provider) and result at several token
// budgets. Entries are named by their index in getEntries() (the header
// left out), since a migrated file's ids are drawn at random.
//
//   node branch-summary.mjs [--check] OUT.json DIR...
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectEntriesForBranchSummary, generateBranchSummary, SessionManager } from "@mariozechner/pi-coding-agent";
import { standIn } from "./stand-in.mjs";

// A provider that answers at once and keeps the request and its options.
const seen = standIn("oracle-branch");
const model = (contextWindow) => ({ id: "oracle", name: "oracle", api: "oracle-branch", provider: "oracle", baseUrl: "",
  reasoning: true, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow, maxTokens: 100 });

let args = process.argv.slice(2);
const check = args[0] === "--check";
if (check) args = args.slice(1);
const [out, ...dirs] = args;

// (context window, reserve tokens, instructions, replace): no limit (Pi's
// 128,000 default window), small budgets, and both kinds of instructions.
const budgets = [
  [0, 16384, undefined, false],
  [1060, 1000, undefined, false],
  [1400, 1000, "Focus on the files.", false],
  [1000000, 1000, "Only list the files.", true],
];

const files = {};
for (const dir of dirs) {
  for (const name of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    const tmp = mkdtempSync(join(tmpdir(), "pi-branch-"));
    copyFileSync(join(dir, name), join(tmp, name));
    const sm = SessionManager.open(join(tmp, name), tmp);
    const entries = sm.getEntries();
    if (entries.length === 0 || entries.length > 300) continue;
    const index = new Map(entries.map((e, i) => [e.id, i]));
    const parents = new Set(entries.map((e) => e.parentId));
    const leaves = entries.filter((e) => !parents.has(e.id)).map((e) => e.id);
    const cases = [];
    for (const from of leaves.slice(0, 3)) {
      const path = sm.getBranch(from);
      const targets = new Set([...leaves.filter((l) => l !== from), entries[0].id, path[Math.floor(path.length / 2)].id]);
      for (const to of [...targets].slice(0, 3)) {
        const { entries: branch, commonAncestorId } = collectEntriesForBranchSummary(sm, from, to);
        const c = {
          from: index.get(from),
          to: index.get(to),
          entries: branch.map((e) => index.get(e.id)),
          ancestor: commonAncestorId === null ? null : index.get(commonAncestorId),
          summaries: [],
        };
        for (const [window, reserveTokens, customInstructions, replaceInstructions] of budgets) {
          seen.request = null;
          const result = await generateBranchSummary(branch, {
            model: model(window), apiKey: "key", signal: new AbortController().signal,
            customInstructions, replaceInstructions, reserveTokens,
          });
          const { request } = seen;
          c.summaries.push({
            window, reserveTokens, customInstructions: customInstructions ?? null, replaceInstructions,
            request: request && {
              system: request.context.systemPrompt,
              prompt: request.context.messages[0].content[0].text,
              maxTokens: request.options?.maxTokens ?? null,
              reasoning: request.options?.reasoning ?? null,
            },
            result,
          });
        }
        cases.push(c);
      }
    }
    files[name] = cases;
  }
}
const json = JSON.stringify(files, null, 1) + "\n";
if (check) {
  let old = null;
  try { old = readFileSync(out, "utf8"); } catch {}
  if (old !== json) { console.error(`differs: ${out}`); process.exit(1); }
  console.log(`branch summary goldens: ${Object.keys(files).length} files: unchanged`);
} else {
  writeFileSync(out, json);
  console.log(`branch summary goldens written: ${Object.keys(files).length} files`);
}
