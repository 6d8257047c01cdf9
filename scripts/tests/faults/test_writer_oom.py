"""Allocation failures on the agent's writer thread (issue #13, item 1).

An LD_PRELOAD shim (writer_faults.cc, built next to this suite) makes every N-th allocation the
agent's own code makes on its writer thread ("jitdump-writer") fail, at 1 in 1,000, 1 in 50 and
1 in 3; every other thread, and HotSpot's own allocations on that thread, are left alone. The
writer resolves names and lines, keeps the live code and the code history, batches records and
keeps the perf map: each can meet the failure. Before the fix the first std::bad_alloc there
reached std::terminate (SIGABRT, exit 134, no hs_err).

Expected at every rate: the program finishes its work (exit 0, its output unchanged); the shim
really failed allocations; at most one agent line says what failed; the dump is valid and closed;
the dump holds exactly the loads the stats count as written; and the stats account for every
code blob: events (compiled_method_load + dynamic_code_generated) = written + duplicates + empty
blobs + lost, with allocation failures counted as lost.allocation and nothing under other causes.
"""
import re

import pytest

from support.checks import check, log
from support.output import agent_lines, dumps_in, read_stats

ROUNDS = 6000
RATES = (1000, 50, 3)


@pytest.mark.meson(every_jdk=True)
def test_writer_oom(ctx, build) -> None:
    shim = build.tests / "faults" / "writer_faults.so"
    check(shim.is_file(), f"the shim is not built at {shim}: ninja -C {build.dir}")
    expected = ctx.expected_output(ROUNDS)
    for every in RATES:
        what = f"1 in {every}"
        out = ctx.work / f"out-{every}"
        stats_path = ctx.work / f"stats-{every}.json"
        gate = ctx.work / f"gate-{every}"
        gate.touch()
        env = {"LD_PRELOAD": str(shim), "WRITER_FAULTS_THREAD": "jitdump-writer",
               "WRITER_FAULTS_LIBRARY": "libjitdumpagent", "WRITER_FAULTS_MALLOC_EVERY": str(every)}
        r = ctx.run_java(f"dir={out},perfmap={out},stats={stats_path}", "Work", str(ROUNDS), "return", str(gate),
                         env=env, timeout=300)
        stderr = r.stderr.decode("utf-8", "replace")
        check(r.returncode == 0, f"{what}: JVM exit {r.returncode} (-6 or 134, SIGABRT: an exception escaped the writer)",
              stderr[-4000:])
        check(r.stdout.decode().splitlines() == expected, f"{what}: program output changed", stderr[-4000:])
        check(not list(ctx.work.glob("hs_err_pid*.log")), f"{what}: the JVM crashed (hs_err file)")

        fired = re.search(r"writer_faults: failed (\d+) of (\d+) allocations", stderr)
        check(fired is not None, f"{what}: the shim did not report (was it preloaded?)", stderr[-4000:])
        failed, seen = int(fired.group(1)), int(fired.group(2))
        check(failed > 0, f"{what}: no allocation of the writer failed ({seen} seen): the test tested nothing",
              stderr[-4000:])

        lines = agent_lines(r.stderr)
        check(len(lines) <= 1 and all("out of memory" in line for line in lines),
              f"{what}: expected at most one agent line naming the memory failure, got {lines}", stderr[-4000:])

        stats = read_stats(stats_path)
        ev, written, lost = stats["events"], stats["written"], stats["lost"]
        dumps = dumps_in(out)
        check(len(dumps) == 1, f"{what}: expected one dump in {out}, found {dumps}")
        d = ctx.assert_valid(dumps[0], what)
        check(d.closed, f"{what}: the dump should end with CLOSE", d.describe())
        check(len(d.loads) == written["code_loads"],
              f"{what}: dump has {len(d.loads)} CODE_LOAD, stats say {written['code_loads']} written")
        offered = ev["compiled_method_load"] + ev["dynamic_code_generated"]
        accounted = written["code_loads"] + ev["duplicate_loads"] + ev["empty_blobs"] + lost["total"]
        check(offered == accounted,
              f"{what}: {offered} code events offered, {accounted} written + duplicates + empty + lost: {stats}")
        others = {k: v for k, v in lost.items() if k not in ("total", "allocation") and v != 0}
        check(not others, f"{what}: losses other than allocation failures: {lost}")
        if every <= 3:
            check(lost["allocation"] > 0, f"{what}: at this rate records must be lost and counted: {lost}")
        log(f"{what}: {failed} of {seen} writer allocations failed; {ev['compiled_method_load']} loads, "
            f"{written['code_loads']} written, {lost['allocation']} lost to allocation failures")
