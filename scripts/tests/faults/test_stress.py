"""Load: class-unloading churn, deoptimization storms, many application threads, -Xcomp, and a
late attach during the churn. The short variant (CI) runs a few seconds per case; --long runs
each case until 100k+ compilations (minutes).

A. -Xcomp, agent from the start: nothing lost (lost.total is only events after close), the
   stats' written counts equal the dump's record counts, classes were unloaded (unload events),
   the queue stayed within its budget, the dump is valid and closed.
B. Late attach (scripts/bin/attach, i.e. jcmd JVMTI.agent_load) into a JVM already churning: the
   same, plus replayed events.
C. A 256 KiB budget (the smallest) with overflow=wait under -Xcomp, so the queue is full most of the time and
   VMDeath arrives while it is full: the JVM exits promptly (no deadlock), the dump is valid and
   closed, whatever did not fit is counted (lost.budget), written counts equal the dump.
"""
import subprocess
import time

import pytest

from support.checks import check, log
from support.output import dumps_in, read_stats
from support.procs import wait_for

def verify(ctx, what: str, proc, stats_path, out, budget: int, *, allow_budget_loss: bool,
           min_compilations: int) -> dict:
    stderr = proc.err_path.read_text(errors="replace")
    check(proc.returncode == 0, f"{what}: JVM exit {proc.returncode}", stderr[-4000:])
    stdout = proc.out_path.read_text()
    check("DONE " in stdout, f"{what}: the workload did not finish", stdout[-2000:] + stderr[-2000:])
    stats = read_stats(stats_path)
    dumps = dumps_in(out)
    check(len(dumps) == 1, f"{what}: expected one dump in {out}")
    d = ctx.assert_valid(dumps[0], what)
    check(d.closed, f"{what}: the dump should end with CLOSE", d.describe())
    ev, written, lost, queue = stats["events"], stats["written"], stats["lost"], stats["queue"]
    summary = (f"{what}: {ev['compiled_method_load']} loads, {ev['compiled_method_unload']} unloads, "
               f"{ev['dynamic_code_generated']} stubs, {ev['replayed']} replayed; written {written['code_loads']}; "
               f"lost {lost}; queue high water {queue['bytes_high_water']} B / {queue['records_high_water']} records")
    log(summary)
    check(len(d.loads) == written["code_loads"],
          f"{what}: dump has {len(d.loads)} CODE_LOAD, stats {written['code_loads']}")
    check(d.counts["DEBUG_INFO"] == written["debug_info"],
          f"{what}: dump has {d.counts['DEBUG_INFO']} DEBUG_INFO, stats {written['debug_info']}")
    check(queue["bytes_high_water"] <= budget, f"{what}: queue used {queue['bytes_high_water']} > budget {budget}")
    unlost = lost["total"] - lost["after_close"]
    if allow_budget_loss:
        check(unlost == lost["budget"], f"{what}: losses other than the budget: {lost}")
    else:
        check(unlost == 0, f"{what}: records lost: {lost}", summary)
    produced = ev["compiled_method_load"] + ev["dynamic_code_generated"] - ev["duplicate_loads"]
    check(written["code_loads"] + unlost <= produced, f"{what}: more written than produced: {stats}")
    check(written["code_loads"] + unlost >= ev["compiled_method_load"] - ev["duplicate_loads"],
          f"{what}: compiled methods neither written nor counted: {stats}")
    check(ev["compiled_method_load"] >= min_compilations,
          f"{what}: only {ev['compiled_method_load']} compilations, wanted {min_compilations}+")
    check(ev["compiled_method_unload"] > 0, f"{what}: no class unloading happened")
    return stats


@pytest.mark.meson(every_jdk=True)
def test_stress(ctx) -> None:
    seconds = "180" if ctx.long else "4"
    threads = "16" if ctx.long else "6"
    min_comp = 100_000 if ctx.long else 1_000
    xcomp = ["-Xcomp", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"]
    default_budget = 64 << 20

    # A. -Xcomp from the start.
    out, stats_path = ctx.work / "xcomp", ctx.work / "xcomp-stats.json"
    t0 = time.monotonic()
    proc = ctx.start_java(f"dir={out},stats={stats_path}", "Stress", seconds, threads, jvm_args=xcomp)
    proc.wait(timeout=1800)
    verify(ctx, "A -Xcomp", proc, stats_path, out, default_budget, allow_budget_loss=False,
           min_compilations=min_comp)
    log(f"A took {time.monotonic() - t0:.1f} s")

    # B. Late attach into a JVM that is already churning.
    out, stats_path, gate = ctx.work / "attach", ctx.work / "attach-stats.json", ctx.work / "attach-gate"
    jvm = ["-XX:+EnableDynamicAgentLoading"] if ctx.jvm.jdk.feature >= 21 else []
    proc = ctx.jvm.start("Stress", seconds, threads, gate, jvm_args=[*jvm, *(xcomp if ctx.long else [])])
    check(wait_for(lambda: b"READY" in proc.out_path.read_bytes() or proc.poll() is not None, 600),
          "B: the workload never reached READY", proc.err_path.read_text(errors="replace"))
    r = subprocess.run([str(ctx.scripts / "bin" / "attach"), "--agent", str(ctx.agent), str(proc.pid),
                        f"dir={out},stats={stats_path}"], capture_output=True, text=True, timeout=300)
    gate.touch()
    check(r.returncode == 0, f"B: attach failed (exit {r.returncode})", r.stdout + r.stderr)
    proc.wait(timeout=1800)
    stats = verify(ctx, "B late attach", proc, stats_path, out, default_budget, allow_budget_loss=False,
                   min_compilations=min_comp // 10)
    check(stats["events"]["replayed"] > 0, "B: the attach replayed nothing")

    # C. Tiny budget, overflow=wait, -Xcomp: VMDeath while the queue is full.
    budget = 256 << 10
    out, stats_path = ctx.work / "tiny", ctx.work / "tiny-stats.json"
    t0 = time.monotonic()
    proc = ctx.start_java(f"dir={out},stats={stats_path},budget=256K,overflow=wait,wait_ms=50", "Stress",
                          "2" if not ctx.long else "20", threads, jvm_args=xcomp)
    proc.wait(timeout=1800)
    took = time.monotonic() - t0
    stats = verify(ctx, "C tiny budget", proc, stats_path, out, budget, allow_budget_loss=True,
                   min_compilations=min_comp // 10)
    log(f"C took {took:.1f} s; lost to the budget: {stats['lost']['budget']}")

