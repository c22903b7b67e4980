#!/usr/bin/env bash
# The packages a user installs, tested as a user installs them: the wheel of
# the PyPI package `agentstream` (maturin, `bindings = "bin"` over
# crates/agentstream-cli, with the Python package and pytest plugin of
# packages/python), and the npm tarballs `agentstream`, its platform package
# `@agentstream/linux-x64` (the same binary) and `agentstream-wasm` (the
# wasm-bindgen build of agentstream-wasm's `js-api`). Each goes into a fresh
# virtual environment or folder with nothing else from the repository; then
# the pytest suite (official openai, anthropic and google-genai SDKs; the
# isolation tests under pytest-xdist against one shared server), the
# README's install step and pytest examples exactly as printed, and the
# vitest suite (official openai Node SDK, pi-ai 0.73.1, the wasm
# ScriptedModel). Prints each artifact's size, the install time into the
# fresh environment and the time from `import` to the first answered
# request, the figures the README states. Without python3, node/npm or the
# package registries, prints SKIPPED and passes.
# usage: .ci/packages.sh
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cache=$target/packages
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
step() { printf -- '--- %s\n' "$1"; }
fail() { echo "FAILED: $1"; status=1; }
# elapsed_ms START_NS: milliseconds since START_NS (date +%s%N).
elapsed_ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

# readme_block NAME: the fenced block after `<!-- serve-example: NAME -->`
# in README.md.
readme_block() {
    awk -v marker="<!-- serve-example: $1 -->" '
        $0 == marker { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' "$root/README.md"
}

# readme_folder DIR NAME...: DIR with the README's blocks NAME... as files
# and `target` standing for the repository's target directory (the
# README's commands are run from the repository's root).
readme_folder() {
    local dir=$1 name
    shift
    mkdir -p "$dir"
    ln -sfn "$target" "$dir/target"
    for name in "$@"; do
        readme_block "$name" >"$dir/$name"
        if [ ! -s "$dir/$name" ]; then
            echo "README.md has no block after <!-- serve-example: $name -->"
            return 1
        fi
    done
}

# readme_python: the README's pip install step in a fresh virtual
# environment, then its pytest examples in that folder.
readme_python() {
    local dir=$work/readme-python
    readme_folder "$dir" pip-install.sh script.json test_agent.py rules.json test_rules.py test_isolation.py || return 1
    python3 -m venv "$dir/.venv" || return 1
    (
        cd "$dir" && PATH="$dir/.venv/bin:$PATH" && bash -e pip-install.sh >"$work/readme-pip.log" 2>&1 ||
            { tail -n 5 "$work/readme-pip.log"; exit 1; }
        .venv/bin/python -m pytest -q -p no:cacheprovider test_agent.py test_rules.py test_isolation.py
    )
}

# readme_node: the README's npm install step in a fresh folder, then its
# vitest example there.
readme_node() {
    local dir=$work/readme-node
    readme_folder "$dir" npm-install.sh agent.test.js || return 1
    (
        cd "$dir" && npm init -y >/dev/null && bash -e npm-install.sh >"$work/readme-npm.log" 2>&1 ||
            { tail -n 5 "$work/readme-npm.log"; exit 1; }
        npx vitest run agent.test.js
    )
}

version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
step "versions (the workspace's: $version)"
for manifest in packages/npm/*/package.json; do
    grep -q "\"version\": \"$version\"" "$manifest" || fail "$manifest is not at version $version"
done
grep -q "\"@agentstream/linux-x64\": \"$version\"" packages/npm/agentstream/package.json ||
    fail "agentstream's optional dependency is not @agentstream/linux-x64 $version"

if ! command -v python3 >/dev/null || ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIPPED: the packages (python3, node or npm missing)"
    exit "$status"
fi
mkdir -p "$cache"
export PIP_CACHE_DIR=$cache/pip-cache PIP_DISABLE_PIP_VERSION_CHECK=1 npm_config_cache=$cache/npm-cache
# maturin, and zig (the `ziglang` wheel) as its linker: the binary links
# against glibc 2.17's symbols, so the wheel is manylinux2014 and installs
# on any glibc Linux of the last decade, not only on this machine's glibc
# (a plain build here would be manylinux_2_34).
if ! { { [ -x "$cache/build-venv/bin/maturin" ] && "$cache/build-venv/bin/python" -c 'import ziglang'; } ||
    { python3 -m venv "$cache/build-venv" &&
        "$cache/build-venv/bin/pip" install --quiet maturin==1.16.0 ziglang==0.17.1; }; } \
    >"$work/maturin.log" 2>&1; then
    tail -n 3 "$work/maturin.log"
    echo "SKIPPED: the packages (could not pip install maturin and ziglang)"
    exit "$status"
fi

step "the wheel (maturin build --release --zig --compatibility manylinux2014)"
rm -f "$target"/wheels/agentstream-*.whl
if ! (cd packages/python && PATH="$cache/build-venv/bin:$PATH" CARGO_TARGET_DIR=$target \
    "$cache/build-venv/bin/maturin" build --release --zig --compatibility manylinux2014 --out "$target/wheels"); then
    fail "maturin build"
    exit "$status"
fi
wheel=$(ls "$target"/wheels/agentstream-"$version"-*.whl)
# The binary inside the wheel, for the npm platform package.
binary=$work/agentstream
python3 - "$wheel" "$binary" <<'PY' || fail "no agentstream binary in the wheel"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    name = next(n for n in wheel.namelist() if n.endswith(".data/scripts/agentstream"))
    with open(sys.argv[2], "wb") as out:
        out.write(wheel.read(name))
PY
chmod 755 "$binary"

step "the npm tarballs (npm pack)"
cp -r packages/npm "$work/npm-src"
cp "$binary" "$work/npm-src/linux-x64/bin/agentstream"
have_wasm=0
# wasm-bindgen-cli is installed by .ci/hosts-wasm.sh (its version must be
# the wasm-bindgen crate's).
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen 0.2.130" ] ||
    ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    echo "SKIPPED: agentstream-wasm (no wasm-bindgen 0.2.130 or no wasm32-unknown-unknown target)"
elif cargo build --release -p agentstream-wasm --target wasm32-unknown-unknown --features js-api --example js_api &&
    wasm-bindgen --target nodejs --out-name agentstream_wasm --out-dir "$work/npm-src/wasm" \
        "$target/wasm32-unknown-unknown/release/examples/js_api.wasm"; then
    have_wasm=1
else
    fail "the agentstream-wasm build"
fi
rm -rf "$target/npm"
mkdir -p "$target/npm"
tarballs=()
for package in agentstream linux-x64 wasm; do
    [ "$package" = wasm ] && [ "$have_wasm" = 0 ] && continue
    name=$(cd "$work/npm-src/$package" && npm pack --silent --pack-destination "$target/npm") ||
        { fail "npm pack $package"; continue; }
    tarballs+=("$target/npm/$name")
done

step "sizes"
for artifact in "$wheel" "${tarballs[@]}"; do
    size=$(stat -c %s "$artifact")
    echo "$(basename "$artifact"): $size bytes"
    # The README states each size as printed here: within 10 %.
    stated=$(sed -n "s/^$(basename "$artifact"): \([0-9]*\) bytes$/\1/p" README.md | head -n 1)
    if [ -z "$stated" ]; then
        fail "README.md states no size for $(basename "$artifact")"
    elif [ $((size * 10)) -lt $((stated * 9)) ] || [ $((size * 10)) -gt $((stated * 11)) ]; then
        fail "README.md states $stated bytes for $(basename "$artifact"), more than 10 % off"
    fi
done
# Every artifact the README names is one this run built.
for name in $(grep -o 'target/\(wheels\|npm\)/[A-Za-z0-9_.-]*\.\(whl\|tgz\)' README.md | sort -u); do
    [ -f "$target/${name#target/}" ] || fail "README.md names $name, which this run did not build"
done

step "Python: install into a fresh virtual environment"
venv=$work/venv
python3 -m venv "$venv"
start=$(date +%s%N)
"$venv/bin/pip" install --quiet --no-index --no-deps "$wheel" || fail "pip install the wheel"
echo "pip install $(basename "$wheel") (no dependencies): $(elapsed_ms "$start") ms"
# The time from `import agentstream` to the first answered request (the
# server's start included), through the standard library only.
"$venv/bin/python" - <<'PY' || fail "import to first request"
import time
start = time.perf_counter()
import json, urllib.request
import agentstream
with agentstream.Server(script=["Paris."]) as server:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "Capital of France?"}]}).encode()
    request = urllib.request.Request(server.base_url("openai") + "/chat/completions", data=body,
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request) as response:
        assert json.load(response)["choices"][0]["message"]["content"] == "Paris."
    print(f"Python: import agentstream to the first answered request: {(time.perf_counter() - start) * 1000:.0f} ms")
PY
if "$venv/bin/pip" install --quiet openai anthropic google-genai pytest pytest-xdist >"$work/pip.log" 2>&1; then
    cp -r packages/python/tests "$work/pytests"
    step "pytest: Server, the fixture and the three SDKs"
    (cd "$work/pytests" && "$venv/bin/python" -m pytest -q -p no:cacheprovider test_server.py test_sdks.py) ||
        fail "pytest suite"
    step "pytest: one shared server, two workers (pytest-xdist), isolated by test id"
    (cd "$work/pytests" && "$venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 \
        -o agentstream_shared=true test_isolation.py) || fail "pytest isolation suite"
    step "the README's Python install and pytest examples, as printed"
    readme_python "$venv" || fail "the README's Python examples"
else
    tail -n 3 "$work/pip.log"
    echo "SKIPPED: pytest suites (could not pip install openai anthropic google-genai pytest pytest-xdist)"
fi

step "npm: install the tarballs into a fresh folder"
node_dir=$work/node
mkdir -p "$node_dir"
(cd "$node_dir" && npm init -y >/dev/null) || fail "npm init"
start=$(date +%s%N)
if (cd "$node_dir" && npm install --silent --no-audit --no-fund "${tarballs[@]}"); then
    echo "npm install $(for t in "${tarballs[@]}"; do basename "$t"; done | tr '\n' ' ')(no dependencies): $(elapsed_ms "$start") ms"
else
    fail "npm install the tarballs"
fi
(cd "$node_dir" && node --input-type=module -e '
const start = performance.now();
const { startServer } = await import("agentstream");
const server = await startServer({ script: ["Paris."] });
const response = await fetch(server.baseUrl("openai") + "/chat/completions", {
  method: "POST", headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "Capital of France?" }] }),
});
const answer = (await response.json()).choices[0].message.content;
await server.close();
if (answer !== "Paris.") throw new Error(answer);
console.log(`Node: import agentstream to the first answered request: ${Math.round(performance.now() - start)} ms`);
') || fail "import to first request (Node)"
if (cd "$node_dir" && npm install --silent --no-audit --no-fund openai @mariozechner/pi-ai@0.73.1 vitest@3.2.4 \
    >"$work/npm.log" 2>&1); then
    cp packages/npm/tests/*.js "$node_dir/"
    tests=(server.test.js isolation.test.js)
    label="vitest: the openai Node SDK, pi-ai and the helper"
    if [ "$have_wasm" = 1 ]; then
        tests+=(wasm.test.js)
        label+=", the wasm ScriptedModel"
    fi
    step "$label"
    (cd "$node_dir" && npx vitest run "${tests[@]}") || fail "vitest suite"
    step "jest: the helper with the openai Node SDK"
    if (cd "$node_dir" && npm install --silent --no-audit --no-fund jest@30.5.2 >>"$work/npm.log" 2>&1); then
        cp packages/npm/tests/jest.test.mjs "$node_dir/"
        (cd "$node_dir" && NODE_OPTIONS=--experimental-vm-modules npx jest --ci --testTimeout 30000 jest.test.mjs) ||
            fail "jest suite"
    else
        tail -n 3 "$work/npm.log"
        echo "SKIPPED: jest suite (could not npm install jest@30.5.2)"
    fi
    step "the README's npm install and vitest example, as printed"
    readme_node || fail "the README's JavaScript example"
else
    tail -n 3 "$work/npm.log"
    echo "SKIPPED: vitest suite (could not npm install openai @mariozechner/pi-ai@0.73.1 vitest@3.2.4)"
fi

echo "packages.sh took $SECONDS s"
exit "$status"
