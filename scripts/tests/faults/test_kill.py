"""Kill at any moment.

1. SIGKILL the JVM at random points, from start-up (agent loading) to exit, N times (20 in CI,
   200 with --long): every dump left behind passes `jitdump check` (a truncated final record is
   allowed, nothing else), its header is whole, and the JVM left no other file in the directory.
2. One run under `perf record -k 1`, SIGKILLed mid-run: `perf inject --jit` succeeds on it and
   writes the jitted-*.so images, and `perf report` resolves samples to Java methods.
3. SIGTERM, System.exit, Runtime.halt and the end of main: the dump is complete, ends with its
   CLOSE record, and the stats agree with it (nothing lost).
"""
import os
import signal
import subprocess
import time

import pytest

from support import perf
from support.checks import check, log
from support.output import agent_lines, dumps_in, read_stats
from support.procs import wait_for

ROUNDS = 20000


def random_kills(ctx) -> None:
    iterations = 200 if ctx.long else 20
    gate = ctx.work / "gate-open"
    gate.touch()
    # How long a whole run takes here (the slower of two, started exactly like the killed ones),
    # so kill points cover start-up to exit.
    whole = 0.0
    for n in range(2):
        t0 = time.monotonic()
        proc = ctx.start_java(f"dir={ctx.work / f'baseline{n}'},perfmap={ctx.work / f'baseline{n}'}", "Work",
                              str(ROUNDS), "return", str(gate))
        proc.wait(timeout=120)
        whole = max(whole, time.monotonic() - t0)
        check(proc.returncode == 0, "baseline run failed", proc.err_path.read_text(errors="replace"))
    log(f"a whole run takes {whole:.2f} s; {iterations} kills between 0 and {whole * 1.1:.2f} s")
    outcomes = {"no dump yet": 0, "whole": 0, "truncated tail": 0, "closed": 0, "exited first": 0}
    for i in range(iterations):
        # A third of the kills land in the first 15% (JVM and agent start-up), a fifth around the
        # end (VMDeath, the writer draining, CLOSE), the rest anywhere.
        if i % 3 == 0:
            delay = ctx.rng.uniform(0, whole * 0.15)
        elif i % 5 == 4:
            delay = ctx.rng.uniform(whole * 0.85, whole * 1.05)
        else:
            delay = ctx.rng.uniform(0, whole * 1.1)
        out = ctx.work / f"kill{i}"
        proc = ctx.start_java(f"dir={out},perfmap={out}", "Work", str(ROUNDS), "return", str(gate))
        time.sleep(delay)
        exited = proc.poll() is not None
        if not exited:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        what = f"kill #{i} at {delay * 1000:.0f} ms (seed {ctx.seed})"
        if exited:
            outcomes["exited first"] += 1
        dumps = dumps_in(out)
        if not dumps:
            outcomes["no dump yet"] += 1
            continue
        check(len(dumps) == 1, f"{what}: {len(dumps)} dumps")
        res = ctx.tool_check(dumps[0])
        detail = f"{res.stdout}{res.stderr}\nJVM stderr:\n{proc.err_path.read_text(errors='replace')}"
        check(res.returncode == 0, f"{what}: `jitdump check` rejects the dump left behind", detail)
        d = ctx.tool.records(dumps[0])
        detail = f"{d.describe()}\n{detail}"
        check(d.header_ok, f"{what}: the header is not whole", detail)
        problems = [line for line in res.stdout.splitlines() if ": warning: " in line or ": error: " in line]
        # A DEBUG_INFO precedes its CODE_LOAD (perf's order). A kill that lands inside the write
        # of the pair leaves the DEBUG_INFO whole and its load cut off: that warning is the
        # truncation's, acceptable only for the last whole record with the truncated one after it.
        dangling = [line for line in problems if "DEBUG_INFO is not followed by a CODE_LOAD" in line]
        check(all("truncated final" in line or line in dangling for line in problems),
              f"{what}: problems other than a truncated final record", detail)
        check(not dangling or (len(dangling) == 1 and d.truncated_bytes > 0 and d.records[-1].type == "DEBUG_INFO"),
              f"{what}: a DEBUG_INFO without its CODE_LOAD before the end of the dump", detail)
        if exited:
            check(proc.returncode == 0 and d.closed, f"{what}: the JVM exited by itself, so the dump must be closed",
                  detail)
        if d.closed:
            outcomes["closed"] += 1
        elif d.truncated_bytes:
            outcomes["truncated tail"] += 1
        else:
            outcomes["whole"] += 1
        leftovers = [p.name for p in out.iterdir() if not p.name.startswith(("jit-", "perf-"))]
        check(leftovers == [] or all(".map." in n for n in leftovers), f"{what}: unexpected files {leftovers}")
        if i % 10 == 0:
            log(f"{i + 1}/{iterations}: {outcomes}")
        if not ctx.long:
            continue
    log(f"SIGKILL outcomes: {outcomes}")
    check(outcomes["whole"] + outcomes["truncated tail"] > 0, "no kill landed while the dump was being written")


def perf_inject_after_kill(ctx, perf_env) -> None:
    out = ctx.work / "perf"
    out.mkdir()
    data = out / "perf.data"
    gate = ctx.work / "perf-gate"  # never opened: the JVM waits after READY until killed
    proc = ctx.start_java(f"dir={out}", "Work", str(ROUNDS), "sleep", str(gate), env=perf_env,
                          wrapper=["perf", "record", "-q", "-k", "1", "-F", "999", "-g", "-o", str(data), "--"])
    check(wait_for(lambda: b"READY" in proc.out_path.read_bytes() or proc.poll() is not None, 120),
          "perf run never reached READY", proc.err_path.read_text(errors="replace"))
    java = [p for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()]
    check(len(java) == 1, f"expected one java child of perf, got {java}")
    os.kill(int(java[0]), signal.SIGKILL)
    proc.wait(timeout=120)
    dumps = dumps_in(out)
    check(len(dumps) == 1, "perf run: no dump")
    d = ctx.assert_valid(dumps[0], "perf run killed", allow_truncated_tail=True)
    check(not d.closed, "perf run: a SIGKILLed JVM cannot have written CLOSE", d.describe())
    injected = out / "perf.jit.data"
    r = subprocess.run(["perf", "inject", "--jit", "-i", str(data), "-o", str(injected)], capture_output=True,
                       text=True, timeout=300, cwd=out, env=perf_env)
    check(r.returncode == 0, f"perf inject --jit failed (exit {r.returncode})", r.stdout + r.stderr)
    jitted = list(out.glob("jitted-*.so"))
    check(len(jitted) > 0, "perf inject wrote no jitted-*.so: it did not find or read the dump", r.stderr)
    rep = subprocess.run(["perf", "report", "-i", str(injected), "--stdio", "--sort", "sym", "-g", "none"],
                         capture_output=True, text=True, timeout=300, cwd=out, env=perf_env)
    check(rep.returncode == 0, "perf report failed on the injected data", rep.stderr)
    java_syms = [line for line in rep.stdout.splitlines() if "Work" in line or "java." in line]
    check(len(java_syms) > 0, "perf report shows no Java method", rep.stdout[-3000:])
    log(f"perf inject: {len(jitted)} jitted images from a dump with {len(d.loads)} loads "
           f"(truncated tail {d.truncated_bytes} bytes); report lines with Java: {len(java_syms)}")
    # The kernel never showed us a torn record (pwritev of whole records lands whole), so make the
    # worst case by hand: cut the same dump in the middle of a record in its second half.
    data = dumps[0].read_bytes()
    cut = d.size // 2 + 37
    dumps[0].write_bytes(data[:cut])
    t = ctx.assert_valid(dumps[0], "dump cut mid-record", allow_truncated_tail=True)
    check(t.truncated_bytes > 0, "the cut should leave a partial record", t.describe())
    for p in jitted:
        p.unlink()
    r = subprocess.run(["perf", "inject", "--jit", "-i", str(data_file(out)), "-o", str(out / "cut.data")],
                       capture_output=True, text=True, timeout=300, cwd=out, env=perf_env)
    check(r.returncode == 0 and list(out.glob("jitted-*.so")),
          f"perf inject --jit fails on a dump with a torn final record (exit {r.returncode})", r.stderr)
    log(f"perf inject on the dump cut mid-record ({t.truncated_bytes} stray bytes): "
           f"{len(list(out.glob('jitted-*.so')))} jitted images")


def data_file(out):
    return out / "perf.data"


def clean_exits(ctx) -> None:
    expected = ctx.expected_result(ROUNDS)
    for how in ("sigterm", "sigint", "exit", "halt", "return"):
        out = ctx.work / f"end-{how}"
        stats_path = ctx.work / f"stats-{how}.json"
        end = "sleep" if how.startswith("sig") else how
        proc = ctx.start_java(f"dir={out},stats={stats_path}", "Work", str(ROUNDS), end)
        if how.startswith("sig"):
            check(wait_for(lambda: b"SLEEPING" in proc.out_path.read_bytes() or proc.poll() is not None, 60),
                  f"{how}: workload never reached SLEEPING")
            proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        proc.wait(timeout=60)
        stderr = proc.err_path.read_text(errors="replace")
        want_rc = {"sigterm": 143, "sigint": 130}.get(how, 0)
        check(proc.returncode == want_rc, f"{how}: JVM exit {proc.returncode}, expected {want_rc}", stderr)
        check(proc.out_path.read_text().splitlines()[:1] == [expected], f"{how}: program output changed", stderr)
        check(agent_lines(stderr) == [], f"{how}: unexpected agent messages", stderr)
        dumps = dumps_in(out)
        check(len(dumps) == 1, f"{how}: expected one dump")
        d = ctx.assert_valid(dumps[0], how)
        check(d.closed, f"{how}: the dump must end with JIT_CODE_CLOSE", d.describe())
        stats = read_stats(stats_path)
        check(len(d.loads) == stats["written"]["code_loads"],
              f"{how}: dump has {len(d.loads)} loads, stats say {stats['written']['code_loads']}")
        lost = stats["lost"]
        check(lost["total"] == lost["after_close"], f"{how}: records lost: {lost}")
        log(f"{how}: closed dump with {len(d.loads)} loads; {lost['after_close']} events after close")


@pytest.mark.meson(every_jdk=True)
def test_kill(ctx) -> None:
    perf.require_sampling()
    clean_exits(ctx)
    random_kills(ctx)
    perf_inject_after_kill(ctx, perf.env(ctx.work / "home"))

