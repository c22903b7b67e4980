# Shared by callgrind.sh and cpu.sh (sourced, not run): the bench binary,
# and one of its servers run alone in its own process, its standard input
# a FIFO held open until the calls end.

root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=$(ls -t "$root"/target/release/deps/serve-* 2>/dev/null | grep -v '\.d$' | head -n 1)
[ -x "$bin" ] || { echo "no bench binary: run cargo bench -p agentstream-serve --bench serve --no-run" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Starts server $2 of API $1 alone, under the command given after them
# (none: natively); sets $server (its pid) and $address.
start_server() {
    api=$1 name=$2
    shift 2
    rm -f "$work/in" "$work/address"
    mkfifo "$work/in"
    AGENTSTREAM_SERVE_BENCH_SERVE="$api/$name" "$@" "$bin" --bench <"$work/in" >"$work/address" 2>"$work/server.log" &
    server=$!
    exec 3>"$work/in"
    while ! grep -q : "$work/address" 2>/dev/null; do
        kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
        sleep 0.1
    done
    address=$(head -n 1 "$work/address")
}

# Makes $3 calls of API $1 to the started server with $2 clients.
make_calls() {
    AGENTSTREAM_SERVE_BENCH_CLIENT="$1/$address/$2/$3" "$bin" --bench >/dev/null
}

# Ends the started server (its standard input closes) and waits for it.
stop_server() {
    exec 3>&-
    wait "$server"
}
