#!/usr/bin/env bash
# The Cortex-M firmware (examples/embedded): builds it for
# thumbv7em-none-eabihf (always), then boots it on QEMU's mps2-an386 board
# and checks its semihosting exit status, that every conformance body
# printed `ok`, and that the demo's transcript equals the one the native
# executors produce (crates/agentstream-testkit/transcripts/demo.txt).
# If qemu-system-arm cannot be installed, the run is skipped with a
# `SKIPPED:` line; the build still counts.
#
# usage: bash .ci/hosts-embedded.sh
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
firmware_dir="$root/examples/embedded"
expected="$root/crates/agentstream-testkit/transcripts/demo.txt"
target_dir="${CARGO_TARGET_DIR:-$firmware_dir/target}"
elf="$target_dir/thumbv7em-none-eabihf/release/agentstream-embedded-example"

rustup target add thumbv7em-none-eabihf || { echo "the thumbv7em-none-eabihf target did not install"; exit 1; }
echo "building the firmware"
(cd "$firmware_dir" && cargo build --release --locked) || exit 1
(cd "$firmware_dir" && cargo clippy --release --locked -- -D warnings) || exit 1
(cd "$firmware_dir" && cargo fmt --check) || exit 1
if command -v llvm-size >/dev/null && command -v llvm-nm >/dev/null; then
    python3 "$firmware_dir/size-report.py" "$elf"
fi

if ! command -v qemu-system-arm >/dev/null; then
    sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo -n)
    echo "installing qemu-system-arm"
    if ! { "${sudo[@]}" apt-get update -qq && "${sudo[@]}" apt-get install -y -qq qemu-system-arm; } >/dev/null 2>&1 ||
        ! command -v qemu-system-arm >/dev/null; then
        echo "SKIPPED: qemu firmware run (qemu-system-arm could not be installed with apt-get)"
        exit 0
    fi
fi

log=$(mktemp)
trap 'rm -f "$log" "$log.transcript"' EXIT
echo "running the firmware under $(qemu-system-arm --version | head -1)"
timeout 300 qemu-system-arm -M mps2-an386 -nographic -monitor none \
    -semihosting-config enable=on,target=native -kernel "$elf" >"$log" 2>&1
status=$?
# The transcript lines are long JSON; show everything else.
sed '/^transcript begin$/,/^transcript end$/{/^{/d}' "$log"
failed=0
if [ "$status" != 0 ]; then
    echo "the firmware exited with status $status (124: the 300 s timeout)"
    failed=1
fi
if grep -q '^FAILED ' "$log"; then
    failed=1
fi
passed=$(grep -c '^ok ' "$log")
if ! grep -q "^$passed bodies passed" "$log"; then
    echo "the firmware did not report its summary line"
    failed=1
fi
sed -n '/^transcript begin$/,/^transcript end$/p' "$log" | sed '1d;$d' >"$log.transcript"
if ! grep -q '^transcript end$' "$log"; then
    echo "no transcript was printed"
    failed=1
elif ! diff -u "$expected" "$log.transcript" >/dev/null; then
    echo "the firmware's demo transcript differs from $expected:"
    diff -u "$expected" "$log.transcript" | head -20
    failed=1
else
    echo "the firmware's demo transcript equals the native executors' ($(wc -l <"$expected") lines)"
fi
[ "$failed" = 0 ] && echo "firmware on QEMU: $passed conformance bodies passed"
exit "$failed"
