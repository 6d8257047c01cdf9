#!/usr/bin/env python3
"""The report's prefetches are in the jitdump tool the build made.

usage: check_prefetches.py JITDUMP_TOOL

`jitdump report` asks for the slots and records of its large tables ahead of reading them
(flat_index.h, stack_table.h, sequence_sort.h). GCC 12 silently dropped such a prefetch once:
written as an out-of-line member function that does nothing else, it looked free of side
effects, and no prefetch instruction was left in the binary while the source still read as if
it prefetched. This disassembles the tool and fails when a function that should prefetch holds
no prefetch instruction. Exit 0 when every one does, 1 otherwise, 2 when it cannot check.
"""
import re
import subprocess
import sys

# Demangled function names (a prefix of objdump's label) and why each one prefetches.
EXPECTED = {
    "jitdump::report::ProfileReader::AddRaw(": "the raw frame cache's slots of a sample's frames",
    "jitdump::report::ProfileBuilder::Take(": "the stack records ahead of the one copied",
    "jitdump::report::StackTable::SortByPath(": "the stack records ahead in the sort's first key loop",
    "jitdump::report::StackTable::AddLater(": "the slot of the stack added at the next call",
}

LABEL = re.compile(r"^[0-9a-f]+ <(.*)>:$")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tool = sys.argv[1]
    try:
        proc = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", tool], capture_output=True, text=True)
    except FileNotFoundError:
        print("objdump not found: install binutils (Debian package binutils)")
        return 2
    if proc.returncode != 0:
        print(f"objdump {tool} failed (binutils): {proc.stderr.strip()}")
        return 2
    prefetches = {name: None for name in EXPECTED}  # None: the function was not found
    current = None
    for line in proc.stdout.splitlines():
        label = LABEL.match(line)
        if label:
            current = next((name for name in EXPECTED if label.group(1).startswith(name)), None)
            if current is not None and prefetches[current] is None:
                prefetches[current] = 0
            continue
        if current is not None and "\tprefetch" in line:
            prefetches[current] += 1
    failed = False
    for name, count in prefetches.items():
        if count is None:
            print(f"{name}...) is not in {tool}: inlined or renamed? (the check must see it to mean anything)")
            failed = True
        elif count == 0:
            print(f"{name}...) has no prefetch instruction: {EXPECTED[name]} are no longer asked for ahead")
            failed = True
        else:
            print(f"{name}...): {count} prefetch instruction(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
