#!/usr/bin/env bash
# Projects every recorded stream of one API in ../shared/fixtures/ with
# `agentstream decode` and compares the output with what was checked by
# hand against each recorded body: OpenAI-compatible Chat Completions
# streams in openai-sse/, Anthropic Messages streams in anthropic-sse/
# (decoded with `--api anthropic`). Every recording must have an
# expectation here.
#
# usage: bash .ci/provider-fixtures.sh openai|anthropic PATH/TO/agentstream
set -euo pipefail
api=${1:-}
bin=${2:-}
cd "$(dirname "$0")/.."
case $api in
openai) api_flags=() ;;
anthropic) api_flags=(--api anthropic) ;;
*)
    echo "usage: bash .ci/provider-fixtures.sh openai|anthropic PATH/TO/agentstream" >&2
    exit 2
    ;;
esac
if [ -z "$bin" ]; then
    echo "usage: bash .ci/provider-fixtures.sh openai|anthropic PATH/TO/agentstream" >&2
    exit 2
fi
dir=../shared/fixtures/$api-sse

# rep N WORD: WORD joined N times with " → ".
rep() {
    local out=$2 i
    for ((i = 1; i < $1; i++)); do out="$out → $2"; done
    printf '%s' "$out"
}

failed=0
seen=()

# check FILE EXPECTED: decodes FILE (with the API's flags, and --chunks for
# *.chunks.jsonl) and compares stdout with EXPECTED exactly; the command must
# exit 0 (which also means the protocol checker found nothing).
check() {
    local file=$dir/$1 expected=$2 actual flags=("${api_flags[@]}")
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

# The expectations, one function per API (the strings span lines, so the
# bodies are not indented).
openai() {
# 31 content deltas, the first one "" (opens nothing): 30 text_deltas. Finish
# `stop` on its own chunk, usage on a `choices: []` chunk, then [DONE].
check openai-text.sse "start → text_start → $(rep 30 text_delta) → text_end → done
I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.
stopReason: stop
usage: input=14 output=30 cacheRead=0 totalTokens=44"

# Two calls one after the other (index 0 then 1): each opens with name and id
# and arguments "", then 11 and 9 non-empty fragments. Call 0 is a complete
# JSON object when call 1 starts, so it ends there and call 1 streams live.
check openai-parallel-tool-calls.sse "start → toolcall_start → $(rep 11 toolcall_delta) → toolcall_end → toolcall_start → $(rep 9 toolcall_delta) → toolcall_end → done

toolCall: call_JMW1whyEaYG438VE1OIflxA2 GetWeatherArgs {\"city\":\"Edinburgh\",\"country\":\"GB\",\"units\":\"c\"}
toolCall: call_DNYTawLBoN8fj3KN6qU9N1Ou get_stock_price {\"ticker\":\"AAPL\",\"exchange\":\"NASDAQ\"}
stopReason: toolUse
usage: input=149 output=60 cacheRead=0 totalTokens=209"

# Text, then a call whose index starts at 1, with two empty fragments (no
# delta), then two fragments. No usage in the body (zeros). The body ends
# "data: [DONE]\n" without the blank line: dispatched at end of input.
check compat-tool-call-index1-no-final-blank.sse "start → text_start → text_delta → text_delta → text_end → toolcall_start → toolcall_delta → toolcall_delta → toolcall_end → done
Reading it.
toolCall: toolu_sanitized read_file {\"path\":\"a.txt\"}
stopReason: toolUse
usage: input=0 output=0 cacheRead=0 totalTokens=0"

# Continuation fragments carry id "" (ignored), the trailing fragment is
# empty (no delta), finish on its own chunk, usage on a `choices: []` chunk
# with cached_tokens 0, and no [DONE]: the finish_reason ends it.
check alibaba-tool-call.chunks.jsonl "start → toolcall_start → toolcall_delta → toolcall_delta → toolcall_end → done

toolCall: call_eee11723464a4b9eb8cee71d weather {\"location\":\"San Francisco\"}
stopReason: toolUse
usage: input=295 output=22 cacheRead=0 totalTokens=317"
}

anthropic() {
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
}

"$api"

# Every recording must have an expectation here.
for path in "$dir"/*; do
    name=$(basename "$path")
    [[ $name == README.md ]] && continue
    if [[ ! " ${seen[*]} " == *" $name "* ]]; then
        echo "FAIL $name: no expected output in $0 ($api)"
        failed=1
    fi
done
exit "$failed"
