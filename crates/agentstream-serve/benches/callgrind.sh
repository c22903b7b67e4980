#!/bin/sh
# Server-alone instructions per call of `agentstream serve` beside a bare
# hyper server, as benches/RESULTS.md ("Issue 37's targets") reports them.
#
# The server runs under callgrind (the bench binary with
# AGENTSTREAM_SERVE_BENCH_SERVE, its standard input a FIFO held open
# until the calls end); the client runs natively
# (AGENTSTREAM_SERVE_BENCH_CLIENT), so only the server's instructions are
# counted. Each figure is (instructions at LONG calls - at SHORT calls) /
# (LONG - SHORT): start-up and shut-down cancel out.
#
# Usage: crates/agentstream-serve/benches/callgrind.sh [APIS] [SERVERS] [CLIENTS]
#   defaults: "openai anthropic" "bare ours rules" "1 50"
# Build first: cargo bench -p agentstream-serve --bench serve --no-run
# Not part of CI (it takes minutes under valgrind).
set -eu

apis=${1:-"openai anthropic"}
servers=${2:-"bare ours rules"}
clients_list=${3:-"1 50"}
short=${SHORT:-500}
long=${LONG:-2500}

. "$(dirname "$0")/alone.sh"

# Instructions the server spends for $4 calls: API $1, server $2, $3 clients.
count() {
    out="$work/callgrind.out"
    rm -f "$out"
    start_server "$1" "$2" valgrind --tool=callgrind --callgrind-out-file="$out"
    make_calls "$1" "$3" "$4"
    stop_server
    sed -n 's/^summary: //p;s/^totals: //p' "$out" | head -n 1
}

printf '%-10s %-6s %7s %12s\n' api server clients instr/call
for api in $apis; do
    for clients in $clients_list; do
        for server in $servers; do
            low=$(count "$api" "$server" "$clients" "$short")
            high=$(count "$api" "$server" "$clients" "$long")
            printf '%-10s %-6s %7s %12s\n' "$api" "$server" "$clients" \
                "$(( (high - low) / (long - short) ))"
        done
    done
done
