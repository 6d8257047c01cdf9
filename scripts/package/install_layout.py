#!/usr/bin/env python3
"""Writes the installed copy of a script (perf-java, attach, collect, hotspot-view): the same file
with its one line marked `install-layout` pointing at the installed jitdump tool instead of the
build tree's. The scripts ask the tool where the agent is (`jitdump agent-path`).

  install_layout.py INPUT OUTPUT --bindir DIR --tool FILE

DIR, FILE: absolute install paths (prefix included, DESTDIR not). The marked line holds the
path relative to the script's own directory, as the checkout's copy does for build/, so the
installed tree works under any --prefix, from any DESTDIR, and when moved as a whole.
"""

import argparse
import os
import sys

MARKER = "install-layout"
CHECKOUT_TOOL = "../../build/jitdump/tool/jitdump"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--bindir", required=True)
    parser.add_argument("--tool", required=True)
    args = parser.parse_args(argv)

    with open(args.input, encoding="utf-8") as f:
        lines = f.read().split("\n")
    marked = [i for i, line in enumerate(lines) if MARKER in line and not line.lstrip().startswith("#")]
    if len(marked) != 1:
        sys.exit(f"{args.input}: expected exactly one code line marked '{MARKER}', found {len(marked)}")
    line = lines[marked[0]]
    if line.count(CHECKOUT_TOOL) != 1:
        sys.exit(f"{args.input}:{marked[0] + 1}: the '{MARKER}' line must name {CHECKOUT_TOOL} once")
    line = line.replace(CHECKOUT_TOOL, os.path.relpath(args.tool, args.bindir))
    lines[marked[0]] = line

    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.chmod(args.output, 0o755)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
