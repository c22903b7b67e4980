#!/usr/bin/env bash
# `agentstream serve` against clients we did not write: the official OpenAI
# Python SDK (Chat Completions, Responses, and Azure's Responses through its
# AzureOpenAI client), the official Mistral Python SDK (serve's /mistral
# prefix), boto3's bedrock-runtime client (ConverseStream's binary
# event stream and Converse, dummy credentials), the official Anthropic
# Python SDK, the official Google Gen AI Python SDK (Gemini), the official
# OpenAI Node SDK, and pi-ai 0.73.1's openai-responses and google
# providers, each streaming and not (pi-ai: streaming), with a tool call
# and a tool-result round trip (crates/agentstream-serve/clients/). Each check gets its own server
# on 127.0.0.1, port 0 (the README's pytest examples, now on the installed
# wheel's fixture, are run by .ci/packages.sh). Then cassettes: each SDK check again through
# `serve --upstream URL --record DIR` in front of `serve SCRIPT` (the mock
# provider), then against `serve --replay DIR` alone (the same answers, so
# the same check passes), the key it sent never in DIR, and a changed prompt
# answered with the mismatch error (HTTP 400, sent once: not retried).
# Cross-dialect replay: a cassette recorded by one SDK answers the others.
# Scripted HTTP errors (429 retried and recovered, the error objects) and
# Gemini thought signatures that are not base64 (clients/errors.json). A client that cannot be installed is
# SKIPPED.
# usage: serve-clients.sh PATH/TO/agentstream
set -uo pipefail
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
clients="$root/crates/agentstream-serve/clients"
script="$clients/script.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

# The API key the cassette checks send; it must never reach a cassette.
key="sk-agentstream-cassette-check-$$"

# start NAME ARGS...: starts `agentstream serve ARGS...`, sets
# started_pid and started_url (empty when it printed no URL).
start() {
    local name=$1 out
    shift
    out="$work/$name.out"
    # A previous server's file would give its (dead) URL if read before
    # the new server's shell truncates it.
    rm -f "$out"
    "$bin" serve "$@" >"$out" 2>"$work/$name.err" &
    started_pid=$!
    started_url=
    for _ in $(seq 100); do
        started_url=$(head -n 1 "$out" 2>/dev/null)
        [ -n "$started_url" ] && break
        sleep 0.1
    done
    if [ -z "$started_url" ]; then
        echo "agentstream serve $* printed no URL:"
        cat "$work/$name.err"
        kill "$started_pid" 2>/dev/null
        return 1
    fi
}

stop() {
    kill -INT "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

# with_server CMD...: starts a server for the script, runs CMD with
# AGENTSTREAM_URL and AGENTSTREAM_SCRIPT set, stops the server.
with_server() {
    local result
    start server "$script" --chunks 3 --pings || return 1
    AGENTSTREAM_URL=$started_url AGENTSTREAM_SCRIPT=$script "$@"
    result=$?
    stop "$started_pid"
    return "$result"
}

# with_script FILE CMD...: as with_server, for the script FILE, in one
# chunk.
with_script() {
    local result file=$1
    shift
    start scripted "$file" || return 1
    AGENTSTREAM_URL=$started_url AGENTSTREAM_SCRIPT=$file "$@"
    result=$?
    stop "$started_pid"
    return "$result"
}

# with_errors CMD...: with_script for the script of HTTP errors and
# signatures (clients/errors.json).
with_errors() {
    with_script "$clients/errors.json" "$@"
}

# with_recording DIR CMD...: runs CMD against a recording proxy in front
# of a server for the script, saving the cassettes in DIR; CMD sends the
# key. Fails when the key is found in DIR.
with_recording() {
    local dir=$1 upstream result
    shift
    start upstream "$script" --chunks 3 --pings || return 1
    upstream=$started_pid
    if ! start proxy --upstream "$started_url" --record "$dir"; then
        stop "$upstream"
        return 1
    fi
    AGENTSTREAM_URL=$started_url AGENTSTREAM_SCRIPT=$script AGENTSTREAM_KEY=$key "$@"
    result=$?
    stop "$started_pid"
    stop "$upstream"
    if grep -rqF "$key" "$dir"; then
        echo "the API key was written to a cassette in $dir"
        return 1
    fi
    return "$result"
}

# with_replay DIR CMD...: runs CMD against `serve --replay DIR` alone.
with_replay() {
    local dir=$1 result
    shift
    start replay --replay "$dir" || return 1
    AGENTSTREAM_URL=$started_url AGENTSTREAM_SCRIPT=$script AGENTSTREAM_KEY=$key "$@"
    result=$?
    stop "$started_pid"
    return "$result"
}

# check NAME [RUNNER ARGS...] -- CMD...: runs CMD through RUNNER
# (with_server unless given) and reports.
check() {
    local name=$1
    shift
    echo "--- $name"
    if "$@"; then
        echo "ok: $name"
    else
        echo "FAILED: $name"
        status=1
    fi
}

# cassettes NAME DIR CMD...: records CMD's calls into DIR, then replays.
cassettes() {
    local name=$1 dir=$2
    shift 2
    check "$name: recorded through the proxy" with_recording "$dir" "$@"
    check "$name: replayed from the cassettes" with_replay "$dir" "$@"
}

if python3 -m venv "$work/venv" >/dev/null 2>&1 &&
    "$work/venv/bin/pip" install --quiet --disable-pip-version-check openai anthropic google-genai >"$work/pip.log" 2>&1; then
    py="$work/venv/bin/python"
    check "OpenAI Python SDK" with_server env PYTHONPATH="$clients" "$py" "$clients/openai_check.py"
    check "Anthropic Python SDK" with_server env PYTHONPATH="$clients" "$py" "$clients/anthropic_check.py"
    check "OpenAI Python SDK, Responses API" with_server env PYTHONPATH="$clients" "$py" "$clients/responses_check.py"
    check "Google Gen AI Python SDK" with_server env PYTHONPATH="$clients" "$py" "$clients/genai_check.py"
    check "HTTP errors and Gemini signatures (the three Python SDKs)" \
        with_errors env PYTHONPATH="$clients" "$py" "$clients/errors_check.py"
    cassettes "OpenAI Python SDK" "$work/cassettes-python" env PYTHONPATH="$clients" "$py" "$clients/openai_check.py"
    cassettes "Anthropic Python SDK" "$work/cassettes-python" env PYTHONPATH="$clients" "$py" "$clients/anthropic_check.py"
    cassettes "OpenAI Python SDK, Responses API" "$work/cassettes-responses" env PYTHONPATH="$clients" "$py" "$clients/responses_check.py"
    cassettes "Google Gen AI Python SDK" "$work/cassettes-genai" env PYTHONPATH="$clients" "$py" "$clients/genai_check.py"
    check "a changed prompt gets the mismatch error (both Python SDKs)" \
        with_replay "$work/cassettes-python" env PYTHONPATH="$clients" "$py" "$clients/mismatch_check.py"
    check "OpenAI Python SDK, AzureOpenAI client" with_server env PYTHONPATH="$clients" "$py" "$clients/azure_check.py"
    if "$work/venv/bin/pip" install --quiet --disable-pip-version-check mistralai >"$work/pip-mistral.log" 2>&1; then
        check "Mistral Python SDK" with_server env PYTHONPATH="$clients" "$py" "$clients/mistral_check.py"
    else
        tail -n 3 "$work/pip-mistral.log" 2>/dev/null
        echo "SKIPPED: serve with the Mistral Python SDK (could not pip install mistralai)"
    fi
    if "$work/venv/bin/pip" install --quiet --disable-pip-version-check boto3 >"$work/pip-boto3.log" 2>&1; then
        check "boto3 bedrock-runtime (ConverseStream and Converse)" with_server env PYTHONPATH="$clients" "$py" "$clients/bedrock_check.py"
        cassettes "boto3 bedrock-runtime" "$work/cassettes-bedrock" env PYTHONPATH="$clients" "$py" "$clients/bedrock_check.py"
        check "boto3 bedrock-runtime: a 429, thinking, an exception after HTTP 200, timing with a split character, a cut" \
            with_script "$clients/bedrock_errors.json" env PYTHONPATH="$clients" "$py" "$clients/bedrock_errors_check.py"
    else
        tail -n 3 "$work/pip-boto3.log" 2>/dev/null
        echo "SKIPPED: serve with boto3's bedrock-runtime client (could not pip install boto3)"
    fi
else
    tail -n 3 "$work/pip.log" 2>/dev/null
    echo "SKIPPED: serve with the OpenAI, Anthropic and Google Gen AI Python SDKs (could not create a venv or pip install openai anthropic google-genai)"
fi

if command -v npm >/dev/null && mkdir -p "$work/node" &&
    (cd "$work/node" && npm init -y >/dev/null 2>&1 && npm install --silent --no-audit --no-fund openai >"$work/npm.log" 2>&1); then
    cp "$clients/openai_check.mjs" "$work/node/"
    check "OpenAI Node SDK" with_server bash -c 'cd "$0" && node openai_check.mjs' "$work/node"
    cassettes "OpenAI Node SDK" "$work/cassettes-node" bash -c 'cd "$0" && node openai_check.mjs' "$work/node"
else
    tail -n 3 "$work/npm.log" 2>/dev/null
    echo "SKIPPED: serve with the OpenAI Node SDK (could not npm install openai)"
fi
# Cross-dialect replay with the official SDKs (clients/cross_check.py): one
# streamed exchange recorded through the proxy by the Anthropic SDK is
# replayed to the OpenAI SDK's Chat Completions and Responses and to
# google-genai; one recorded by the OpenAI SDK is replayed to the Anthropic
# SDK. Each replayed call, streamed and not, must give the recorded text and
# tool call. Uses the venv of the Python checks above.
if [ -x "$work/venv/bin/python" ] &&
    "$work/venv/bin/python" -c 'import openai, anthropic, google.genai' >/dev/null 2>&1; then
    py="$work/venv/bin/python"
    cross="$clients/cross_check.py"
    check "cross-dialect: recorded with the Anthropic SDK" \
        with_recording "$work/cross-anthropic" env PYTHONPATH="$clients" CROSS=record:anthropic "$py" "$cross"
    check "cross-dialect: replayed to the OpenAI SDK (Chat, Responses) and google-genai" \
        with_replay "$work/cross-anthropic" env PYTHONPATH="$clients" CROSS=openai,responses,genai "$py" "$cross"
    check "cross-dialect: recorded with the OpenAI SDK" \
        with_recording "$work/cross-openai" env PYTHONPATH="$clients" CROSS=record:openai "$py" "$cross"
    check "cross-dialect: replayed to the Anthropic SDK" \
        with_replay "$work/cross-openai" env PYTHONPATH="$clients" CROSS=anthropic "$py" "$cross"
else
    echo "SKIPPED: cross-dialect replay with the official SDKs (no venv with openai, anthropic and google-genai)"
fi

# pi-ai 0.73.1 (Pi's own provider layer), installed under target/ so later
# runs reuse it.
pi="$root/target/serve-clients-pi-ai"
if command -v npm >/dev/null && mkdir -p "$pi" &&
    (cd "$pi" && { [ -f package.json ] || npm init -y >/dev/null 2>&1; } &&
        npm install --silent --no-audit --no-fund @mariozechner/pi-ai@0.73.1 >"$work/npm-pi.log" 2>&1); then
    cp "$clients/pi_ai_check.mjs" "$pi/"
    for api in openai-responses google-generative-ai; do
        check "pi-ai 0.73.1 $api" with_server env PI_API=$api bash -c 'cd "$0" && node pi_ai_check.mjs' "$pi"
        cassettes "pi-ai 0.73.1 $api" "$work/cassettes-pi-$api" env PI_API=$api bash -c 'cd "$0" && node pi_ai_check.mjs' "$pi"
    done
else
    tail -n 3 "$work/npm-pi.log" 2>/dev/null
    echo "SKIPPED: serve with pi-ai 0.73.1 (could not npm install @mariozechner/pi-ai@0.73.1)"
fi
exit "$status"
