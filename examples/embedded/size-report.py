#!/usr/bin/env python3
"""Flash of the firmware and each crate's share of it.

usage: size-report.py FIRMWARE_ELF

Prints `.text` and `.rodata` (llvm-size) and sums the sizes of the text and
read-only data symbols (llvm-nm) by the crate that defines them: the first
path of the demangled name, with `core::ptr::drop_in_place<T>` attributed
to `T`'s crate. Inlining moves code into its caller's crate, so the shares
are approximate; string literals and other anonymous constants have no
symbol and fall in "(unnamed)".
"""
import collections
import re
import subprocess
import sys


def legacy_demangle(name):
    """Finishes what llvm-nm -C leaves of legacy Rust names with generics."""
    name = name.removeprefix("_")
    for code, text in (("$LT$", "<"), ("$GT$", ">"), ("$u20$", " "), ("$RF$", "&"),
                       ("$BP$", "*"), ("$C$", ","), ("$u7b$", "{"), ("$u7d$", "}")):
        name = name.replace(code, text)
    return name.replace("..", "::")


def crate_of(name):
    name = legacy_demangle(name)
    name = re.sub(r"^core::ptr::drop_in_place<", "", name)
    name = name.lstrip("<&* ").removeprefix("mut ").removeprefix("dyn ")
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)::", name)
    return match.group(1) if match else "(other)"


def main():
    elf = sys.argv[1]
    sections = {}
    for line in subprocess.run(["llvm-size", "-A", elf], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit():
            sections[parts[0]] = int(parts[1])
    text, rodata = sections.get(".text", 0), sections.get(".rodata", 0)
    print(f".text {text} B, .rodata {rodata} B, flash (.vector_table + .text + .rodata) "
          f"{sections.get('.vector_table', 0) + text + rodata} B")
    shares = collections.Counter()
    named = collections.Counter()
    nm = subprocess.run(["llvm-nm", "-C", "--print-size", "--radix=d", elf],
                        capture_output=True, text=True, check=True).stdout
    for line in nm.splitlines():
        parts = line.split(None, 3)
        if len(parts) < 4 or parts[2].lower() not in ("t", "r"):
            continue
        kind = ".text" if parts[2].lower() == "t" else ".rodata"
        shares[(kind, crate_of(parts[3]))] += int(parts[1])
        named[kind] += int(parts[1])
    shares[(".rodata", "(unnamed)")] += rodata - named[".rodata"]
    shares[(".text", "(unnamed)")] += text - named[".text"]
    for kind, total in ((".text", text), (".rodata", rodata)):
        print(f"\n{kind} by crate:")
        rows = sorted(((v, c) for (k, c), v in shares.items() if k == kind and v), reverse=True)
        for size, crate in rows:
            print(f"  {crate:32} {size:8} B  {100 * size / max(total, 1):5.1f} %")


if __name__ == "__main__":
    main()
