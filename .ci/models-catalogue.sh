#!/usr/bin/env bash
# The model catalogue (crates/agentstream-models) against pi-ai 0.73.1:
#  1. generate.mjs run on the installed pi-ai's models.generated.js writes
#     exactly the committed src/generated.rs;
#  2. `agentstream models --json` equals pi-ai's getModels(provider) for
#     every provider of getProviders() (as JSON values).
#
# Usage: .ci/models-catalogue.sh
#   Exits 1 on any difference, 2 without node.
# pi-ai comes from the oracle's lockfile, installed under target/ as
# .ci/pi-ai-oracle.sh does.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v node >/dev/null || { echo "error: node (20+) is needed" >&2; exit 2; }
target="${CARGO_TARGET_DIR:-$root/target}"

cargo build -p agentstream-cli --manifest-path "$root/Cargo.toml"
binary="$target/debug/agentstream"

# shellcheck source=pi-ai-install.sh
source "$root/.ci/pi-ai-install.sh"
dist="$work/node_modules/@mariozechner/pi-ai/dist"

fresh="$(mktemp)"
ours="$(mktemp)"
trap 'rm -f "$fresh" "$ours"' EXIT
node "$root/crates/agentstream-models/generate.mjs" "$dist/models.generated.js" "$fresh"
if ! diff -u "$root/crates/agentstream-models/src/generated.rs" "$fresh" | head -40; then :; fi
cmp -s "$root/crates/agentstream-models/src/generated.rs" "$fresh" || {
    echo "FAILED: src/generated.rs differs from what generate.mjs writes from pi-ai (regenerate it)"
    exit 1
}
echo "ok: src/generated.rs is what generate.mjs writes from the installed pi-ai"

"$binary" models --json >"$ours"
DIST="$dist" OURS="$ours" node --input-type=module -e '
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
const { getProviders, getModels } = await import(process.env.DIST + "/models.js");
const ours = JSON.parse(readFileSync(process.env.OURS, "utf8"));
let models = 0, bad = 0;
const theirs = getProviders();
const extra = Object.keys(ours).filter((p) => !theirs.includes(p));
if (extra.length) { console.log("providers pi-ai lacks:", extra); bad++; }
for (const p of theirs) {
    const want = getModels(p), got = ours[p] ?? [];
    models += want.length;
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(want)), got)) {
        bad++;
        want.forEach((m, i) => {
            if (!isDeepStrictEqual(JSON.parse(JSON.stringify(m)), got[i]))
                console.log(`${p}/${m.id}: pi-ai ${JSON.stringify(m)}\n  ours ${JSON.stringify(got[i])}`);
        });
        if (got.length !== want.length) console.log(`${p}: ${got.length} models, pi-ai ${want.length}`);
    }
}
console.log(`${theirs.length} providers, ${models} models; ${bad ? bad + " differ" : "all equal to pi-ai getModels"}`);
process.exit(bad ? 1 : 0);
'
