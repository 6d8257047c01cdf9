"""Symbolization: the share of samples in JIT code that perf names after `perf inject --jit`, on
the demo's hot loops, on javac (start-up heavy), and on a SIGKILLed JVM (also with its dump cut
in the middle of a record)."""
import os
import re
import shutil

import pytest

from support.checks import figure

from .runs import disk_figures, fresh, report_symbolization


@pytest.mark.meson(timeout=900)
def test_hotloop(ctx):
    """Symbolization on the demo's hot loops, backdate on (default) and off."""
    check = ctx.check
    on = ctx.record_demo("hotloop-backdate-on")
    off = ctx.record_demo("hotloop-backdate-off", agent_opts="backdate=off")
    res_on = ctx.symbolization(on, "hot loop, backdate=on")
    res_off = ctx.symbolization(off, "hot loop, backdate=off")
    report_symbolization("hotloop.backdate_on", res_on)
    report_symbolization("hotloop.backdate_off", res_off)
    disk_figures(on, "hotloop")
    check(res_on["jit"] >= 3000, f"enough JIT samples to measure ({res_on['jit']} >= 3000)")
    # perf's own agent: 99.8% on a small hot loop. Ours must beat it.
    check(res_on["share"] >= 99.9, f"hot loop: {res_on['share']:.3f}% of JIT samples symbolized (>= 99.9%)")


@pytest.mark.meson(timeout=2400)
def test_javac(ctx):
    """Symbolization on javac compiling ~300 JDK sources: the startup-heavy case."""
    check = ctx.check
    root, listing = ctx.javac_sources()
    nfiles = sum(1 for _ in open(listing))
    results = {}
    for mode in ("on", "off"):
        run_dir = fresh(ctx.work / f"javac-backdate-{mode}")
        out = fresh(ctx.work / f"javac-classes-{mode}")
        out.mkdir()
        p = ctx.perf_java("-o", run_dir, "-q", "--inject", "-F", "1999", "--agent-opts", f"backdate={mode}", "--",
                          ctx.jdk.javac, "--patch-module", f"java.base={root}/java.base", "-d", out,
                          "-nowarn", "-Xlint:none", "-Xmaxwarns", "1", "-Xmaxerrs", "1",
                          "-implicit:none", "-proc:none", f"@{listing}", check_rc=False)
        print(p.stderr[-2000:])
        check(p.returncode == 0, f"javac backdate={mode}: perf-java ran (rc={p.returncode})")
        results[mode] = res = ctx.symbolization(run_dir, f"javac {nfiles} files, backdate={mode}")
        disk_figures(run_dir, f"javac.backdate_{mode}")
        report_symbolization(f"javac.backdate_{mode}", res)
    on, off = results["on"], results["off"]
    check(nfiles >= 250, f"javac compiled {nfiles} files (>= 250)")
    check(on["jit"] >= 5000, f"enough JIT samples for a 0.02% resolution ({on['jit']} >= 5000)")
    # The target: 99.98% of all samples in the code cache. Two agent mechanisms get there:
    # backdating (samples taken before HotSpot posts CompiledMethodLoad) and the stub replay at
    # VM death (blobs HotSpot never posts live: InlineCacheBuffer, jni_fast_Get*Field).
    check(on["share"] >= 99.98,
          f"javac, backdate=on: {on['share']:.3f}% of all JIT samples symbolized (>= 99.98%)")
    check(on["share_reported"] >= 99.98,
          f"javac, backdate=on: {on['share_reported']:.3f}% of JIT samples in JVM-reported code symbolized (>= 99.98%)")
    check(on["late"] == 0, f"javac, backdate=on: no sample lost to a late CompiledMethodLoad ({on['late']})")
    # javac makes ~107 method-handle intrinsics over its whole run, most when a code-list read no
    # longer fits the agent's budget: they wait for a later read, at the latest the one before
    # the writer detaches (agent/core/intrinsic_names.h). One posted after VM death cannot be named.
    intrinsic = re.compile(r"^java\.lang\.invoke\.MethodHandle\.(invokeBasic|linkTo\w+|<intrinsic>)\(")
    intrinsics = [ld.name for ld in ctx.dump_loads(ctx.work / "javac-backdate-on") if intrinsic.match(ld.name)]
    unnamed = [n for n in intrinsics if "<intrinsic>" in n]
    print(f"javac: {len(intrinsics)} method-handle intrinsic loads, {len(unnamed)} unnamed")
    check(len(intrinsics) >= 50, f"javac made {len(intrinsics)} method-handle intrinsics (>= 50 expected)")
    check(len(unnamed) <= 1, f"javac: {len(unnamed)} of {len(intrinsics)} intrinsics written unnamed (<= 1)")
    print(f"backdate effect on javac: on {on['share']:.3f}% ({on['late']} late, {on['unreported']} unreported) vs "
          f"off {off['share']:.3f}% ({off['late']} late, {off['unreported']} unreported)")


def test_sigkill(ctx):
    """A JVM killed with SIGKILL: the dump still injects, up to its last whole record."""
    check = ctx.check
    run_dir = fresh(ctx.work / "sigkill")
    script = f"{ctx.jdk.java} -cp {ctx.demo_classes()} demo.Demo 30 & pid=$!; sleep 6; kill -KILL $pid; wait $pid; exit 0"
    ctx.perf_java("-o", run_dir, "-q", "--inject", "-F", "1999", "--", "sh", "-c", script)
    jit_dir = run_dir / "jit"
    dumps = [f for f in os.listdir(jit_dir) if f.endswith(".dump")]
    check(len(dumps) == 1, f"one dump ({dumps})")
    dump = ctx.tool.records(jit_dir / dumps[0])
    check(dump.counts["CODE_CLOSE"] == 0, "no CLOSE record: the JVM really died")
    res = ctx.symbolization(run_dir, "SIGKILLed JVM")
    figure("sigkill.symbolized_percent", f"{res['share']:.3f}")
    check(res["jit"] >= 300 and res["share"] >= 99.0,
          f"SIGKILLed JVM: {res['share']:.2f}% of {res['jit']} JIT samples symbolized (>= 99%)")

    # The same dump cut in the middle of a CODE_LOAD: perf must stop there, keeping the rest.
    loads = dump.loads
    victim = loads[len(loads) // 2]
    cut_dir = fresh(ctx.work / "sigkill-cut")
    (cut_dir / "jit").mkdir(parents=True)
    shutil.copy(run_dir / "perf.data", cut_dir)
    orig = jit_dir / dumps[0]
    data = orig.read_bytes()[:victim.offset + victim.total_size // 2]
    # perf finds the dump by the path in the marker mmap: put the cut copy there.
    saved = orig.with_name(orig.name + ".whole")
    os.rename(orig, saved)
    try:
        for f in jit_dir.glob("jitted-*"):
            f.unlink()
        orig.write_bytes(data)
        cut = ctx.tool.records(orig)
        check(cut.truncated_bytes > 0, f"the cut dump ends in a partial record ({cut.truncated_bytes} bytes)")
        p = ctx.perf("inject", "--jit", "-i", cut_dir / "perf.data", "-o", cut_dir / "perf.jit.data", check_rc=False)
        check(p.returncode == 0, f"perf inject accepts a dump truncated mid-record (rc={p.returncode})")
        jitted = [f.name for f in jit_dir.glob("jitted-*")]
        whole = len(cut.loads)
        check(len(jitted) == whole,
              f"one jitted ELF per whole CODE_LOAD before the cut ({len(jitted)} == {whole} of {len(loads)})")
        names = {f"jitted-{r.pid}-{r.code_index}.so" for r in cut.loads}
        check(set(jitted) == names, "and exactly those loads")
    finally:
        os.replace(saved, orig)
    shutil.rmtree(ctx.work / "buildid", ignore_errors=True)
