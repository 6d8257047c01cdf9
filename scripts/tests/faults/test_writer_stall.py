"""A writer stuck in a write that never returns (a hung NFS or FUSE mount; issue #13, item 3).

The shim (writer_faults.cc) lets the writer's first pwritev calls through, then never returns
from the next one. The JVM must exit anyway (a few seconds late: the agent waits at most 2 s for
deferred loads at VM death and 5 s for the writer at unload), say once that the writer did not
finish, and its stats must still account for every code blob: events (compiled_method_load +
dynamic_code_generated) = written + duplicates + empty blobs + lost, with what the stuck writer
still held counted as lost.writer_stalled. Before the fix, the records left in the queue were
neither written nor counted (events 1,224, written 688, lost 0).
The dump holds the records written before the stall, whole: `jitdump check` accepts it.
"""
import time

import pytest

from support.checks import check, log
from support.output import agent_lines, dumps_in, read_stats

ROUNDS = 6000
STALL_AFTER = 3  # the header and the first batches are written, then the disk hangs


@pytest.mark.meson(every_jdk=True)
def test_writer_stall(ctx, build) -> None:
    shim = build.tests / "faults" / "writer_faults.so"
    check(shim.is_file(), f"the shim is not built at {shim}: ninja -C {build.dir}")
    expected = ctx.expected_output(ROUNDS)
    out = ctx.work / "out"
    stats_path = ctx.work / "stats.json"
    gate = ctx.work / "gate"
    gate.touch()
    env = {"LD_PRELOAD": str(shim), "WRITER_FAULTS_THREAD": "jitdump-writer",
           "WRITER_FAULTS_STALL_AFTER": str(STALL_AFTER)}
    started = time.monotonic()
    r = ctx.run_java(f"dir={out},stats={stats_path}", "Work", str(ROUNDS), "return", str(gate), env=env, timeout=120)
    took = time.monotonic() - started
    stderr = r.stderr.decode("utf-8", "replace")
    check(r.returncode == 0, f"JVM exit {r.returncode}", stderr[-4000:])
    check(r.stdout.decode().splitlines() == expected, "program output changed", stderr[-4000:])
    check("writer_faults: stalled" in stderr, "the writer never stalled: the test tested nothing", stderr[-4000:])

    lines = agent_lines(r.stderr)
    stalled = [line for line in lines if "did not finish" in line]
    check(len(stalled) == 1 and "writer_stalled" in stalled[0],
          f"expected one warning that the writer did not finish, naming lost.writer_stalled: {lines}", stderr)

    stats = read_stats(stats_path)
    ev, written, lost = stats["events"], stats["written"], stats["lost"]
    offered = ev["compiled_method_load"] + ev["dynamic_code_generated"]
    accounted = written["code_loads"] + ev["duplicate_loads"] + ev["empty_blobs"] + lost["total"]
    check(offered == accounted,
          f"{offered} code events offered, {accounted} written + duplicates + empty + lost: {stats}")
    check(lost["writer_stalled"] > 0, f"the records the stuck writer held are not counted: {lost}")
    others = {k: v for k, v in lost.items() if k not in ("total", "writer_stalled") and v != 0}
    check(not others, f"losses other than the stall: {lost}")

    dumps = dumps_in(out)
    check(len(dumps) == 1, f"expected one dump in {out}, found {dumps}")
    d = ctx.assert_valid(dumps[0], "stalled writer")
    check(len(d.loads) == written["code_loads"],
          f"dump has {len(d.loads)} CODE_LOAD, stats say {written['code_loads']} written")
    log(f"stalled writer: JVM took {took:.1f} s; {offered} code events, {written['code_loads']} written, "
        f"{lost['writer_stalled']} counted lost to the stall")
