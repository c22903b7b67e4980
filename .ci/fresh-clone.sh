#!/usr/bin/env bash
# The README's two commands ("run the main job" and "run the tests", read
# from its Commands table) in a fresh clone of the repository's HEAD,
# placed in a temporary folder with nothing beside it (no ../shared), as a
# new user gets it. What this catches is a file the repo lacks (a test or
# a build reading something outside it), not a cold build: by default the
# clone builds into the main target directory, so only what changed is
# rebuilt.
#
# usage: bash .ci/fresh-clone.sh [--cold]
#   --cold  build in a fresh target directory instead (the first-hour cost
#           a new user pays; several minutes), and report each command's
#           wall time and peak RSS (GNU time, when /usr/bin/time exists).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cold=0
case ${1:-} in
--cold) cold=1 ;;
"") ;;
*)
    echo "usage: bash .ci/fresh-clone.sh [--cold]" >&2
    exit 2
    ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
clone="$work/agentstream"
git clone --quiet --no-hardlinks "$root" "$clone" || exit 1
if [ -e "$work/shared" ] || [ -e "$clone/../shared" ]; then
    echo "the fresh clone has a ../shared beside it: $work" >&2
    exit 1
fi
if [ "$cold" = 1 ]; then
    target="$work/target"
else
    target="${CARGO_TARGET_DIR:-$root/target}"
fi

# readme_command WHAT: the command in the README's Commands table row
# whose first cell is WHAT (or starts with it, before a parenthesis).
readme_command() {
    awk -v what="$1" -F '|' '
        {
            cell = $2
            gsub(/^ +| +$/, "", cell)
            sub(/ \(.*$/, "", cell)
            if (cell == what) {
                command = $3
                gsub(/^ *`|` *$/, "", command)
                print command
                exit
            }
        }' "$clone/README.md"
}

status=0
for what in "run the main job" "run the tests"; do
    command=$(readme_command "$what")
    echo "--- $what: $command"
    if [ -z "$command" ]; then
        echo "FAILED: README.md's Commands table has no row \"$what\""
        status=1
        continue
    fi
    timing=()
    if [ "$cold" = 1 ] && [ -x /usr/bin/time ]; then
        timing=(/usr/bin/time -f "$what: %e s wall, %U s user + %S s system CPU, %M KiB peak RSS (largest process), exit %x" --)
    fi
    # The README's commands are run as it gives them, from the clone's root.
    if (cd "$clone" && CARGO_TARGET_DIR="$target" "${timing[@]}" bash -c "$command"); then
        echo "ok: $what"
    else
        echo "FAILED: $what (in a fresh clone at $clone, no ../shared beside it)"
        status=1
    fi
done
exit "$status"
