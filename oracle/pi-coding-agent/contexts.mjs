// Prints what the real Pi (pi-coding-agent 0.73.1) makes of session files:
// for each FILE.jsonl, FILE.pi.json holds the file read and migrated as
// Pi's SessionManager reads it, then buildSessionContext and convertToLlm
// for the default leaf and for every entry (every leaf of the tree, for
// files of more than 300 entries; only the default leaf for version 1
// files, whose migrated ids are random), and the shape of getTree().
//
//   node contexts.mjs [--check] DIR...
//   node contexts.mjs --ours BIN DIR...   (also compares every record with
//       what `BIN session context FILE [--leaf ID] [--llm]` prints)
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { isDeepStrictEqual } from "node:util";
import { buildSessionContext, convertToLlm, SessionManager } from "@mariozechner/pi-coding-agent";

let args = process.argv.slice(2);
const check = args[0] === "--check";
let ours = null;
if (args[0] === "--ours") { ours = args[1]; args = args.slice(2); }
const dirs = check ? args.slice(1) : args;
let differ = 0, files = 0, leaves = 0, oursEqual = 0;

function compareOurs(path, record) {
  for (const llm of [false, true]) {
    const argv = ["session", "context", path];
    if (record.leaf !== null) argv.push("--leaf", record.leaf);
    if (llm) argv.push("--llm");
    const run = spawnSync(ours, argv, { encoding: "utf8", maxBuffer: 1 << 28 });
    const want = llm ? record.llm : record.context;
    let got = null;
    try { got = JSON.parse(run.stdout); } catch {}
    if (run.status === 0 && isDeepStrictEqual(got, JSON.parse(JSON.stringify(want)))) oursEqual++;
    else { differ++; console.error(`ours differs: ${path} leaf ${record.leaf}${llm ? " --llm" : ""} ${run.stderr}`); }
  }
}

function treeShape(sm) {
  // Preorder [depth, id, label] without recursion.
  const rows = [];
  const stack = sm.getTree().slice().reverse().map((n) => [0, n]);
  while (stack.length) {
    const [depth, node] = stack.pop();
    rows.push([depth, node.entry.id, node.label ?? null]);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push([depth + 1, node.children[i]]);
  }
  return rows;
}

for (const dir of dirs) {
  for (const name of readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort()) {
    files++;
    const path = join(dir, name);
    const text = readFileSync(path, "utf8");
    const firstLine = text.split("\n")[0];
    const version = (() => { try { return JSON.parse(firstLine).version ?? 1; } catch { return 1; } })();
    // Pi rewrites a migrated file: open a copy.
    const tmp = mkdtempSync(join(tmpdir(), "pi-ctx-"));
    copyFileSync(path, join(tmp, name));
    const sm = SessionManager.open(join(tmp, name), tmp);
    const entries = sm.getEntries();
    const record = (leaf) => {
      const context = leaf === undefined ? sm.buildSessionContext() : buildSessionContext(entries, leaf);
      leaves++;
      return { leaf: leaf ?? null, context, llm: convertToLlm(context.messages) };
    };
    const contexts = [record(undefined)];
    if (version >= 2) {
      const parents = new Set(entries.map((e) => e.parentId));
      const ids = entries.length > 300 ? entries.filter((e) => !parents.has(e.id)).map((e) => e.id) : entries.map((e) => e.id);
      for (const id of [...new Set(ids)]) contexts.push(record(id));
    }
    if (ours) for (const r of contexts) compareOurs(path, r);
    const result = { file: name, version, entries: entries.length, contexts, tree: version >= 2 ? treeShape(sm) : null };
    const outPath = join(dir, name.replace(/\.jsonl$/, ".pi.json"));
    // Indented for review; a golden that would pass 1 MiB so (the real
    // 1,018-entry session: 2.1 MB) is written without whitespace (1.8 MB).
    const pretty = JSON.stringify(result, null, 1);
    const json = (pretty.length > 1 << 20 ? JSON.stringify(result) : pretty) + "\n";
    if (check) {
      let old = null;
      try { old = readFileSync(outPath, "utf8"); } catch {}
      if (old !== json) { differ++; console.error(`differs: ${outPath}`); }
    } else {
      writeFileSync(outPath, json);
    }
  }
}
console.log(`${files} files, ${leaves} contexts${check ? `, ${differ} differ` : " written"}` +
  (ours ? `, ${oursEqual}/${2 * leaves} of ours (context and --llm) equal` : ""));
if (differ) process.exit(1);
