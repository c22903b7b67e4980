#!/usr/bin/env bash
# The provider layer against the real Pi: every recorded stream of the wire
# crate's fixture folders (openai-sse, anthropic-sse, openai-responses-sse,
# google-sse, azure-responses-sse, mistral-sse) is served on 127.0.0.1 to
# pi-ai 0.73.1's provider for its protocol (openai-completions,
# anthropic-messages, openai-responses, google-generative-ai,
# azure-openai-responses, mistral-conversations) and decoded by `agentstream decode --api ... --jsonl`;
# the final messages and event sequences are compared field by field.
#
# Usage: .ci/pi-ai-oracle.sh
#   Prints the per-fixture report and the table fixture → equal / deliberate
#   difference; exits 1 on any difference not listed, with its reason, in
#   oracle/pi-ai/deliberate.json (and on a listed entry no longer needed).
#
# The oracle (oracle/pi-ai/) is copied under target/ and npm-installed there
# from its lockfile, so the repository gets no node_modules.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command -v node >/dev/null || { echo "error: node (20+) is needed" >&2; exit 2; }

cargo build -p agentstream-cli --manifest-path "$root/Cargo.toml"
binary="$root/target/debug/agentstream"

work="$root/target/pi-ai-oracle"
mkdir -p "$work"
cp "$root/oracle/pi-ai/package.json" "$root/oracle/pi-ai/package-lock.json" \
    "$root/oracle/pi-ai/compare.mjs" "$root/oracle/pi-ai/project-event.mjs" "$work/"
cd "$work"
if [[ ! -d node_modules/@mariozechner/pi-ai ]] ||
    ! cmp -s package-lock.json node_modules/.package-lock.json.copy; then
    npm ci --no-audit --no-fund --ignore-scripts
    cp package-lock.json node_modules/.package-lock.json.copy
fi
version=$(node -p 'require("./node_modules/@mariozechner/pi-ai/package.json").version')
echo "pi-ai $version"
rm -rf out
FIXTURES_DIR="$root/crates/agentstream-wire/tests/fixtures" AGENTSTREAM="$binary" OUT_DIR="$work/out" \
    node compare.mjs --deliberate "$root/oracle/pi-ai/deliberate.json"
