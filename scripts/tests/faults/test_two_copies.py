"""Two copies of the library in one JVM (issue #13, item 5).

A sidecar injects JAVA_TOOL_OPTIONS=-agentpath:/copy/libjitdumpagent.so=... while the
application has its own -agentpath to the original: two files, so the dynamic linker loads two
copies, each with its own globals. Before the fix both ran, the second deleted the first's dump
as "stale", and both stats claimed nothing lost.

Expected: exactly one copy runs; the other prints one warning (another copy already runs; this
one stays inactive) and touches no file: its dir= is never created, its stats file never
written. The running copy's dump is valid, closed, holds what its stats count as written, nothing
lost. The JVM exits 0 with its output intact. Then a late attach of the copy (scripts/bin/attach
--force) into a JVM running the original: the same warning on the JVM's stderr, nothing of the
copy's options created, scripts/bin/attach exits non-zero saying the options were not applied.
"""
import shutil
import subprocess

import pytest

from support.checks import check, log
from support.jvm import wait_line
from support.output import agent_lines, dumps_in, read_stats

ROUNDS = 3000
INACTIVE = "another copy of libjitdumpagent already runs in this JVM"


@pytest.mark.meson(every_jdk=True)
def test_two_copies(ctx) -> None:
    expected = ctx.expected_output(ROUNDS)
    copy = ctx.work / "copy" / "libjitdumpagent.so"
    copy.parent.mkdir()
    shutil.copy(ctx.agent, copy)
    out_app, out_sidecar = ctx.work / "app", ctx.work / "sidecar"
    stats_app, stats_sidecar = ctx.work / "app-stats.json", ctx.work / "sidecar-stats.json"
    r = ctx.run_java(f"dir={out_app},stats={stats_app}", "Work", ROUNDS,
                     env={"JAVA_TOOL_OPTIONS": f"-agentpath:{copy}=dir={out_sidecar},stats={stats_sidecar}"})
    stderr = r.stderr.decode(errors="replace")
    check(r.returncode == 0, f"JVM exit {r.returncode}", stderr)
    check(r.stdout.decode().splitlines()[:1] == expected[:1], "program output changed", stderr)
    lines = agent_lines(stderr)
    check(len(lines) == 1 and "warning" in lines[0] and INACTIVE in lines[0] and "touches no file" in lines[0],
          "expected exactly one warning from the inactive copy", stderr)
    ran = [(out, stats) for out, stats in ((out_app, stats_app), (out_sidecar, stats_sidecar)) if out.exists()]
    check(len(ran) == 1, f"expected exactly one copy to create its directory, got {[str(o) for o, _ in ran]}")
    out, stats_path = ran[0]
    idle_out, idle_stats = ((out_sidecar, stats_sidecar) if out == out_app else (out_app, stats_app))
    check(not idle_stats.exists(), f"the inactive copy wrote its stats file {idle_stats}")
    dumps = dumps_in(out)
    check(len(dumps) == 1, f"expected one dump in {out}, found {dumps}")
    d = ctx.assert_valid(dumps[0], "the running copy's dump")
    check(d.closed, "the dump should end with CLOSE", d.describe())
    stats = read_stats(stats_path)
    check(len(d.loads) == stats["written"]["code_loads"] and stats["lost"]["total"] == 0,
          f"dump holds {len(d.loads)} loads; stats: {stats}")
    log(f"two copies: {out.name}'s copy ran ({len(d.loads)} loads), {idle_out.name}'s stayed inactive: {lines[0]}")

    late_attach_of_a_copy(ctx, copy)


def late_attach_of_a_copy(ctx, copy) -> None:
    out, other = ctx.work / "late-original", ctx.work / "late-copy"
    gate = ctx.work / "gate"
    jvm_args = ["-XX:+EnableDynamicAgentLoading"] if ctx.jvm.jdk.feature >= 21 else []
    proc = ctx.start_java(f"dir={out}", "Work", ROUNDS, "return", gate, jvm_args=jvm_args)
    wait_line(proc, "READY", timeout=120)
    r = subprocess.run([str(ctx.scripts / "bin" / "attach"), "--agent", str(copy), "--force", str(proc.pid), f"dir={other}"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode != 0 and "not applied" in r.stderr,
          f"attach of a second copy: expected a non-zero exit saying the options were not applied (exit {r.returncode})",
          r.stdout + r.stderr)
    gate.touch()
    rc = proc.wait(timeout=120)
    stderr = proc.err_path.read_text(errors="replace")
    check(rc == 0, f"late attach: JVM exit {rc}", stderr)
    lines = [line for line in agent_lines(stderr) if "JVM TI agent has been loaded dynamically" not in line]
    check(len(lines) == 1 and INACTIVE in lines[0], "late attach of a copy: expected one warning", stderr)
    check(not other.exists(), "the attached copy created its directory")
    d = ctx.assert_valid(dumps_in(out)[0], "late attach: the original's dump")
    check(d.closed, "late attach: the original's dump should end with CLOSE", d.describe())
    log("late attach of a copy: ignored with one warning; the original's dump valid and closed")
