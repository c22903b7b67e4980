#!/usr/bin/env bash
# The README's two commands ("run the main job" and "run the tests", read
# from its Commands table) in a fresh clone of the repository's HEAD
# (committed work only), in a folder with nothing beside it (no
# ../shared), as a new user gets it. What this catches is a file the repo
# lacks (a test or a build reading something outside it), not a cold
# build: by default the clone builds into the main target directory, and
# it is kept between runs at one path outside the repo
# (${TMPDIR:-/tmp}/agentstream-fresh-clone-N/agentstream), brought to HEAD
# with checkout and `git clean -ffdx`, so its files are exactly a fresh
# clone's and only the files that changed are newer: cargo rebuilds only
# what changed, and the target directory does not gain a new copy of the
# workspace's crates on every run (a new path is a new package to cargo).
#
# usage: bash .ci/fresh-clone.sh [--cold]
#   --cold  clone into a new temporary folder and build in a fresh target
#           directory (the first-hour cost a new user pays; several
#           minutes), and report each command's wall time, CPU time and
#           peak RSS (GNU time, when /usr/bin/time exists).
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

if [ "$cold" = 1 ]; then
    base=$(mktemp -d)
    trap 'rm -rf "$base"' EXIT
    target="$base/target"
else
    base="${TMPDIR:-/tmp}/agentstream-fresh-clone-$(printf %s "$root" | cksum | cut -d ' ' -f 1)"
    target="${CARGO_TARGET_DIR:-$root/target}"
fi
clone="$base/agentstream"
if ! {
    [ "$cold" = 0 ] && [ -d "$clone/.git" ] &&
        git -C "$clone" fetch --quiet "$root" HEAD &&
        git -C "$clone" checkout --quiet --force --detach FETCH_HEAD &&
        git -C "$clone" clean --quiet -ffdx
}; then
    rm -rf "$clone"
    mkdir -p "$base"
    git clone --quiet --no-hardlinks "$root" "$clone" || exit 1
fi
echo "fresh clone of $(git -C "$clone" rev-parse --short HEAD) at $clone"
for beside in "$base"/*; do
    if [ "$beside" != "$clone" ] && [ "$beside" != "$target" ]; then
        echo "the fresh clone has something beside it: $beside" >&2
        exit 1
    fi
done

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
