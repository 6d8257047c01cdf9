"""Untrusted text in paths never reaches the terminal raw (issue #13, item 7).

`dir=`, `perfmap=` and `stats=` name paths the agent cannot use (under /proc, where nothing can
be created), each carrying a terminal escape sequence, a line feed followed by a forged agent
line, and bytes that are not UTF-8. The agent's messages about them must show every such byte
escaped (as `\\xNN`): no ESC or other control byte on stderr, no forged line, no raw non-ASCII
byte, and the path still recognisable in the message. The JVM runs its workload to the end.
"""
import pytest

from support.checks import check, log
from support.output import agent_lines

ROUNDS = 3000
HOSTILE = b"/proc/\x1b[31mred\x1b[0m\nFAKE: all good\xff\xfe"
ESCAPED = "/proc/\\x1b[31mred\\x1b[0m\\x0aFAKE: all good\\xff\\xfe"


@pytest.mark.meson(every_jdk=True)
def test_escaped_paths(ctx) -> None:
    expected = ctx.expected_result(ROUNDS)
    cases = {
        "dir": (b"dir=" + HOSTILE, "cannot create output directory"),
        "perfmap": (b"dir=" + str(ctx.work / "out-perfmap").encode() + b",perfmap=" + HOSTILE,
                    "cannot create perf map in"),
        "stats": (b"dir=" + str(ctx.work / "out-stats").encode() + b",stats=" + HOSTILE + b"/stats.json",
                  "cannot write stats to"),
    }
    for what, (options, message) in cases.items():
        r = ctx.run_java(options, "Work", str(ROUNDS))
        check(r.returncode == 0, f"{what}: JVM exit {r.returncode}", r.stderr.decode(errors="replace"))
        check(r.stdout.decode().splitlines()[:1] == [expected], f"{what}: program output changed",
              r.stderr.decode(errors="replace"))
        raw = r.stderr
        check(b"\x1b" not in raw, f"{what}: a terminal escape reached stderr raw: {raw!r}")
        check(not any(b >= 0x80 for b in raw), f"{what}: a byte that is not ASCII reached stderr raw: {raw!r}")
        lines = raw.decode("ascii").splitlines()
        check(not any(line.startswith("FAKE") for line in lines), f"{what}: a forged line reached stderr: {lines}")
        ours = agent_lines(raw)
        named = [line for line in ours if message in line]
        check(len(named) == 1, f"{what}: expected one '{message}' line, got {ours}")
        check(ESCAPED in named[0], f"{what}: the path is not shown escaped: {named[0]!r} (wanted {ESCAPED!r})")
        log(f"{what}: {named[0]}")
