# Sourced by the pi-ai checks (.ci/models-catalogue.sh, .ci/pi-ai-payloads.sh):
# copies the oracle's package files and the given scripts under
# $target/pi-ai-oracle, `npm ci`s pi-ai 0.73.1 there when its lockfile
# changed, and leaves the shell in that folder with $work set.
# Needs $root and $target; arguments: files of oracle/pi-ai/ to copy along.
work="$target/pi-ai-oracle"
mkdir -p "$work"
cp "$root/oracle/pi-ai/package.json" "$root/oracle/pi-ai/package-lock.json" "$work/"
for file in "$@"; do
    cp "$root/oracle/pi-ai/$file" "$work/"
done
cd "$work"
if [[ ! -d node_modules/@mariozechner/pi-ai ]] ||
    ! cmp -s package-lock.json node_modules/.package-lock.json.copy; then
    npm ci --no-audit --no-fund --ignore-scripts
    cp package-lock.json node_modules/.package-lock.json.copy
fi
