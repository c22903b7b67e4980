#!/usr/bin/env bash
# The differential test's other half: regenerate the Pi agent transcripts
# with the real Pi (pi-agent-core 0.73.1, from npm) and check that the
# golden files the Rust tests compare against are exactly what Pi produces.
#
# Usage: .ci/pi-agent-oracle.sh [--write]
#   (default) --check: exit 1 if any committed transcript differs from Pi's;
#   --write: rewrite crates/agentstream/tests/golden/pi/ from Pi's output
#            (review the diff; never edit those files by hand).
#
# The oracle (oracle/pi-agent/) is copied under target/ and npm-installed
# there from its lockfile, so the repository gets no node_modules.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode=--check
if [[ "${1:-}" == "--write" ]]; then mode=; fi
command -v node >/dev/null || { echo "error: node (20+) is needed" >&2; exit 2; }

work="$root/target/pi-agent-oracle"
mkdir -p "$work"
cp "$root/oracle/pi-agent/package.json" "$root/oracle/pi-agent/package-lock.json" \
    "$root/oracle/pi-agent/transcripts.mjs" "$work/"
cd "$work"
if [[ ! -d node_modules/@mariozechner/pi-agent-core ]] ||
    ! cmp -s package-lock.json node_modules/.package-lock.json.copy; then
    npm ci --no-audit --no-fund --ignore-scripts
    cp package-lock.json node_modules/.package-lock.json.copy
fi
version=$(node -p 'require("./node_modules/@mariozechner/pi-agent-core/package.json").version')
echo "pi-agent-core $version"
# shellcheck disable=SC2086
node transcripts.mjs $mode --out "$root/crates/agentstream/tests/golden/pi"
