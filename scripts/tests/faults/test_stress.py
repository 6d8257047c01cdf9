#!/usr/bin/env python3
"""Load: class-unloading churn, deoptimization storms, many application threads, -Xcomp, and a
late attach during the churn. The short variant (CI) runs a few seconds per case; --long runs
each case until 100k+ compilations (minutes).

A. -Xcomp, agent from the start: nothing lost (lost.total is only events after close), the
   stats' written counts equal the dump's record counts, classes were unloaded (unload events),
   the queue stayed within its budget, the dump is valid and closed.
B. Late attach (scripts/attach, i.e. jcmd JVMTI.agent_load) into a JVM already churning: the
   same, plus replayed events.
C. A 64 KiB budget with overflow=wait under -Xcomp, so the queue is full most of the time and
   VMDeath arrives while it is full: the JVM exits promptly (no deadlock), the dump is valid and
   closed, whatever did not fit is counted (lost.budget), written counts equal the dump.
"""
import os
import subprocess
import time

import faultlib as fl
from faultlib import check

ROOT = fl.HERE.parents[1]


def verify(ctx: fl.Context, what: str, proc, stats_path, out, budget: int, *, allow_budget_loss: bool,
           min_compilations: int) -> dict:
    stderr = proc.err_path.read_text(errors="replace")
    check(proc.returncode == 0, f"{what}: JVM exit {proc.returncode}", stderr[-4000:])
    stdout = proc.out_path.read_text()
    check("DONE " in stdout, f"{what}: the workload did not finish", stdout[-2000:] + stderr[-2000:])
    stats = fl.read_stats(stats_path)
    dumps = fl.dumps_in(out)
    check(len(dumps) == 1, f"{what}: expected one dump in {out}")
    d = ctx.assert_valid(dumps[0], what)
    check(d.closed, f"{what}: the dump should end with CLOSE", d.describe())
    ev, written, lost, queue = stats["events"], stats["written"], stats["lost"], stats["queue"]
    summary = (f"{what}: {ev['compiled_method_load']} loads, {ev['compiled_method_unload']} unloads, "
               f"{ev['dynamic_code_generated']} stubs, {ev['replayed']} replayed; written {written['code_loads']}; "
               f"lost {lost}; queue high water {queue['bytes_high_water']} B / {queue['records_high_water']} records")
    fl.log(summary)
    check(d.loads == written["code_loads"], f"{what}: dump has {d.loads} CODE_LOAD, stats {written['code_loads']}")
    check(d.debug_infos == written["debug_info"],
          f"{what}: dump has {d.debug_infos} DEBUG_INFO, stats {written['debug_info']}")
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


def body(ctx: fl.Context) -> None:
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
    fl.log(f"A took {time.monotonic() - t0:.1f} s")

    # B. Late attach into a JVM that is already churning.
    out, stats_path, gate = ctx.work / "attach", ctx.work / "attach-stats.json", ctx.work / "attach-gate"
    jvm = ["-XX:+EnableDynamicAgentLoading"] if _jdk_major(ctx) >= 21 else []
    cmd = [*fl.asan_prefix(), ctx.java, *jvm, *(xcomp if ctx.long else []), "-cp", str(ctx.classes()), "Stress",
           seconds, threads,
           str(gate)]
    out_path, err_path = ctx.work / "attach.out", ctx.work / "attach.err"
    with open(out_path, "wb") as o, open(err_path, "wb") as e:
        proc = subprocess.Popen(cmd, stdout=o, stderr=e, cwd=ctx.work)
    proc.out_path, proc.err_path = out_path, err_path
    fl.on_exit(lambda: fl.kill_group(proc))
    check(fl.wait_for(lambda: b"READY" in out_path.read_bytes() or proc.poll() is not None, 600),
          "B: the workload never reached READY", err_path.read_text(errors="replace"))
    attach = ROOT / "scripts" / "attach"
    if attach.is_file():
        r = subprocess.run([str(attach), "--agent", str(ctx.agent), str(proc.pid), f"dir={out},stats={stats_path}"],
                           capture_output=True, text=True, timeout=300)
    else:
        r = subprocess.run([str(ctx.java_home / "bin" / "jcmd"), str(proc.pid), "JVMTI.agent_load", str(ctx.agent),
                            f'"dir={out},stats={stats_path}"'], capture_output=True, text=True, timeout=300)
    gate.touch()
    check(r.returncode == 0, f"B: attach failed (exit {r.returncode})", r.stdout + r.stderr)
    proc.wait(timeout=1800)
    stats = verify(ctx, "B late attach", proc, stats_path, out, default_budget, allow_budget_loss=False,
                   min_compilations=min_comp // 10)
    check(stats["events"]["replayed"] > 0, "B: the attach replayed nothing")

    # C. Tiny budget, overflow=wait, -Xcomp: VMDeath while the queue is full.
    budget = 64 << 10
    out, stats_path = ctx.work / "tiny", ctx.work / "tiny-stats.json"
    t0 = time.monotonic()
    proc = ctx.start_java(f"dir={out},stats={stats_path},budget=64K,overflow=wait,wait_ms=50", "Stress",
                          "2" if not ctx.long else "20", threads, jvm_args=xcomp)
    proc.wait(timeout=1800)
    took = time.monotonic() - t0
    stats = verify(ctx, "C tiny budget", proc, stats_path, out, budget, allow_budget_loss=True,
                   min_compilations=min_comp // 10)
    fl.log(f"C took {took:.1f} s; lost to the budget: {stats['lost']['budget']}")


def _jdk_major(ctx: fl.Context) -> int:
    release = ctx.java_home / "release"
    if release.is_file():
        for line in release.read_text().splitlines():
            if line.startswith("JAVA_VERSION="):
                v = line.split("=", 1)[1].strip('"')
                return int(v.split(".")[0])
    return 17


if __name__ == "__main__":
    fl.main(body)
