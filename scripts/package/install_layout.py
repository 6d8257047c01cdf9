#!/usr/bin/env python3
"""Writes the installed copy of a script (perf-java, attach, collect): the same file with its one
line marked `install-layout` pointing at the installed agent and/or jitdump tool instead of the
build tree.

  install_layout.py INPUT OUTPUT --bindir DIR --agent FILE --tool FILE

DIR, FILE: absolute install paths (prefix included, DESTDIR not). The marked line holds the
paths relative to the script's own directory, as the checkout's copy does for build/, so the
installed tree works under any --prefix, from any DESTDIR, and when moved as a whole.
"""

import argparse
import os
import sys

MARKER = "install-layout"
CHECKOUT_AGENT = "../../build/agent/libjitdumpagent.so"
CHECKOUT_TOOL = "../../build/jitdump/tool/jitdump"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--bindir", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--tool", required=True)
    args = parser.parse_args(argv)

    with open(args.input, encoding="utf-8") as f:
        lines = f.read().split("\n")
    marked = [i for i, line in enumerate(lines) if MARKER in line and not line.lstrip().startswith("#")]
    if len(marked) != 1:
        sys.exit(f"{args.input}: expected exactly one code line marked '{MARKER}', found {len(marked)}")
    line = lines[marked[0]]
    named = [(checkout, installed) for checkout, installed in
             ((CHECKOUT_AGENT, args.agent), (CHECKOUT_TOOL, args.tool)) if checkout in line]
    if not named or any(line.count(checkout) != 1 for checkout, _ in named):
        sys.exit(f"{args.input}:{marked[0] + 1}: the '{MARKER}' line must name {CHECKOUT_AGENT}, "
                 f"{CHECKOUT_TOOL} or both, each once")
    for checkout, installed in named:
        line = line.replace(checkout, os.path.relpath(installed, args.bindir))
    lines[marked[0]] = line

    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    os.chmod(args.output, 0o755)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
