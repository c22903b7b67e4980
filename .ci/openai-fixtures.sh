#!/usr/bin/env bash
# Projects every recorded OpenAI-compatible stream in
# ../shared/fixtures/openai-sse/ with `agentstream decode` and compares the
# output with what was checked by hand against each recorded body.
#
# usage: bash .ci/openai-fixtures.sh PATH/TO/agentstream
set -euo pipefail
bin=$1
cd "$(dirname "$0")/.."
dir=../shared/fixtures/openai-sse

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
    local file=$dir/$1 expected=$2 actual flags=()
    seen+=("$1")
    [[ $1 == *.chunks.jsonl ]] && flags=(--chunks)
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
