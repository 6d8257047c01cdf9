#!/usr/bin/env python3
"""Each user-facing command's --help: exit 0, the text on stdout, nothing on stderr, and nothing run.

  check_help.py COMMAND...

A help text is printed, never executed: every COMMAND's --help runs twice, once with a PATH that
holds a `jitdump` (and a `perf`, `jcmd`, `java`) that announce themselves when run, once with a PATH
that holds none of them. A here-document that expands `jitdump report` as a command shows up as the
announcement in the first run and as "command not found" on stderr in the second; either fails.
The man pages are made from these texts (man_page.py), so they carry whatever this lets through.
"""
import os
import subprocess
import sys
import tempfile

MARK = "RAN-FROM-HELP-TEXT"


def main(commands):
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        loud = os.path.join(tmp, "loud")
        os.mkdir(loud)
        for name in ("jitdump", "perf", "jcmd", "java", "jattach"):
            path = os.path.join(loud, name)
            with open(path, "w") as f:
                f.write(f"#!/bin/sh\necho {MARK} {name}\necho {MARK} {name} >&2\n")
            os.chmod(path, 0o755)
        system = "/usr/bin:/bin"
        for command in commands:
            for label, path in (("tools on PATH", f"{loud}:{system}"), ("no tools on PATH", system)):
                env = dict(os.environ, PATH=path, LC_ALL="C.UTF-8")
                r = subprocess.run([command, "--help"], env=env, capture_output=True, text=True, timeout=30)
                what = f"{os.path.basename(command)} --help ({label})"
                if r.returncode != 0:
                    failures.append(f"{what}: exit {r.returncode}")
                if not r.stdout.strip():
                    failures.append(f"{what}: no text on stdout")
                if r.stderr:
                    failures.append(f"{what}: wrote to stderr: {r.stderr.strip()[:500]}")
                if MARK in r.stdout:
                    failures.append(f"{what}: ran a command while printing its help: {r.stdout.strip()[:500]}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(commands)} commands, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
