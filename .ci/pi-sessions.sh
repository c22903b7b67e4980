#!/usr/bin/env bash
# Validate and normalize every real Pi session log in
# ../shared/fixtures/pi-sessions/ (relative to the repo root) with the built
# `agentstream` binary, and check the summary numbers exactly.
#
# Usage: .ci/pi-sessions.sh PATH/TO/agentstream
#
# The logs are external data (written by Pi's coding agent); they are not
# part of this repo. Every file must have an entry in EXPECTED below, so a
# new log gets its numbers verified by hand before CI accepts it.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 PATH/TO/agentstream" >&2
  exit 2
fi
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[[ -x "$bin" ]] || { echo "error: $1 is not an executable" >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
logs="$(cd "$root/../shared/fixtures/pi-sessions" && pwd)"

# file name -> "messages diagnostics"; round-trip mismatches must always be 0.
#
# large-session.jsonl: 914 message entries (88 user, 453 assistant, 373
# toolResult). The 18 diagnostics are all `unanswered-tool-call`, checked
# by hand and by .ci/pi_crosscheck.py (an independent re-implementation):
#   - line 33: an assistant message with 16 `edit` calls that ended with
#     stopReason "error" ("terminated"); the user spoke next (16);
#   - line 234: an aborted message with 1 call, then the user (1);
#   - line 843: an aborted message with 1 call, then the user (1).
declare -A EXPECTED=(
  [large-session.jsonl]="914 18"
)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# Runs `validate FILE` and prints "messages diagnostics mismatches errors exit".
summarize() {
  local out status=0
  out="$("$bin" validate "$1" 2>"$tmp/stderr")" || status=$?
  local line
  line="$(grep '^summary: ' <<<"$out" | tail -n 1)" || true
  if [[ ! "$line" =~ ^summary:\ ([0-9]+)\ messages,\ ([0-9]+)\ diagnostics,\ ([0-9]+)\ round-trip\ mismatches,\ ([0-9]+)\ errors$ ]]; then
    echo "unparsable summary: '$line'; stderr: $(cat "$tmp/stderr")" >&2
    echo "x x x x $status"
    return
  fi
  echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]} $status"
}

checked=0
for log in "$logs"/*; do
  [[ -f "$log" ]] || continue
  name="$(basename "$log")"
  checked=$((checked + 1))
  if [[ -z "${EXPECTED[$name]+set}" ]]; then
    fail "$name: no expected numbers; verify them by hand and add them to $0"
    continue
  fi
  read -r want_msgs want_diags <<<"${EXPECTED[$name]}"
  want_exit=0
  [[ "$want_diags" -gt 0 ]] && want_exit=1
  want="$want_msgs $want_diags 0 0 $want_exit"
  failures_before=$failures

  got="$(summarize "$log")"
  [[ "$got" == "$want" ]] || fail "$name: validate gave '$got' (messages diagnostics mismatches errors exit), want '$want'"

  # normalize: every output line is JSON, and it validates the same way.
  norm="$tmp/$name.normalized"
  if ! "$bin" normalize "$log" >"$norm"; then
    fail "$name: normalize failed"
    continue
  fi
  got="$(summarize "$norm")"
  [[ "$got" == "$want" ]] || fail "$name: normalized output validated as '$got', want '$want'"
  if command -v python3 >/dev/null; then
    # Independent check: each line parses and equals the original under
    # JavaScript semantics, without using our comparison code.
    python3 "$root/.ci/pi_crosscheck.py" "$log" "$norm" >"$tmp/cross" || fail "$name: $(cat "$tmp/cross")"
    grep -qx "messages $want_msgs" "$tmp/cross" || fail "$name: cross-check message count differs: $(cat "$tmp/cross")"
    grep -qx "diagnostics $want_diags" "$tmp/cross" || fail "$name: cross-check diagnostics differ: $(cat "$tmp/cross")"
  fi
  [[ $failures -eq $failures_before ]] && echo "ok: $name ($want_msgs messages, $want_diags diagnostics, 0 round-trip mismatches)"
done

[[ $checked -gt 0 ]] || fail "no session logs found in $logs"
if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
