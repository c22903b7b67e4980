#!/usr/bin/env bash
# Projects every recorded Anthropic Messages stream in
# ../shared/fixtures/anthropic-sse/ with `agentstream decode --api anthropic`
# and compares the output with what was checked by hand against each
# recorded body.
#
# usage: bash .ci/anthropic-fixtures.sh PATH/TO/agentstream
set -euo pipefail
bin=$1
cd "$(dirname "$0")/.."
dir=../shared/fixtures/anthropic-sse

# rep N WORD: WORD joined N times with " → ".
rep() {
    local out=$2 i
    for ((i = 1; i < $1; i++)); do out="$out → $2"; done
    printf '%s' "$out"
}

failed=0
seen=()

# check FILE EXPECTED: decodes FILE (with --chunks for *.chunks.jsonl) and
# compares stdout with EXPECTED exactly; the command must exit 0 (which also
# means the protocol checker found nothing).
check() {
    local file=$dir/$1 expected=$2 actual flags=(--api anthropic)
    seen+=("$1")
    [[ $1 == *.chunks.jsonl ]] && flags+=(--chunks)
    if ! actual=$("$bin" decode "${flags[@]}" "$file"); then
        echo "FAIL $1: agentstream decode exited non-zero"
        failed=1
        return
    fi
    if [[ "$actual" != "$expected" ]]; then
        echo "FAIL $1"
        diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual") || true
        failed=1
        return
    fi
    echo "ok   $1"
}

# One text block of three deltas with a `ping` between events; usage from
# message_start (input 11) and the cumulative message_delta (output 6).
check anthropic-text-ping.sse "start → text_start → $(rep 3 text_delta) → text_end → done
Hello there!
stopReason: stop
usage: input=11 output=6 cacheRead=0 totalTokens=17"

# Text, then a tool_use block with five input_json_deltas, the first ""
# (no event): four toolcall_deltas whose fragments split keys and values.
# The unknown `caller` field is ignored; cache fields are 0.
check anthropic-text-tool-use.sse "start → text_start → $(rep 2 text_delta) → text_end → toolcall_start → $(rep 4 toolcall_delta) → toolcall_end → done
I'll check the current weather in Paris for you.
toolCall: toolu_01NRLabsLyVHZPKxbKvkfSMn get_weather {\"location\":\"Paris\"}
stopReason: toolUse
usage: input=377 output=65 cacheRead=0 totalTokens=442"

# Ten thinking_deltas, the last one "" (no event), closed by a
# signature_delta whose 332-byte signature is kept; then text.
# `context_management` on message_delta is ignored.
check anthropic-thinking-signature.chunks.jsonl "start → thinking_start → $(rep 9 thinking_delta) → thinking_end → text_start → $(rep 3 text_delta) → text_end → done
925 ÷ 5 = 185
thinking: 75 chars, signature 332 bytes
stopReason: stop
usage: input=69 output=53 cacheRead=0 totalTokens=122"

# A tool with no arguments: its only input_json_delta is "", which gives a
# synthetic \"{}\" delta and {} as arguments; message_delta repeats
# input_tokens.
check anthropic-tool-no-args.chunks.jsonl "start → text_start → $(rep 2 text_delta) → text_end → toolcall_start → toolcall_delta → toolcall_end → done
I'll update the issue list for you.
toolCall: toolu_01QE1WLsSVp5hy5Q3GmGTmjP updateIssueList {}
stopReason: toolUse
usage: input=565 output=48 cacheRead=0 totalTokens=613"

# Every recording must have an expectation here.
for path in "$dir"/*; do
    name=$(basename "$path")
    [[ $name == README.md ]] && continue
    if [[ ! " ${seen[*]} " == *" $name "* ]]; then
        echo "FAIL $name: no expected output in $0"
        failed=1
    fi
done
exit "$failed"
