#!/bin/sh
# Server CPU time per call of `agentstream serve` beside a bare hyper
# server: the server process's user + system time (from /proc/PID/stat)
# while a client process makes the calls, per call, in interleaved rounds;
# the median of each server's rounds, and ours / bare. This is what
# issue 37's "server CPU per call" reads; callgrind.sh counts the
# server's user-space instructions alone.
#
# Usage: crates/agentstream-serve/benches/cpu.sh [APIS] [SERVERS] [CLIENTS]
#   defaults: "openai anthropic" "bare ours rules" "1 50"
#   ROUNDS (default 5) rounds of CALLS (default 100000) calls each.
# Build first: cargo bench -p agentstream-serve --bench serve --no-run
# Linux only (/proc); run it on an otherwise idle machine. Not part of CI.
set -eu

apis=${1:-"openai anthropic"}
servers=${2:-"bare ours rules"}
clients_list=${3:-"1 50"}
rounds=${ROUNDS:-5}
calls=${CALLS:-100000}

. "$(dirname "$0")/alone.sh"
tick=$(getconf CLK_TCK)

# The server's user + system clock ticks in /proc/$1/stat.
ticks() {
    # The name (field 2) may hold spaces: count from after its ')'.
    sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

# Nanoseconds of server CPU per call: API $1, server $2, $3 clients.
per_call() {
    start_server "$1" "$2"
    before=$(ticks "$server")
    make_calls "$1" "$3" "$calls"
    after=$(ticks "$server")
    stop_server
    echo $(( (after - before) * 1000000000 / tick / calls ))
}

median() {
    tr ' ' '\n' | grep . | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

printf '%-10s %7s %-6s %12s %8s  %s\n' api clients server ns/call /bare rounds
for api in $apis; do
    for clients in $clients_list; do
        all=""
        for round in $(seq "$rounds"); do
            for server in $servers; do
                all="$all $server=$(per_call "$api" "$server" "$clients")"
            done
        done
        bare=""
        for server in $servers; do
            these=$(echo "$all" | tr ' ' '\n' | sed -n "s/^$server=//p" | tr '\n' ' ')
            mid=$(echo "$these" | median)
            [ "$server" = bare ] && bare=$mid
            ratio=$( [ -n "$bare" ] && awk -v a="$mid" -v b="$bare" 'BEGIN {printf "%.2f", a / b}' || echo -)
            printf '%-10s %7s %-6s %12s %8s  %s\n' "$api" "$clients" "$server" "$mid" "$ratio" "$these"
        done
    done
done
