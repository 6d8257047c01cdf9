"""The output directory is deleted mid-run (rm -rf while the JVM is compiling), with and
without perfmap= in the same directory.

What happens (docs/agent.md, Sessions): the writer notices that its dump has no name any more
(link count 0), says so in one warning and stops the session as a `stop` would: events off, the
files closed, its thread gone, no descriptor of the deleted directory left, so the disk space is
freed while the JVM runs on. The JVM must complete with correct output, the agent must not crash,
never re-create the deleted directory or write anywhere else, and its stats (in another
directory) account for every event it took: written (to the unlinked file before it noticed),
duplicate or lost.
"""
import shutil

from support.checks import check, log
from support.output import agent_lines, dumps_in, read_stats
from support.procs import wait_for
from support.visits import agent_threads, descriptors_under

ROUNDS = 20000


def test_dir_deleted(ctx) -> None:
    expected = ctx.expected_output(ROUNDS)
    for variant, extra in (("dump", ""), ("dump+perfmap", ",perfmap={out}")):
        tag = variant.replace("+", "-")
        out = ctx.work / f"out-{tag}"
        gate = ctx.work / f"gate-{tag}"
        stats_path = ctx.work / f"stats-{tag}.json"
        proc = ctx.start_java(f"dir={out},stats={stats_path}" + extra.format(out=out), "Work", str(ROUNDS),
                              "return", str(gate))
        check(wait_for(lambda: b"READY" in proc.out_path.read_bytes() or proc.poll() is not None, 60),
              f"{variant}: the workload never reached READY")
        check(len(dumps_in(out)) == 1, f"{variant}: no dump before the deletion")
        # Delete the directory with everything in it: the session stops while the JVM waits at the
        # gate (the writer checks its dump's link count at every poll, at most 800 ms apart).
        shutil.rmtree(out)
        check(wait_for(lambda: not agent_threads(proc.pid) and not descriptors_under(proc.pid, out), 10),
              f"{variant}: after the deletion the agent still has threads {agent_threads(proc.pid)} or "
              f"descriptors {descriptors_under(proc.pid, out)}")
        # Then let phase 2 compile new code: no session takes it.
        gate.touch()
        proc.wait(timeout=120)
        stderr = proc.err_path.read_text(errors="replace")
        what = f"dir deleted ({variant})"
        check(proc.returncode == 0, f"{what}: JVM exit {proc.returncode}", stderr)
        check(proc.out_path.read_text().splitlines() == expected, f"{what}: program output changed", stderr)
        check(not list(ctx.work.glob("hs_err_pid*.log")), f"{what}: the JVM crashed (hs_err)")
        lines = agent_lines(stderr)
        check(len(lines) == 1 and "was deleted while the agent wrote it" in lines[0] and "stopping" in lines[0],
              f"{what}: one warning saying the dump was deleted and the session stops, got {lines}", stderr)
        check(not out.exists(), f"{what}: the agent re-created {out}")
        stats = read_stats(stats_path)
        ev, written, lost = stats["events"], stats["written"], stats["lost"]
        check(stats["session"]["dump_deleted"] == 1 and stats["session"]["stopped_by"] == "dump_deleted",
              f"{what}: the stats say why the session ended: {stats['session']}")
        offered = ev["compiled_method_load"] + ev["dynamic_code_generated"] - ev["empty_blobs"]
        check(written["code_loads"] + ev["duplicate_loads"] + lost["total"] == offered,
              f"{what}: every event the session took is written, a duplicate or lost: {stats}")
        log(f"{what}: JVM fine; agent lines {lines}; {written['code_loads']} loads written to the unlinked file "
            f"before the agent noticed, lost {lost['total']}")

