#!/usr/bin/env python3
"""Checks the figures README.md states against what the code and this CI
run measure, and fails when one has drifted.

usage: readme_figures.py [LOG_DIR]

Counts (conformance bodies, agent scenarios) are read from the test kit's
lists and must match exactly. Sizes and heap peaks are read from the logs
CI just wrote into LOG_DIR (`embedded.log` from .ci/hosts-embedded.sh,
`wasm.log` from .ci/hosts-wasm.sh) and must lie within TOLERANCE of the
README's; a log that is missing (its check was skipped) is reported and
its figures are not checked. Every figure is printed, README beside
measured.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOLERANCE = 0.10  # sizes and heap peaks; counts are exact

failures = []


def number(text):
    return int(text.replace(",", ""))


def check(what, stated, measured, exact):
    """Prints one figure and records a failure when it drifted."""
    if exact:
        ok = stated == measured
        rule = "exact"
    else:
        ok = abs(stated - measured) <= TOLERANCE * measured
        rule = f"within {TOLERANCE:.0%}"
    verdict = "ok" if ok else "DRIFTED"
    print(f"{verdict:8} {what}: README {stated:,}, measured {measured:,} ({rule})")
    if not ok:
        failures.append(what)


def macro_list(*names):
    """The identifiers the first of NAMES that holds a literal list
    (`macro_rules! NAME { ... $callback! { a, b, ... } }`) lists, in the
    test kit or the core's scenario module."""
    places = [ROOT / "crates/agentstream-testkit/src", ROOT / "crates/agentstream/tests"]
    sources = [path.read_text() for place in places for path in sorted(place.rglob("*.rs"))]
    for name in names:
        for source in sources:
            pattern = r"macro_rules! " + name + r" \{\s*\(\$callback:ident\) => \{\s*\$callback! \{(.*?)\}"
            match = re.search(pattern, source, re.S)
            if match:
                return re.findall(r"\b([a-z_][a-z0-9_]*)\s*,", match.group(1))
    sys.exit(f"no list in the macros {', '.join(names)}")


def table_row(readme, start, section):
    """The cells of the first table row starting with START after SECTION."""
    after = readme[readme.index(section):]
    for line in after.splitlines():
        if line.startswith(start):
            return [cell.strip() for cell in line.strip().strip("|").split("|")]
    sys.exit(f"README: no row starting with {start!r} under {section!r}")


def counts(readme):
    bodies = len(macro_list("for_each_body"))
    scenarios = len(macro_list("for_each_agent_body", "for_each_agent_scenario"))
    golden = len(list((ROOT / "crates/agentstream/tests/golden/pi").glob("*.jsonl")))
    check("Pi oracle transcripts beside the agent scenarios", golden, scenarios, True)
    patterns = [
        (r"(\d+)\s+agent\s+scenarios", scenarios),
        (r"(\d+)\s+scripted\s+scenarios", scenarios),
        (r"(\d+)\s+Pi\s+transcripts", scenarios),
        (r"the (\d+)\s+of\s+`for_each_body!`", bodies),
        (r"the (\d+)\s+conformance\s+bodies", bodies),
        (r"all (\d+)\s+conformance bodies", bodies + scenarios),
        (r"demo \+ (\d+) bodies", bodies + scenarios),
    ]
    for pattern, measured in patterns:
        for match in re.finditer(pattern, readme):
            check(f"README {' '.join(match.group(0).split())!r}", number(match.group(1)), measured, True)


def embedded(readme, log):
    section = "## Embedded"
    sizes = re.search(r"^\.text (\d+) B, \.rodata (\d+) B", log, re.M)
    if sizes:
        flash = table_row(readme, "| flash:", section)[2]
        stated = [number(n) for n in re.findall(r"[\d,]+", flash)]
        text, rodata = int(sizes.group(1)), int(sizes.group(2))
        check("firmware .text", stated[0], text, False)
        check("firmware .rodata", stated[1], rodata, False)
        check("firmware flash (.text + .rodata)", stated[2], text + rodata, False)
    else:
        print("not measured: firmware sizes (no size report in embedded.log)")
    demo = re.search(r"^demo heap peak: (\d+) bytes", log, re.M)
    if demo:
        row = table_row(readme, "| heap high-water mark of the demo", section)
        for column, cell in zip(("demo-only", "CI firmware"), row[1:]):
            check(f"firmware demo heap peak ({column} column)", number(cell), int(demo.group(1)), False)
    else:
        print("not measured: the demo's heap peak (no firmware run in embedded.log)")
    peaks = [int(n) for n in re.findall(r"^ok \S+ \(heap peak (\d+) bytes\)", log, re.M)]
    if peaks:
        stated = re.search(r"largest heap peak of a body is ([\d,]+) bytes", readme)
        if stated:
            check("firmware largest body heap peak", number(stated.group(1)), max(peaks), False)
        passed = re.search(r"^(\d+) bodies passed", log, re.M)
        if passed:
            stated = re.search(r"demo \+ (\d+) bodies", readme)
            check("firmware bodies passed", number(stated.group(1)), int(passed.group(1)), True)


def wasm(readme, log):
    section = "## WebAssembly"
    row = table_row(readme, "| tuned for size", section)
    pairs = [[number(n) for n in re.findall(r"[\d,]+", cell)] for cell in row[1:3]]
    plain = re.search(r"after wasm-bindgen, no wasm-opt: (\d+) bytes, (\d+) gzipped", log)
    if plain:
        check("wasm after wasm-bindgen", pairs[0][0], int(plain.group(1)), False)
        check("wasm after wasm-bindgen, gzipped", pairs[0][1], int(plain.group(2)), False)
    else:
        print("not measured: the .wasm size (no size line in wasm.log)")
    opt = re.search(r"then wasm-bindgen: (\d+) bytes, (\d+) gzipped", log)
    if opt:
        check("wasm after wasm-opt -Oz", pairs[1][0], int(opt.group(1)), False)
        check("wasm after wasm-opt -Oz, gzipped", pairs[1][1], int(opt.group(2)), False)
    else:
        print("not measured: the wasm-opt size (no wasm-opt line in wasm.log)")


def main():
    readme = (ROOT / "README.md").read_text()
    logs = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
    counts(readme)
    for name, checker in (("embedded.log", embedded), ("wasm.log", wasm)):
        path = logs / name if logs else None
        if path and path.exists():
            checker(readme, path.read_text(errors="replace"))
        else:
            print(f"not measured: {name} (its check did not run)")
    if failures:
        print(f"{len(failures)} README figures drifted: {', '.join(failures)}")
        return 1
    print("every checked README figure holds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
