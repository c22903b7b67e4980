#!/usr/bin/env bash
# Runs every cargo-fuzz target for a bounded time on seed corpora built
# from ../shared/fixtures (the projector targets) and from the SSE
# fixtures committed in crates/agentstream-wire/tests/fixtures (the
# cassette and recording-proxy targets), and fails on any crash.
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
mkdir -p "$corpus/sse_decoder" "$corpus/openai_chunks" "$corpus/anthropic_events" "$corpus/message_decode" \
    "$corpus/cassette_files" "$corpus/proxy_upstream" "$corpus/server_decode" "$corpus/eventstream_decoder"
python3 - crates/agentstream-wire/tests/fixtures "$corpus" <<'PY'
# Cassettes made of the committed SSE fixtures: each body with a
# request.json, a response.json (plain, with secrets, cut) and its pieces.
import hashlib, json, os, sys
fixtures, corpus = sys.argv[1], sys.argv[2]
def put(target, data):
    with open(os.path.join(corpus, target, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)
apis = {"openai-sse": ("openai-completions", "/v1/chat/completions"),
        "anthropic-sse": ("anthropic-messages", "/v1/messages"),
        "openai-responses-sse": ("openai-responses", "/v1/responses"),
        "google-sse": ("google-generative-ai", "/v1beta/models/m:streamGenerateContent")}
for folder, (api, path) in apis.items():
    where = os.path.join(fixtures, folder)
    for name in sorted(os.listdir(where)) if os.path.isdir(where) else []:
        if name.endswith(".md"):
            continue
        body = open(os.path.join(where, name), "rb").read()[:16 * 1024]
        request = json.dumps({"api": api, "method": "POST", "path": path, "query": None,
                              "headers": {"authorization": "[redacted]"}, "model": "m", "stream": True,
                              "context": {"messages": [{"role": "user", "content": "Hi", "timestamp": 0}]},
                              "options": {}}).encode()
        pieces = [body[i:i + 97] for i in range(0, len(body), 97)] or [b""]
        lengths = "".join("%d\n" % len(p) for p in pieces).encode()
        for head in ({"status": 200, "headers": {"content-type": "text/event-stream"}},
                     {"status": 200, "headers": {}, "cut": True}):
            put("cassette_files", b"\n\0\n".join([request, json.dumps(head).encode(), body, lengths]))
        put("cassette_files", b"\n\0\n".join([request, b'{"status": 429}', body]))
        headers = b"content-type: text/event-stream\nx-request-id: req_1\nauthorization: Bearer sk-1\nset-cookie: a=b\n"
        for status, cut in ((200, 0), (200, 1), (429, 0)):
            put("proxy_upstream", status.to_bytes(2, "little") + bytes([cut]) + headers + b"\n" + b"\xff".join(pieces))
PY
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
# Request bodies of each protocol (the first byte picks it), with lone
# surrogate escapes, for the server half's decoders.
python3 - "$corpus" <<'PY'
import hashlib, os, sys
corpus = sys.argv[1]
said = r'"half \ud800 here, whole \ud83d\ude00"'
bodies = [
    (0, '{"model": "m", "stream": true, "messages": [{"role": "user", "content": %s}, {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\\"x\\": \\"\\\\ud800\\"}"}}]}]}' % said),
    (1, '{"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": [{"type": "text", "text": %s}]}]}' % said),
    (2, '{"model": "m", "input": [{"role": "user", "content": %s}, {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]}' % said),
    (3, '{"contents": [{"role": "user", "parts": [{"text": %s}]}]}' % said),
]
for pick, body in bodies:
    data = bytes([pick]) + body.encode()
    with open(os.path.join(corpus, "server_decode", hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)
PY

# The committed Bedrock events, each file encoded as event-stream messages
# (the same bytes the encoder writes), whole and cut.
python3 - crates/agentstream-wire/tests/fixtures/bedrock "$corpus/eventstream_decoder" <<'PY'
import hashlib, json, os, struct, sys, zlib
fixtures, out = sys.argv[1], sys.argv[2]
def header(name, value):
    return bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value
def message(event, payload):
    headers = header(b":event-type", event) + header(b":content-type", b"application/json") \
        + header(b":message-type", b"event")
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))
for name in sorted(os.listdir(fixtures)):
    if not name.endswith(".jsonl"):
        continue
    body = b""
    for line in open(os.path.join(fixtures, name), "rb"):
        if line.strip():
            (event, payload), = json.loads(line).items()
            body += message(event.encode(), json.dumps(payload, separators=(",", ":")).encode())
    for data in (bytes([0]) + body, bytes([6]) + body, bytes([31]) + body[: len(body) // 2]):
        with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
PY

for target in sse_decoder openai_chunks anthropic_events message_decode cassette_files proxy_upstream server_decode eventstream_decoder; do
    echo "fuzz: $target for ${seconds}s"
    if ! cargo +nightly fuzz run "$target" "$corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 2>&1 | tail -n 25; then
        echo "fuzz: $target FAILED (the crash input is under fuzz/artifacts/$target/)"
        status=1
    fi
done
exit "$status"
