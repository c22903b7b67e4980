#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time on seed corpora built
# from ../shared/fixtures, and fails on any crash.
# usage: .ci/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shared=../shared/fixtures

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked || {
        echo "SKIPPED: fuzz (cargo install cargo-fuzz failed)"
        exit 0
    }
fi
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "SKIPPED: fuzz (no nightly toolchain)"
    exit 0
fi

corpus=fuzz/corpus
rm -rf "$corpus"
mkdir -p "$corpus/sse_decoder" "$corpus/openai_chunks" "$corpus/anthropic_events" "$corpus/message_decode"
python3 - "$shared" "$corpus" <<'PY'
import hashlib, json, os, sys
shared, corpus = sys.argv[1], sys.argv[2]
def put(target, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(corpus, target, name), "wb") as f:
        f.write(data)
for folder in ("openai-sse", "anthropic-sse"):
    path = os.path.join(shared, folder)
    if not os.path.isdir(path):
        continue
    for name in sorted(os.listdir(path)):
        if name.endswith(".md"):
            continue
        body = open(os.path.join(path, name), "rb").read()[:64 * 1024]
        for size in (1, 7, 31):
            put("sse_decoder", bytes([size]) + body)
        lines = [l[5:].strip() for l in body.split(b"\n") if l.startswith(b"data:")]
        if name.endswith(".jsonl"):
            lines = [l.strip() for l in body.split(b"\n") if l.strip()]
        if lines:
            put("openai_chunks" if folder == "openai-sse" else "anthropic_events", b"\n".join(lines))
sessions = os.path.join(shared, "pi-sessions")
count = 0
for name in sorted(os.listdir(sessions)) if os.path.isdir(sessions) else []:
    for line in open(os.path.join(sessions, name), "rb"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and "message" in entry and count < 300:
            put("message_decode", json.dumps(entry["message"]).encode())
            count += 1
PY

status=0
for target in sse_decoder openai_chunks anthropic_events message_decode; do
    echo "fuzz: $target for ${seconds}s"
    if ! cargo +nightly fuzz run "$target" "$corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 2>&1 | tail -n 25; then
        echo "fuzz: $target FAILED (the crash input is under fuzz/artifacts/$target/)"
        status=1
    fi
done
exit "$status"
