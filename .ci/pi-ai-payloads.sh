#!/usr/bin/env bash
# The request-body golden file against pi-ai 0.73.1: oracle/pi-ai/payloads.mjs
# captures, offline, the requests pi-ai sends for its matrix (catalogue
# models × cache retentions); they must equal the committed
# oracle/pi-ai/golden/payloads.json, which the Rust test
# crates/agentstream-cli/tests/pi_payloads.rs compares `chat --dry-run` with.
#
# Usage: .ci/pi-ai-payloads.sh [--update]
#   --update writes the golden file instead of comparing.
#   Exits 1 on a difference, 2 without node.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v node >/dev/null || { echo "error: node (20+) is needed" >&2; exit 2; }
target="${CARGO_TARGET_DIR:-$root/target}"
# shellcheck source=pi-ai-install.sh
source "$root/.ci/pi-ai-install.sh" payloads.mjs
golden="$root/oracle/pi-ai/golden/payloads.json"
fresh="$(mktemp)"
trap 'rm -f "$fresh"' EXIT
# The headers naming node's version or the OS are left out of the comparison below.
CONTEXT_FILE="$root/oracle/pi-ai/golden/context.json" node payloads.mjs "$fresh"
if [[ "${1:-}" == "--update" ]]; then
    cp "$fresh" "$golden"
    echo "wrote $golden"
    exit 0
fi
GOLDEN="$golden" FRESH="$fresh" node --input-type=module -e '
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
// Headers naming the runtime (user agents, x-stainless-runtime-version) vary with node.
const strip = (r) => r.map(({ case: c, request: q }) => {
  const headers = Object.fromEntries(Object.entries(q.headers).filter(([k]) =>
    !["user-agent", "x-stainless-runtime-version", "x-stainless-os", "x-stainless-arch", "x-goog-api-client"].includes(k)));
  return { case: c, request: { ...q, headers } };
});
const want = strip(JSON.parse(readFileSync(process.env.GOLDEN, "utf8")));
const got = strip(JSON.parse(readFileSync(process.env.FRESH, "utf8")));
let bad = 0;
want.forEach((w, i) => { if (!isDeepStrictEqual(w, got[i])) { bad++; console.log("differs:", JSON.stringify(w.case)); } });
if (want.length !== got.length) { bad++; console.log(`cases: golden ${want.length}, pi-ai ${got.length}`); }
console.log(`${got.length} requests captured from pi-ai; ${bad ? bad + " differ from" : "all equal to"} the golden file`);
process.exit(bad ? 1 : 0);
'
