#!/usr/bin/env python3
"""Writes a section-1 man page from a command's own --help text, so the two never disagree.

  man_page.py --name NAME --summary TEXT --version V [--include FILE] [--set VAR=VALUE ...]
              OUTPUT -- COMMAND...

The --help text goes into DESCRIPTION verbatim (no-fill, as the terminal shows it): our help
texts list subcommands and options in aligned columns that help2man's heuristics run together.
--include adds hand-written sections (roff: ENVIRONMENT, FILES, SEE ALSO) in which @VAR@ is
replaced by the --set values. COMMAND runs with those VAR=VALUE in its environment too, so a
script's --help shows the installed paths rather than the build directory's.
The date is $SOURCE_DATE_EPOCH's when set (reproducible package builds), else today's.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys


def roff_text(line):
    """One line of literal text: backslashes and hyphens escaped, no control line."""
    line = line.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + line if line.startswith((".", "'")) else line


def main(argv):
    if "--" not in argv:
        sys.exit("man_page.py: missing -- before the command")
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--include")
    parser.add_argument("--set", action="append", default=[], metavar="VAR=VALUE")
    parser.add_argument("output")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]

    values = dict(item.split("=", 1) for item in args.set)
    env = dict(os.environ, LC_ALL="C.UTF-8", **values)
    for legacy in ("PERF_JAVA_AGENT", "PERF_JAVA_JITDUMP"):
        env.pop(legacy, None)
    result = subprocess.run(command + ["--help"], env=env, capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout.strip():
        sys.exit(f"man_page.py: {' '.join(command)} --help failed (exit {result.returncode}): {result.stderr}")
    if result.stderr:
        # A help text that writes to stderr lost part of itself on the way (a shell expansion in
        # an unquoted here-document, say): the page would carry the gap.
        sys.exit(f"man_page.py: {' '.join(command)} --help wrote to stderr: {result.stderr}")

    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch
            else datetime.datetime.now(datetime.timezone.utc))
    page = [
        f'.TH {args.name.upper()} 1 "{when:%Y-%m-%d}" "libjitdumpagent {args.version}" "User Commands"',
        ".SH NAME",
        f"{args.name} \\- {args.summary}",
        ".SH DESCRIPTION",
        ".nf",
    ]
    page += [roff_text(line) for line in result.stdout.rstrip("\n").split("\n")]
    page.append(".fi")
    if args.include:
        with open(args.include, encoding="utf-8") as f:
            extra = f.read()
        extra = re.sub(r"@([A-Z_]+)@", lambda m: "\\%" + values[m.group(1)], extra)
        page.append(extra.rstrip("\n"))

    with open(args.output, "w", encoding="utf-8") as f:
        f.write("\n".join(page) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
