"""Oversized and special config= files (issue #13, item 10).

Before the fix a 100 MB valid file was cut at about 1 MiB and failed on a half line with no word
of its size, a 100 MB random file printed 6,173 error lines, config=/proc/kmsg consumed kernel
log messages and config=/proc/self/mem read as empty without a word.

Each case runs the workload with `config=FILE,dir=OUT` and expects: the JVM exits 0 with its
output intact; one error line naming the file and the reason (the size limit of 1 MiB; a /proc
or /sys file; not a regular file), then the one "agent is disabled" line; OUT never created.
A file of 50 bad lines gives its first 10 errors and one "40 more errors not shown" line. A file
of exactly 1 MiB (comments and one valid option) is read and used: the agent writes its dump.
"""
import os

import pytest

from support.checks import check, log
from support.output import agent_lines, dumps_in
from support.prereq import require_root

ROUNDS = 2000
LIMIT = 1 << 20


@pytest.mark.meson(every_jdk=True)
def test_config_files(ctx) -> None:
    require_root("reading /proc/kmsg needs CAP_SYSLOG (the agent must refuse it before reading)")
    expected = ctx.expected_output(ROUNDS)
    big = ctx.work / "big.conf"
    line = b"names=simple\n"
    big.write_bytes(line * (2 * LIMIT // len(line)))
    noise = ctx.work / "noise.conf"
    noise.write_text("".join(f"bogus{i}=1\n" for i in range(50)))
    directory = ctx.work / "a-directory"
    directory.mkdir()
    cases = (
        ("2 MiB file", big, ["over the limit of 1048576 bytes (1 MiB)"]),
        ("/proc/self/mem", "/proc/self/mem", ["a /proc or /sys file"]),
        ("/proc/kmsg", "/proc/kmsg", ["a /proc or /sys file"]),
        ("a directory", directory, ["not a regular file"]),
    )
    for n, (what, path, reasons) in enumerate(cases):
        lines = run_disabled(ctx, expected, what, path, ctx.work / f"out-{n}")
        check(len(lines) == 2 and f"cannot read config file '{path}'" in lines[0] and
              all(r in lines[0] for r in reasons) and "disabled" in lines[1],
              f"{what}: expected one error naming the file and {reasons}, then the disabled line", "\n".join(lines))
    lines = run_disabled(ctx, expected, "50 bad lines", noise, ctx.work / "out-noise")
    check(len(lines) == 12 and all(f"in {noise}" in line for line in lines[:11]) and "bogus0" in lines[0]
          and "40 more errors not shown" in lines[10] and "disabled" in lines[11],
          "50 bad lines: expected 10 errors, one 'more errors' line and the disabled line", "\n".join(lines))

    exact = ctx.work / "exact.conf"
    body = b"names=simple\n"
    exact.write_bytes(body + b"#" * (LIMIT - len(body) - 1) + b"\n")
    check(exact.stat().st_size == LIMIT, "the 1 MiB file is not 1 MiB")
    out = ctx.work / "out-exact"
    r = ctx.run_java(f"config={exact},dir={out}", "Work", ROUNDS)
    stderr = r.stderr.decode(errors="replace")
    check(r.returncode == 0 and agent_lines(stderr) == [], "a config file of exactly 1 MiB must be used", stderr)
    check(len(dumps_in(out)) == 1, "a config file of exactly 1 MiB: no dump written")
    log("config files: over 1 MiB, /proc/self/mem, /proc/kmsg and a directory refused with one line each; "
        "50 errors capped at 10 + 1; exactly 1 MiB read")


def run_disabled(ctx, expected, what, path, out) -> list:
    r = ctx.run_java(f"config={path},dir={out}", "Work", ROUNDS, timeout=60)
    stderr = r.stderr.decode(errors="replace")
    check(r.returncode == 0, f"{what}: JVM exit {r.returncode}", stderr)
    check(r.stdout.decode().splitlines()[:1] == expected[:1], f"{what}: program output changed", stderr)
    check(not os.path.exists(out), f"{what}: the disabled agent created {out}")
    return agent_lines(stderr)
