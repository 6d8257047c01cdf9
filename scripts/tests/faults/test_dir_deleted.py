"""The output directory is deleted mid-run (rm -rf while the JVM is compiling), with and
without perfmap= in the same directory.

What happens (documented in README.md): the agent keeps its descriptors, so every write goes to
the unlinked inode and succeeds; the data is gone when the JVM exits. The JVM must complete with
correct output, the agent must not crash, print at most one warning, and never re-create the
deleted directory or write anywhere else. Nothing is counted as lost because no write failed;
the stats file (in another directory) is still written and matches the events.
"""
import shutil

from support.checks import check, log
from support.output import agent_lines, dumps_in, read_stats
from support.procs import wait_for

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
        # Delete the directory with everything in it, then let phase 2 compile new code.
        shutil.rmtree(out)
        gate.touch()
        proc.wait(timeout=120)
        stderr = proc.err_path.read_text(errors="replace")
        what = f"dir deleted ({variant})"
        check(proc.returncode == 0, f"{what}: JVM exit {proc.returncode}", stderr)
        check(proc.out_path.read_text().splitlines() == expected, f"{what}: program output changed", stderr)
        check(not list(ctx.work.glob("hs_err_pid*.log")), f"{what}: the JVM crashed (hs_err)")
        lines = agent_lines(stderr)
        check(len(lines) <= 1, f"{what}: at most one warning expected, got {lines}", stderr)
        check(not out.exists(), f"{what}: the agent re-created {out}")
        stats = read_stats(stats_path)
        ev, written, lost = stats["events"], stats["written"], stats["lost"]
        # lost.after_close: events after VMDeath, not counted in events
        check(written["code_loads"] + lost["total"] - lost["after_close"] + ev["duplicate_loads"] <=
              ev["compiled_method_load"] + ev["dynamic_code_generated"], f"{what}: stats inconsistent: {stats}")
        check(written["code_loads"] >= ev["compiled_method_load"], f"{what}: loads missing: {stats}")
        log(f"{what}: JVM fine; agent lines {lines or 'none'}; {written['code_loads']} loads 'written' to the "
               f"unlinked file, lost {lost['total']}")

