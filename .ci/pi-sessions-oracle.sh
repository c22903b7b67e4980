#!/usr/bin/env bash
# The session differential test's other half: recompute, with the real Pi
# (pi-coding-agent 0.73.1 from npm), what buildSessionContext, convertToLlm
# and getTree give (and compaction.pi.json: isContextOverflow and
# estimateTokens) for every session file under
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
    "$root/oracle/pi-coding-agent/contexts.mjs" "$root/oracle/pi-coding-agent/generate-corpus.mjs" \
    "$root/oracle/pi-coding-agent/compaction.mjs" "$root/oracle/pi-coding-agent/policies.mjs" \
    "$root/oracle/pi-coding-agent/agent-session.mjs" "$root/oracle/pi-coding-agent/branch-summary.mjs" \
    "$root/oracle/pi-coding-agent/stand-in.mjs" "$work/"
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
# shellcheck disable=SC2086
TZ=UTC node compaction.mjs $mode "$fixtures/compaction.pi.json" "$fixtures/corpus" "$fixtures/real"
# shellcheck disable=SC2086
TZ=UTC node policies.mjs $mode "$fixtures/policies.pi.json" "$fixtures/corpus" "$fixtures/real"
# shellcheck disable=SC2086
TZ=UTC node branch-summary.mjs $mode "$fixtures/branch-summary.pi.json" "$fixtures/corpus" "$fixtures/real"
# Pi's running AgentSession on scripted scenarios (retry, compaction),
# which `cargo test -p agentstream --test agent_session_oracle` replays on
# our Agent.
scenarios="$root/crates/agentstream/tests/fixtures/agent-session"
# shellcheck disable=SC2086
TZ=UTC node agent-session.mjs $mode "$scenarios/scenarios.json" "$scenarios"
[[ -z "$mode" ]] && exit 0

# Both directions of the writer: sessions written by our CLI (new ones,
# with a label, a branch summary and a fork) and a session Pi wrote that
# our CLI resumed and appended to must open in Pi's SessionManager with the
# contexts our `session context` prints, for every entry.
(cd "$root" && cargo build -q -p agentstream-cli)
bin="$root/target/debug/agentstream"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '# Title\n\nSome prose.\n' >"$tmp/README.md"
mkdir "$tmp/written"
cp "$fixtures/corpus/v3-compaction.jsonl" "$tmp/written/pi-then-ours.jsonl"
(
    cd "$tmp"
    "$bin" agent --session written/pi-then-ours.jsonl "What is in the README?" >/dev/null
    "$bin" agent --session written/ours.jsonl "What is in the README?" >/dev/null
    first=$(sed -n 2p written/ours.jsonl | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).id')
    second=$(sed -n 3p written/ours.jsonl | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).id')
    "$bin" session label written/ours.jsonl "$second" "the read call" >/dev/null
    "$bin" session branch written/ours.jsonl --from "$first" --summary "Read it once already." >/dev/null
    "$bin" agent --session written/ours.jsonl "Again, please." >/dev/null
    "$bin" session fork written/ours.jsonl --leaf "$second" >/dev/null
)
TZ=UTC node contexts.mjs --ours "$bin" "$tmp/written"
