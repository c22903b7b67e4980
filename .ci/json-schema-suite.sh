#!/usr/bin/env bash
# Runs the official JSON-Schema-Test-Suite files for the keywords the
# agent's argument validator supports (crates/agentstream/tests/
# json_schema_suite.rs). The suite is not kept in the repository: it comes
# from the source distribution of the `jsonschema` package on PyPI, which
# ships a copy of it under json/tests. Prints SKIPPED (and succeeds) when
# the package cannot be fetched.
set -uo pipefail
cd "$(dirname "$0")/.."
version=4.26.0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! python3 -m pip download --quiet --no-deps --no-binary :all: -d "$work" "jsonschema==$version"; then
    echo "SKIPPED: JSON-Schema-Test-Suite (could not download the jsonschema $version sdist)"
    exit 0
fi
if ! tar -xzf "$work/jsonschema-$version.tar.gz" -C "$work" "jsonschema-$version/json/tests/draft2020-12"; then
    echo "SKIPPED: JSON-Schema-Test-Suite (the sdist has no json/tests/draft2020-12)"
    exit 0
fi
AGENTSTREAM_JSON_SCHEMA_SUITE="$work/jsonschema-$version/json/tests/draft2020-12" \
    cargo test -p agentstream --test json_schema_suite -- --nocapture
