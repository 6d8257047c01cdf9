"""Java source lines and inlined frames as perf shows them: perf report --sort srcline, perf
annotate, and folded stacks that expand a JIT frame into its inline chain (inline=on)."""
import collections
import os
import re

import pytest

from support.checks import figure

from .runs import JITTED


def perf_srcline_rows(ctx, run_dir):
    """perf's own `report --sort sym,srcline`, restricted to the jitted DSOs (addr2line on libjvm
    alone takes half a minute): [(samples, sym, srcline)]."""
    data = run_dir / "perf.jit.data"
    dsos = sorted({m.group(0) for r in ctx.script_rows(data) for m in [JITTED.search(r[4])] if m})
    p = ctx.perf("report", "-i", data, "--stdio", "--no-children", "--sort", "sym,srcline",
                 "--dsos", ",".join(dsos), "-F", "sample,sym,srcline", "--full-source-path")
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*(\d+)\s+\[\.\]\s+(.*?)\s{2,}(\S+)\s*$", line)
        if m:
            rows.append((int(m.group(1)), m.group(2), m.group(3)))
    return rows, p.seconds


@pytest.mark.meson(timeout=900)
def test_srcline(ctx):
    """perf report --sort srcline gives File.java:N for >= 95% of compiled-Java-method samples,
    the known hot lines win (also when inlined), and perf-java's fast table agrees with perf."""
    check = ctx.check
    run_dir = ctx.record_demo("srcline", seconds="4")
    rows, seconds = perf_srcline_rows(ctx, run_dir)
    figure("srcline.perf_report_seconds_jitted_dsos_only", f"{seconds:.1f}")
    java = [r for r in rows if "(" in r[1]]  # compiled Java methods, not Interpreter/stubs
    total = sum(r[0] for r in java)
    with_line = sum(r[0] for r in java if re.search(r"\.java:\d+$", r[2]))
    share = 100.0 * with_line / total if total else 0.0
    figure("srcline.java_samples", total)
    figure("srcline.java_srcline_percent", f"{share:.2f}")
    check(total >= 3000, f"enough samples in compiled Java methods ({total} >= 3000)")
    check(share >= 95.0, f"perf report --sort srcline: {share:.2f}% of Java-method samples have File.java:N (>= 95%)")

    hot = ctx.hot_lines()
    for method, marker in (("demo.Demo.divideChain(", "divideChain"), ("demo.Demo.inlinedCaller(", "leaf")):
        per_line = collections.Counter()
        for n, sym, src in rows:
            if sym.startswith(method):
                per_line[src] += n
        want = f"Demo.java:{hot[marker]}"
        top = per_line.most_common(1)[0] if per_line else ("none", 0)
        share_top = 100.0 * top[1] / sum(per_line.values()) if per_line else 0
        print(f"{method}: lines {per_line.most_common(4)}")
        check(top[0].endswith(want),
              f"{method}...) hottest line is {want} ({marker}{' inlined' if marker == 'leaf' else ''}): "
              f"got {top[0]} ({share_top:.1f}%)")

    # perf-java's fast srcline table: same samples per line as perf for the JIT code.
    fast = ctx.perf_java("srcline", "-o", run_dir, "--top", "0")
    figure("srcline.fast_seconds", f"{fast.seconds:.1f}")
    m = re.search(r"java_srcline_share: ([\d.]+)%", fast.stdout)
    check(m is not None and float(m.group(1)) >= 95.0, f"perf-java srcline reports the share ({m and m.group(1)}%)")
    fast_lines = collections.Counter()
    for line in fast.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and not line.startswith("#") and re.match(r"\S+\.java:\d+$", f[2]):
            fast_lines[os.path.basename(f[2])] += int(f[1])  # it names the package path, perf's rows may not
    perf_lines = collections.Counter()
    for n, sym, src in rows:
        if re.search(r"\.java:\d+$", src):
            perf_lines[os.path.basename(src)] += n
    top_perf = [k for k, _ in perf_lines.most_common(5)]
    # The table reads perf.data itself (each frame by address and sample time), perf reads
    # perf.jit.data through perf inject and addr2line: they may differ by a sample or two per line
    # (seen: 2 of 2,285; perf also prints ??:0 for some; not traced yet). Exact agreement with the dumps' line tables
    # is asserted by perf-report_javac_shares; here each top line must agree within 0.2 %.
    diff = {k: fast_lines[k] - perf_lines[k] for k in top_perf}
    figure("srcline.top5_max_difference_samples", max(map(abs, diff.values())) if diff else 0)
    agree = all(abs(d) <= max(2, 0.002 * perf_lines[k]) for k, d in diff.items())
    print(f"top lines perf: {[(k, perf_lines[k]) for k in top_perf]}; fast: {[(k, fast_lines[k]) for k in top_perf]}")
    check(agree, f"perf-java srcline gives perf report --sort srcline's samples for the top 5 lines within 0.2 % ({diff})")


def test_annotate(ctx):
    """perf annotate --stdio of a hot Java method shows File.java:N lines; the hot line leads."""
    check = ctx.check
    run_dir = ctx.record_demo("annotate", seconds="3", freq="999")
    p = ctx.perf_java("annotate", "-o", run_dir, "demo.Demo.divideChain", "--source-root", ctx.demo_src)
    out = p.stdout
    hot = ctx.hot_lines()["divideChain"]
    check(re.search(r"demo/Demo\.java:\d+", out) is not None, "annotate shows demo/Demo.java:N line markers")
    m = re.search(r"^\s*([\d.]+)\s+Demo\.java:(\d+)\s*$", out, re.M)
    check(m is not None and int(m.group(2)) == hot,
          f"annotate's per-line summary puts Demo.java:{hot} first (got {m and m.group(0).strip()})")
    src_line = (ctx.demo_src / "demo" / "Demo.java").read_text().splitlines()[hot - 1].strip()
    check(src_line[:40] in out, "with --source-root, annotate interleaves the Java source text")
    check(re.search(r"^\s+\d+\.\d+ :\s+[0-9a-f]+:\s+\w+", out, re.M) is not None, "annotate shows instructions")


def test_inline_folded(ctx):
    """inline=on: perf inject stays quiet (perf-java strips the samply records first) and the
    folded stacks expand a JIT frame into its inline chain: Demo.leaf() is inlined into
    Demo.inlinedCaller() (its hot line is marked "// HOT: leaf"), so its samples must show
    as "...;demo.Demo.inlinedCaller;demo.Demo.leaf", a frame perf alone never shows."""
    check = ctx.check
    run_dir = ctx.record_demo("inline-folded", seconds="3", freq="999", agent_opts="inline=on", extra=("-g",))
    jit_dir = run_dir / "jit"
    dumps = [f for f in os.listdir(jit_dir) if re.match(r"jit-\d+\.dump$", f)]
    check(any((jit_dir / (d + ".inline")).exists() for d in dumps),
          "inline records moved to jit-PID.dump.inline before inject")
    log = run_dir / "inject.log"
    check(not log.exists() or "unknown record type" not in log.read_text(),
          "perf inject printed no unknown-record warnings")
    folded = (run_dir / "folded.txt").read_text().splitlines()

    def count(pattern):
        return sum(int(l.rsplit(" ", 1)[1]) for l in folded if re.search(pattern, l))
    expanded = count(r"demo\.Demo\.inlinedCaller;demo\.Demo\.leaf( |;)")
    caller = count(r"demo\.Demo\.inlinedCaller( |;)")
    figure("inline_folded.caller_samples", caller)
    figure("inline_folded.expanded_samples", expanded)
    check(caller > 0 and expanded >= 0.5 * caller,
          f"{expanded} of {caller} inlinedCaller samples expanded into ...;inlinedCaller;leaf")
