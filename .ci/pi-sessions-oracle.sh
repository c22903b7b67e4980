#!/usr/bin/env bash
# The session differential test's other half: recompute, with the real Pi
# (pi-coding-agent 0.73.1 from npm), what buildSessionContext, convertToLlm
# and getTree give for every session file under
# crates/agentstream/tests/fixtures/pi-sessions/{corpus,real}, and check
# that the committed FILE.pi.json goldens (which `cargo test -p agentstream
# --test session_oracle` compares our reader against) are exactly Pi's.
#
# Usage: .ci/pi-sessions-oracle.sh [--write]
#   (default) exit 1 if any golden differs from Pi's output;
#   --write: rewrite the goldens from Pi's output (review the diff).
#
# The oracle (oracle/pi-coding-agent/) is installed under target/, never in
# the repository. Without node and npm it prints SKIPPED and exits 0.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=--check
if [[ "${1:-}" == "--write" ]]; then mode=; fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIPPED: Pi session oracle (node and npm are needed)"
    exit 0
fi

work="$root/target/pi-coding-agent-oracle"
mkdir -p "$work"
cp "$root/oracle/pi-coding-agent/package.json" "$root/oracle/pi-coding-agent/package-lock.json" \
    "$root/oracle/pi-coding-agent/contexts.mjs" "$root/oracle/pi-coding-agent/generate-corpus.mjs" "$work/"
cd "$work"
if [[ ! -d node_modules/@mariozechner/pi-coding-agent ]] ||
    ! cmp -s package-lock.json node_modules/.package-lock.json.copy; then
    npm ci --no-audit --no-fund --ignore-scripts
    cp package-lock.json node_modules/.package-lock.json.copy
fi
version=$(node -p 'require("./node_modules/@mariozechner/pi-coding-agent/package.json").version')
echo "pi-coding-agent $version"
fixtures="$root/crates/agentstream/tests/fixtures/pi-sessions"
# shellcheck disable=SC2086
TZ=UTC node contexts.mjs $mode "$fixtures/corpus" "$fixtures/real"
