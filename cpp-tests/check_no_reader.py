#!/usr/bin/env python3
"""The agent carries no code of the jitdump read half.

usage: check_no_reader.py AGENT_SO READ_LIBRARY JITDUMP_TOOL

Reader symbols are the strong symbols (functions, data) in namespace jitdump that the read
library READ_LIBRARY (libjitdump_read.a) defines, taken from the library itself so the list
cannot go stale. The agent's whole symbol table (nm without -D: local and hidden symbols too,
which is where a statically linked reader would show) must hold none of them. The jitdump tool,
which links the reader, must show them: that proves the check sees what it looks for. Exit 0
when the agent is clean, 1 otherwise (with the offending symbols), 2 when it cannot check.
"""
import subprocess
import sys

STRONG = set("TtDdRrBb")  # weak (W, V) and unique (u) symbols are template/inline copies


def defined_symbols(path):
    """{demangled name: nm type} of every symbol defined in `path` (its full symbol table)."""
    proc = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"nm {path} failed: {proc.stderr.strip()}")
        sys.exit(2)
    symbols = {}
    for line in proc.stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and len(parts[1]) == 1:
            symbols[parts[2]] = parts[1]
    return symbols


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    agent, read_library, tool = sys.argv[1:]
    reader = {name for name, kind in defined_symbols(read_library).items()
              if kind in STRONG and name.startswith("jitdump::")}
    if len(reader) < 20 or not any(name.startswith("jitdump::Parse(") for name in reader):
        print(f"{read_library} defines only {len(reader)} jitdump:: symbols (no jitdump::Parse?): "
              "not the read library")
        return 2
    in_tool = reader & defined_symbols(tool).keys()
    if not any(name.startswith("jitdump::Parse(") for name in in_tool):
        print(f"the tool {tool} links the reader, but its symbol table shows no jitdump::Parse: "
              "this check cannot see reader code (stripped binaries?)")
        return 2
    agent_symbols = defined_symbols(agent)
    if not any(name.startswith("jitdump::") for name in agent_symbols):
        print(f"{agent} has no jitdump:: symbol in its symbol table (the write half is always there): "
              "stripped? nothing can be checked")
        return 2
    found = sorted(reader & agent_symbols.keys())
    if found:
        print(f"{len(found)} reader symbols in {agent}:")
        for name in found[:40]:
            print("  " + name)
        return 1
    print(f"no reader code in the agent: none of the {len(reader)} reader symbols among its "
          f"{len(agent_symbols)} symbols ({len(in_tool)} of them found in the tool)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
