#!/usr/bin/env python3
"""The perf suite: real perf record / inject / report / annotate with libjitdumpagent.

  perf_suite.py TEST --agent LIB --work DIR [--tool JITDUMP]

Each TEST is one meson test. Every test fails (never skips) when perf cannot sample here: CI
machines are expected to be able to (root or perf_event_paranoid <= 1, cpu-clock).
Figures are printed as "FIGURE name value" lines so a reader of the log can collect them.
"""
import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
PERF_JAVA = os.path.join(REPO, "scripts", "perf-java")
DEMO_SRC = os.path.join(REPO, "scripts", "demo-app")
SRC_ZIP = "/usr/lib/jvm/openjdk-17/src.zip"
# java.util and a few subpackages: ~300 sources, 10-40 s of javac depending on the machine's load.
JAVAC_PACKAGES = re.compile(
    r"^java\.base/java/util/(concurrent/|concurrent/atomic/|concurrent/locks/|function/|stream/|regex/)?[A-Za-z0-9_]+\.java$")
JITTED = re.compile(r"jitted-(\d+)-(\d+)\.so")
PERFMAP = re.compile(r"perf-\d+\.map|//anon|\[anon|\[JIT\]")

sys.path.insert(0, HERE)
import jitdump_file  # noqa: E402

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)
    return cond


def figure(name, value):
    print(f"FIGURE {name} {value}", flush=True)


def run(cmd, check_rc=True, env=None, cwd=None, timeout=900):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
                       errors="replace")
    p.seconds = time.monotonic() - t0
    if check_rc and p.returncode != 0:
        sys.stderr.write(f"command failed (rc={p.returncode}): {' '.join(cmd)}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}\n")
        raise SystemExit(1)
    return p


class Ctx:
    def __init__(self, args):
        self.agent = os.path.abspath(args.agent)
        self.tool = args.tool if args.tool and os.path.exists(args.tool) else None
        self.work = os.path.abspath(args.work)
        self.home = os.path.join(self.work, "home")  # perf and the JVM never see the real $HOME
        self.bid = os.path.join(self.work, "buildid")
        os.makedirs(self.home, exist_ok=True)
        self.env = dict(os.environ, HOME=self.home, PERF_JAVA_AGENT=self.agent, LC_ALL="C")
        self.env.pop("JAVA_TOOL_OPTIONS", None)
        self.env.pop("JITDUMPAGENT_OPTIONS", None)

    def perf(self, *args, check_rc=True, **kw):
        return run(["perf", "--buildid-dir", self.bid, *args], check_rc=check_rc, env=self.env, **kw)

    def perf_java(self, *args, check_rc=True, **kw):
        return run([PERF_JAVA, *args], check_rc=check_rc, env=self.env, **kw)

    def demo_classes(self):
        out = os.path.join(self.work, "..", "demo-classes")
        stamp = os.path.join(out, "demo", "Demo.class")
        src = os.path.join(DEMO_SRC, "demo", "Demo.java")
        if not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(src):
            os.makedirs(out, exist_ok=True)
            run(["javac", "-g", "-d", out, src])
        return os.path.abspath(out)

    def javac_sources(self):
        """A fixed subset of Debian's openjdk-17-source, unpacked once into the build dir."""
        if not os.path.exists(SRC_ZIP):
            sys.exit(f"{SRC_ZIP} is missing: install openjdk-17-source (scripts/setup does)")
        root = os.path.abspath(os.path.join(self.work, "..", "jdk-src"))
        listing = os.path.join(root, "files.txt")
        if not os.path.exists(listing):
            names = run(["unzip", "-Z1", SRC_ZIP]).stdout.split()
            wanted = sorted(n for n in names if JAVAC_PACKAGES.match(n))
            os.makedirs(root, exist_ok=True)
            run(["unzip", "-q", "-o", SRC_ZIP, *wanted, "-d", root])
            with open(listing + ".tmp", "w") as f:
                f.write("\n".join(os.path.join(root, n) for n in wanted) + "\n")
            os.rename(listing + ".tmp", listing)
        return root, listing


def require_sampling(ctx):
    """Fail loudly (the suite must not pass by skipping) when perf cannot sample here."""
    p = ctx.perf_java("check", check_rc=False)
    if p.returncode != 0:
        sys.stderr.write("perf cannot sample on this machine, so the perf suite cannot run:\n" + p.stderr)
        raise SystemExit(1)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def script_rows(ctx, data):
    """(pid, time, ip, sym, dso) per sample, in perf script's order."""
    p = ctx.perf("script", "-i", data, "-F", "pid,time,ip,sym,dso", "--no-inline")
    rows = []
    pat = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
    for line in p.stdout.splitlines():
        m = pat.match(line)
        if m:
            rows.append((int(m.group(1)), m.group(2), int(m.group(3), 16), m.group(4), m.group(5)))
    return rows


def symbolization(ctx, run_dir, label):
    """Share of the samples in JIT code that perf attributes to a named symbol after inject.

    JIT samples are those that perf, before inject, puts in the JVM's anonymous executable code
    cache mapping (shown as /tmp/perf-PID.map). After inject each must be in a jitted-*.so with a
    symbol; anything else (still perf-PID.map, [unknown]) is unresolved. Unresolved samples are
    classified with the dump: "late" when a load covers the ip but is stamped after the sample
    (what backdate fixes), "unreported" when no load in the whole dump covers the ip (code the
    JVM never reported through JVMTI), "other" otherwise.
    Returns a dict: share, jit, resolved, unresolved, late, unreported, other, share_reported.
    """
    before = script_rows(ctx, os.path.join(run_dir, "perf.data"))
    after = script_rows(ctx, os.path.join(run_dir, "perf.jit.data"))
    check(len(before) == len(after), f"{label}: perf inject kept every sample ({len(before)} -> {len(after)})")
    jit_keys = collections.Counter((r[0], r[1], r[2]) for r in before if PERFMAP.search(r[4]))
    resolved, unresolved = 0, []
    for r in after:
        key = (r[0], r[1], r[2])
        if jit_keys.get(key, 0) <= 0:
            continue
        jit_keys[key] -= 1
        if JITTED.search(r[4]) and not r[3].startswith("[unknown]"):
            resolved += 1
        else:
            unresolved.append(r)
    loads = []
    for name in os.listdir(os.path.join(run_dir, "jit")):
        if name.startswith("jit-") and name.endswith(".dump"):
            loads += jitdump_file.read(os.path.join(run_dir, "jit", name)).loads()
    kinds = collections.Counter()
    for pid, t, ip, sym, dso in unresolved:
        cover = [r for r in loads if r.pid == pid and r.code_addr <= ip < r.code_addr + r.code_size]
        t_ns = round(float(t) * 1e9)
        kind = ("unreported" if not cover else
                "late" if all(r.timestamp > t_ns - 1000 for r in cover) else "other")
        kinds[kind] += 1
        if sum(kinds.values()) <= 12:
            desc = ", ".join(f"{r.name[:50]} stamped {r.timestamp / 1e9:.6f}" for r in cover[:2]) or "no load covers it"
            print(f"  unresolved ({kind}): t={t} ip={ip:#x} {sym} ({os.path.basename(dso)}): {desc}")
    total = resolved + len(unresolved)
    reported = total - kinds["unreported"]
    res = dict(jit=total, resolved=resolved, unresolved=len(unresolved), late=kinds["late"],
               unreported=kinds["unreported"], other=kinds["other"],
               share=100.0 * resolved / total if total else 0.0,
               share_reported=100.0 * resolved / reported if reported else 0.0)
    print(f"{label}: {len(before)} samples, {total} in JIT code, {resolved} resolved, {len(unresolved)} unresolved "
          f"(late {res['late']}, unreported code {res['unreported']}, other {res['other']}): {res['share']:.3f}%, "
          f"{res['share_reported']:.3f}% of the samples in code the JVM reported")
    return res


def report_symbolization(prefix, res):
    for k in ("jit", "unresolved", "late", "unreported", "other"):
        figure(f"{prefix}.{k}", res[k])
    figure(f"{prefix}.symbolized_percent", f"{res['share']:.3f}")
    figure(f"{prefix}.symbolized_percent_of_reported_code", f"{res['share_reported']:.3f}")


def record_demo(ctx, name, seconds="4", freq="2999", agent_opts=None, extra=()):
    run_dir = fresh(os.path.join(ctx.work, name))
    args = ["-o", run_dir, "-q", "-F", freq, *extra]
    if agent_opts:
        args += ["--agent-opts", agent_opts]
    ctx.perf_java(*args, "--", "java", "-cp", ctx.demo_classes(), "demo.Demo", seconds)
    return run_dir


def disk_figures(run_dir, label):
    summary = dict(line.split() for line in open(os.path.join(run_dir, "summary.txt")))
    for key in ("inject_seconds", "jitted_elfs", "run_bytes", "jit_dir_bytes"):
        figure(f"{label}.{key}", summary[key])
    return summary


def hot_lines():
    """{'divideChain': N, 'leaf': N}: the lines marked "// HOT: name" in Demo.java."""
    out = {}
    with open(os.path.join(DEMO_SRC, "demo", "Demo.java")) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"// HOT: (\w+)", line)
            if m:
                out[m.group(1)] = n
    return out


# ------------------------------------------------------------------------------------ tests

def test_hotloop(ctx):
    """Symbolization on the demo's hot loops, backdate on (default) and off."""
    on = record_demo(ctx, "hotloop-backdate-on")
    off = record_demo(ctx, "hotloop-backdate-off", agent_opts="backdate=off")
    res_on = symbolization(ctx, on, "hot loop, backdate=on")
    res_off = symbolization(ctx, off, "hot loop, backdate=off")
    report_symbolization("hotloop.backdate_on", res_on)
    report_symbolization("hotloop.backdate_off", res_off)
    disk_figures(on, "hotloop")
    check(res_on["jit"] >= 3000, f"enough JIT samples to measure ({res_on['jit']} >= 3000)")
    # perf's own agent: 99.8% on a small hot loop. Ours must beat it.
    check(res_on["share"] >= 99.9, f"hot loop: {res_on['share']:.3f}% of JIT samples symbolized (>= 99.9%)")


def test_javac(ctx):
    """Symbolization on javac compiling ~300 JDK sources: the startup-heavy case."""
    root, listing = ctx.javac_sources()
    nfiles = sum(1 for _ in open(listing))
    results = {}
    for mode in ("on", "off"):
        run_dir = fresh(os.path.join(ctx.work, f"javac-backdate-{mode}"))
        out = fresh(os.path.join(ctx.work, f"javac-classes-{mode}"))
        os.makedirs(out)
        p = ctx.perf_java("-o", run_dir, "-q", "-F", "1999", "--agent-opts", f"backdate={mode}", "--",
                          "javac", "--patch-module", f"java.base={root}/java.base", "-d", out,
                          "-nowarn", "-Xlint:none", "-Xmaxwarns", "1", "-Xmaxerrs", "1",
                          "-implicit:none", "-proc:none", f"@{listing}", check_rc=False)
        print(p.stderr[-2000:])
        check(p.returncode == 0, f"javac backdate={mode}: perf-java ran (rc={p.returncode})")
        results[mode] = res = symbolization(ctx, run_dir, f"javac {nfiles} files, backdate={mode}")
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
    print(f"backdate effect on javac: on {on['share']:.3f}% ({on['late']} late, {on['unreported']} unreported) vs "
          f"off {off['share']:.3f}% ({off['late']} late, {off['unreported']} unreported)")


def perf_srcline_rows(ctx, run_dir):
    """perf's own `report --sort sym,srcline`, restricted to the jitted DSOs (addr2line on libjvm
    alone takes half a minute): [(samples, sym, srcline)]."""
    data = os.path.join(run_dir, "perf.jit.data")
    dsos = sorted({m.group(0) for r in script_rows(ctx, data) for m in [JITTED.search(r[4])] if m})
    p = ctx.perf("report", "-i", data, "--stdio", "--no-children", "--sort", "sym,srcline",
                 "--dsos", ",".join(dsos), "-F", "sample,sym,srcline", "--full-source-path")
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"^\s*(\d+)\s+\[\.\]\s+(.*?)\s{2,}(\S+)\s*$", line)
        if m:
            rows.append((int(m.group(1)), m.group(2), m.group(3)))
    return rows, p.seconds


def test_srcline(ctx):
    """perf report --sort srcline gives File.java:N for >= 95% of compiled-Java-method samples,
    the known hot lines win (also when inlined), and perf-java's fast table agrees with perf."""
    run_dir = record_demo(ctx, "srcline", seconds="4")
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

    hot = hot_lines()
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
              f"{method}...) hottest line is {want} ({marker}{' inlined' if marker == 'leaf' else ''}): got {top[0]} ({share_top:.1f}%)")

    # perf-java's fast srcline table: same samples per line as perf for the JIT code.
    fast = ctx.perf_java("srcline", "-o", run_dir, "--top", "0")
    figure("srcline.fast_seconds", f"{fast.seconds:.1f}")
    m = re.search(r"java_srcline_share: ([\d.]+)%", fast.stdout)
    check(m is not None and float(m.group(1)) >= 95.0, f"perf-java srcline reports the share ({m and m.group(1)}%)")
    fast_lines = collections.Counter()
    for line in fast.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and not line.startswith("#") and re.match(r"\S+\.java:\d+$", f[2]):
            fast_lines[f[2]] += int(f[1])
    perf_lines = collections.Counter()
    for n, sym, src in rows:
        if re.search(r"\.java:\d+$", src):
            perf_lines[os.path.basename(src)] += n
    top_perf = [k for k, _ in perf_lines.most_common(5)]
    agree = all(fast_lines[k] == perf_lines[k] for k in top_perf)
    print(f"top lines perf: {[(k, perf_lines[k]) for k in top_perf]}; fast: {[(k, fast_lines[k]) for k in top_perf]}")
    check(agree, "perf-java srcline gives the same samples as perf report --sort srcline for the top 5 lines")


def test_annotate(ctx):
    """perf annotate --stdio of a hot Java method shows File.java:N lines; the hot line leads."""
    run_dir = record_demo(ctx, "annotate", seconds="3", freq="999")
    p = ctx.perf_java("annotate", "-o", run_dir, "demo.Demo.divideChain", "--source-root", DEMO_SRC)
    out = p.stdout
    hot = hot_lines()["divideChain"]
    check(re.search(r"demo/Demo\.java:\d+", out) is not None, "annotate shows demo/Demo.java:N line markers")
    m = re.search(r"^\s*([\d.]+)\s+Demo\.java:(\d+)\s*$", out, re.M)
    check(m is not None and int(m.group(2)) == hot,
          f"annotate's per-line summary puts Demo.java:{hot} first (got {m and m.group(0).strip()})")
    src_line = open(os.path.join(DEMO_SRC, "demo", "Demo.java")).read().splitlines()[hot - 1].strip()
    check(src_line[:40] in out, "with --source-root, annotate interleaves the Java source text")
    check(re.search(r"^\s+\d+\.\d+ :\s+[0-9a-f]+:\s+\w+", out, re.M) is not None, "annotate shows instructions")


def test_no_k1(ctx):
    """perf 6.1 rule: without -k 1 inject fails with its message, and perf-java explains it."""
    run_dir = fresh(os.path.join(ctx.work, "no-k1"))
    os.makedirs(os.path.join(run_dir, "jit"))
    env = dict(ctx.env, JAVA_TOOL_OPTIONS=f"-agentpath:{ctx.agent}=dir={run_dir}/jit")
    run(["perf", "--buildid-dir", ctx.bid, "record", "-N", "-e", "cpu-clock", "-o",
         os.path.join(run_dir, "perf.data"), "--", "java", "-cp", ctx.demo_classes(), "demo.Demo", "1"], env=env)
    p = ctx.perf("inject", "--jit", "-i", os.path.join(run_dir, "perf.data"), "-o",
                 os.path.join(run_dir, "perf.jit.data"), check_rc=False)
    check(p.returncode != 0, f"perf inject --jit fails on a recording without -k 1 (rc={p.returncode})")
    check("jitted code must be sampled with perf record -k 1" in p.stderr, "perf says: " + p.stderr.strip()[:120])
    w = ctx.perf_java("inject", "-o", run_dir, check_rc=False)
    check(w.returncode != 0 and "recorded without -k 1" in w.stderr and "perf record -k 1" in w.stderr,
          "perf-java inject explains the missing -k 1: " + w.stderr.strip().splitlines()[0][:140])
    w = ctx.perf_java("-o", os.path.join(ctx.work, "no-k1-wrapper"), "-k", "realtime", "--",
                      "java", "-version", check_rc=False)
    check(w.returncode != 0 and "-k 1" in w.stderr and "CLOCK_MONOTONIC" in w.stderr,
          "perf-java refuses a non-monotonic -k before running anything: " + w.stderr.strip().splitlines()[0][:120])
    check(not os.path.exists(os.path.join(ctx.work, "no-k1-wrapper", "perf.data")), "nothing was recorded")


def test_sigkill(ctx):
    """A JVM killed with SIGKILL: the dump still injects, up to its last whole record."""
    run_dir = fresh(os.path.join(ctx.work, "sigkill"))
    script = ("java -cp {cp} demo.Demo 30 & pid=$!; sleep 6; kill -KILL $pid; wait $pid; exit 0"
              .format(cp=ctx.demo_classes()))
    ctx.perf_java("-o", run_dir, "-q", "-F", "1999", "--", "sh", "-c", script)
    dumps = [f for f in os.listdir(os.path.join(run_dir, "jit")) if f.endswith(".dump")]
    check(len(dumps) == 1, f"one dump ({dumps})")
    dump = jitdump_file.read(os.path.join(run_dir, "jit", dumps[0]))
    check(not any(r.id == jitdump_file.CLOSE for r in dump.records), "no CLOSE record: the JVM really died")
    res = symbolization(ctx, run_dir, "SIGKILLed JVM")
    figure("sigkill.symbolized_percent", f"{res['share']:.3f}")
    check(res["jit"] >= 300 and res["share"] >= 99.0,
          f"SIGKILLed JVM: {res['share']:.2f}% of {res['jit']} JIT samples symbolized (>= 99%)")

    # The same dump cut in the middle of a CODE_LOAD: perf must stop there, keeping the rest.
    loads = dump.loads()
    victim = loads[len(loads) // 2]
    cut_dir = fresh(os.path.join(ctx.work, "sigkill-cut"))
    os.makedirs(os.path.join(cut_dir, "jit"))
    shutil.copy(os.path.join(run_dir, "perf.data"), cut_dir)
    with open(os.path.join(run_dir, "jit", dumps[0]), "rb") as f:
        data = f.read(victim.offset + victim.size // 2)
    # perf finds the dump by the path in the marker mmap: put the cut copy there.
    orig = os.path.join(run_dir, "jit", dumps[0])
    saved = orig + ".whole"
    os.rename(orig, saved)
    try:
        for f in os.listdir(os.path.join(run_dir, "jit")):
            if f.startswith("jitted-"):
                os.unlink(os.path.join(run_dir, "jit", f))
        with open(orig, "wb") as f:
            f.write(data)
        cut = jitdump_file.read(orig)
        check(cut.tail_bytes > 0, f"the cut dump ends in a partial record ({cut.tail_bytes} bytes)")
        p = ctx.perf("inject", "--jit", "-i", os.path.join(cut_dir, "perf.data"), "-o",
                     os.path.join(cut_dir, "perf.jit.data"), check_rc=False)
        check(p.returncode == 0, f"perf inject accepts a dump truncated mid-record (rc={p.returncode})")
        jitted = [f for f in os.listdir(os.path.join(run_dir, "jit")) if f.startswith("jitted-")]
        whole = len(cut.loads())
        check(len(jitted) == whole,
              f"one jitted ELF per whole CODE_LOAD before the cut ({len(jitted)} == {whole} of {len(loads)})")
        names = {f"jitted-{r.pid}-{r.code_index}.so" for r in cut.loads()}
        check(set(jitted) == names, "and exactly those loads")
    finally:
        os.replace(saved, orig)
    shutil.rmtree(os.path.join(ctx.work, "buildid"), ignore_errors=True)


def test_format(ctx):
    """Every perf 6.1 jitdump rule (shared/reference/perf-consumer-and-agent.md §2), on a real run."""
    run_dir = record_demo(ctx, "format", seconds="2", freq="999")
    jitdir = os.path.join(run_dir, "jit")
    dumps = sorted(f for f in os.listdir(jitdir) if f.endswith(".dump"))
    check(len(dumps) == 1 and re.fullmatch(r"jit-\d+\.dump", dumps[0]) is not None,
          f"rule: the dump is named jit-<pid>.dump ({dumps})")
    path = os.path.join(jitdir, dumps[0])
    d = jitdump_file.read(path)
    pid = int(re.search(r"\d+", dumps[0]).group(0))
    raw = open(path, "rb").read(40)
    check(raw[0:4] == b"DTiJ", f"rule: magic 0x4A695444 in native (little-endian) order ({raw[0:4]!r})")
    check(d.version == 1, f"rule: header version == 1 (perf 6.1 rejects > 1) ({d.version})")
    check(d.header_size == 40, f"rule: header total_size == 40 exactly (6.1 cannot skip extra bytes) ({d.header_size})")
    check(d.flags == 0, f"rule: flags == 0, no arch timestamps (this VM has no TIME_CONV) ({d.flags:#x})")
    check(d.elf_mach == 62, f"header elf_mach is x86-64 (62) ({d.elf_mach})")
    check(d.pid == pid, f"rule: header pid == the process pid (6.1 compares it with the marker's pid) ({d.pid})")
    check(d.tail_bytes == 0, "the dump ends at a record boundary after a normal exit")
    ids = collections.Counter(r.id for r in d.records)
    check(set(ids) <= {0, 1, 2, 3, 4},
          f"rule: record ids < 5 (perf warns on others) with the default options ({dict(ids)})")
    check(ids[jitdump_file.CLOSE] == 1 and d.records[-1].id == jitdump_file.CLOSE, "a CLOSE record ends the file")
    check(all(r.size >= 16 for r in d.records), "rule: every record's total_size >= 16")
    loads = d.loads()
    check(len(loads) > 100, f"loads written ({len(loads)})")
    check(all(r.code_bytes_at_end and r.code_size > 0 for r in loads),
          "rule: every CODE_LOAD carries code_size code bytes, last in the record (perf reads them from the end)")
    check(len({r.code_index for r in loads}) == len(loads), "rule: code_index unique (a duplicate overwrites a jitted ELF)")
    check(all(r.pid == pid for r in loads), "rule: CODE_LOAD pid is the process pid (it names the jitted ELF)")
    check(all(r.name and "\n" not in r.name for r in loads), "every load has a name")
    # DEBUG_INFO: perf applies it to the *next* CODE_LOAD and ignores its own code_addr.
    bad_order = bad_entries = nd = 0
    recs = d.records
    for i, r in enumerate(recs):
        if r.id != jitdump_file.DEBUG_INFO:
            continue
        nd += 1
        nxt = recs[i + 1] if i + 1 < len(recs) else None
        if nxt is None or nxt.id != jitdump_file.CODE_LOAD or nxt.code_addr != r.code_addr:
            bad_order += 1
            continue
        addrs = [e[0] for e in r.entries]
        if (not addrs or addrs != sorted(addrs) or addrs[0] < nxt.code_addr
                or addrs[-1] >= nxt.code_addr + nxt.code_size
                or any(not e[3] or e[3] == b"\xff" or e[1] <= 0 for e in r.entries)):
            bad_entries += 1
    check(nd > 20, f"DEBUG_INFO records written ({nd})")
    check(bad_order == 0, f"rule: each DEBUG_INFO comes right before the CODE_LOAD it describes ({bad_order} misplaced)")
    check(bad_entries == 0, f"rule: DEBUG_INFO entries ascending, inside the code, full file names, no \\xff ({bad_entries} bad)")
    java_names = [r.name for r in loads if r.name.startswith("demo.Demo.")]
    check(any(n.startswith("demo.Demo.divideChain(long, int)") for n in java_names),
          f"Java method names readable in perf (names=java): {java_names[:3]}")
    # One jitted-<pid>-<index>.so per load, written by perf inject into the dump's directory.
    jitted = {f for f in os.listdir(jitdir) if f.startswith("jitted-")}
    check(jitted == {f"jitted-{r.pid}-{r.code_index}.so" for r in loads},
          f"rule: perf inject wrote one jitted-<pid>-<index>.so per CODE_LOAD into the dump directory ({len(jitted)} for {len(loads)})")
    # The marker: an executable mmap of the dump in perf.data, from the JVM's pid.
    p = ctx.perf("script", "-i", os.path.join(run_dir, "perf.data"), "--show-mmap-events", "-F", "pid")
    marker = [l for l in p.stdout.splitlines() if "PERF_RECORD_MMAP" in l and dumps[0] in l]
    check(len(marker) == 1 and "r-xp" in marker[0] and f" {pid}/" in marker[0],
          f"rule: one PROT_EXEC marker mmap of the dump, from pid {pid}: {marker[:1]}")
    # The clock: perf.data was recorded with -k 1 (use_clockid, clockid 1).
    h = ctx.perf("report", "-i", os.path.join(run_dir, "perf.data"), "--header-only")
    check(re.search(r"use_clockid = 1", h.stdout) is not None and re.search(r"clockid = 1\b", h.stdout) is not None,
          "rule: recorded with -k 1 (use_clockid = 1, clockid = 1 in the event attributes)")
    # Load timestamps in perf's clock domain: inside the recording's time span.
    ts = [r.timestamp for r in loads]
    times = [float(r[1]) * 1e9 for r in script_rows(ctx, os.path.join(run_dir, "perf.data"))]
    check(min(times) - 5e9 < min(ts) and max(ts) < max(times) + 1e9,
          "rule: CLOCK_MONOTONIC timestamps, in the same domain as perf's sample times")
    if ctx.tool:
        p = run([ctx.tool, "check", path], check_rc=False)
        check(p.returncode == 0, f"jitdump check accepts the dump: {p.stdout.strip()[-200:]} {p.stderr.strip()[-200:]}")


def test_cleanup(ctx):
    """perf's side effects stay in the run directory: ~/.debug is untouched; clean removes the
    jitted ELFs; the reports still work after clean (inject runs again)."""
    debug = os.path.join(ctx.home, ".debug")
    os.makedirs(os.path.join(debug, "sentinel"), exist_ok=True)
    open(os.path.join(debug, "sentinel", "keep"), "w").write("x")

    def snapshot(top):
        return sorted((os.path.relpath(os.path.join(d, f), top), os.path.getsize(os.path.join(d, f)))
                      for d, _, fs in os.walk(top) for f in fs)
    before = snapshot(ctx.home)
    tmp_maps = {f for f in os.listdir("/tmp") if f.startswith("perf-")}
    run_dir = fresh(os.path.join(ctx.work, "cleanup"))
    ctx.perf_java("-o", run_dir, "-q", "-F", "999", "--", "java", "-cp", ctx.demo_classes(), "demo.Demo", "2")
    check(snapshot(ctx.home) == before, "$HOME (and ~/.debug) unchanged by a perf-java run")
    check(not os.path.exists(os.path.join(run_dir, ".buildid")), "no build-id cache left in the run directory")
    new_maps = {f for f in os.listdir("/tmp") if f.startswith("perf-")} - tmp_maps
    check(not new_maps, f"no /tmp/perf-*.map left behind ({sorted(new_maps)[:3]})")
    summary = disk_figures(run_dir, "demo2s")
    n = len([f for f in os.listdir(os.path.join(run_dir, "jit")) if f.startswith("jitted-")])
    check(n > 100 and int(summary["jitted_elfs"]) == n, f"{n} jitted ELFs in the run's jit/ directory")
    p = ctx.perf_java("clean", "-o", run_dir)
    left = [f for f in os.listdir(os.path.join(run_dir, "jit")) if f.startswith("jitted-")]
    check(not left, f"clean removed the jitted ELFs: {p.stdout.strip()}")
    after_clean = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(run_dir) for f in fs)
    figure("demo2s.run_bytes_after_clean", after_clean)
    r = ctx.perf_java("report", "-o", run_dir)
    check("demo.Demo.divideChain" in r.stdout, "report after clean still names Java methods (inject reran)")
    check(snapshot(ctx.home) == before, "$HOME still unchanged after report")
    ctx.perf_java("clean", "-o", run_dir, "--all")
    check(not os.path.exists(run_dir), "clean --all removes the run directory")


def test_wrapper(ctx):
    """perf-java's own contract: clear errors, folded stacks with --call-graph, outputs listed."""
    env = dict(ctx.env, PERF="/nonexistent/perf")
    p = run([PERF_JAVA, "--", "java", "-version"], check_rc=False, env=env)
    check(p.returncode != 0 and "perf not found" in p.stderr, "perf missing: " + p.stderr.strip()[:100])
    p = ctx.perf_java("--", check_rc=False)
    check(p.returncode != 0 and "no command" in p.stderr, "no command: " + p.stderr.strip()[:80])
    p = ctx.perf_java("--agent", "/nonexistent.so", "--", "java", "-version", check_rc=False)
    check(p.returncode != 0 and "agent not found" in p.stderr, "agent missing: " + p.stderr.strip()[:80])
    # The paranoid/probe path: a probe for an event that cannot be opened must print the
    # perf_event_paranoid value and perf's own words, and exit non-zero.
    p = run(["bash", "-c", f"source <(sed -n '/^probe_sampling()/,/^}}/p' {PERF_JAVA}); prog=perf-java; "
             f"d=$(mktemp -d); probe_sampling $d no-such-event; echo survived"], check_rc=False, env=ctx.env)
    check(p.returncode != 0 and "perf_event_paranoid" in p.stderr and "survived" not in p.stdout,
          "sampling impossible: clear message with perf_event_paranoid: " + p.stderr.strip().splitlines()[0][:100])

    run_dir = fresh(os.path.join(ctx.work, "callgraph"))
    p = ctx.perf_java("-o", run_dir, "-g", "-F", "999", "--", "java", "-cp", ctx.demo_classes(), "demo.Demo", "2")
    check("PreserveFramePointer" in open(os.path.join(run_dir, "perf.data"), "rb").read().decode("latin1")
          or "PreserveFramePointer" in p.stderr, "--call-graph starts the JVM with -XX:+PreserveFramePointer")
    check("--call-graph fp" in open(os.path.join(run_dir, "command")).read(), "--call-graph records with fp")
    for f in ("perf.data", "perf.jit.data", "report.txt", "srcline.txt", "folded.txt", "summary.txt"):
        check(os.path.exists(os.path.join(run_dir, f)), f"run directory has {f}")
    check(run_dir in p.stdout, "perf-java prints where the results are")
    folded = open(os.path.join(run_dir, "folded.txt")).read().splitlines()
    ok = all(re.match(r"^\S.*\s\d+$", l) for l in folded)
    check(folded and ok, f"folded.txt is 'frame;frame;... count' ({len(folded)} stacks)")
    # With frame pointers, stacks in compiled Java code unwind through the (interpreted) main
    # and the JVM's call stub down to the launcher's JavaMain.
    hot = [l for l in folded if "demo.Demo.inlinedCaller" in l]
    total = sum(int(l.rsplit(" ", 1)[1]) for l in hot)
    good = sum(int(l.rsplit(" ", 1)[1]) for l in hot if "JavaMain;" in l and ";call_stub;" in l)
    check(total > 0 and good >= 0.9 * total,
          f"Java stacks unwind: {good}/{total} inlinedCaller samples reach JavaMain through call_stub")
    t = ctx.perf_java("folded", "-o", run_dir)
    check(t.stdout.splitlines() == folded, "perf-java folded regenerates folded.txt")


def test_inline_folded(ctx):
    """inline=on: perf inject stays quiet (perf-java strips the samply records first) and the
    folded stacks expand a JIT frame into its inline chain: Demo.leaf() is inlined into
    Demo.inlinedCaller() (its hot line is marked "// HOT: leaf"), so its samples must show
    as "...;demo.Demo.inlinedCaller;demo.Demo.leaf", a frame perf alone never shows."""
    if not ctx.tool:
        check(False, "the jitdump tool is needed to fold with inline chains (build it)")
    run_dir = record_demo(ctx, "inline-folded", seconds="3", freq="999", agent_opts="inline=on", extra=("-g",))
    dumps = [f for f in os.listdir(os.path.join(run_dir, "jit")) if re.match(r"jit-\d+\.dump$", f)]
    check(any(os.path.exists(os.path.join(run_dir, "jit", d + ".inline")) for d in dumps),
          "inline records moved to jit-PID.dump.inline before inject")
    log = os.path.join(run_dir, "inject.log")
    check(not os.path.exists(log) or "unknown record type" not in open(log).read(),
          "perf inject printed no unknown-record warnings")
    folded = open(os.path.join(run_dir, "folded.txt")).read().splitlines()
    def count(pattern):
        return sum(int(l.rsplit(" ", 1)[1]) for l in folded if re.search(pattern, l))
    expanded = count(r"demo\.Demo\.inlinedCaller;demo\.Demo\.leaf( |;)")
    caller = count(r"demo\.Demo\.inlinedCaller( |;)")
    figure("inline_folded.caller_samples", caller)
    figure("inline_folded.expanded_samples", expanded)
    check(caller > 0 and expanded >= 0.5 * caller,
          f"{expanded} of {caller} inlinedCaller samples expanded into ...;inlinedCaller;leaf")


TESTS = {name[5:]: fn for name, fn in globals().items() if name.startswith("test_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("test", choices=sorted(TESTS))
    ap.add_argument("--agent", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tool")
    args = ap.parse_args()
    args.work = os.path.join(args.work, args.test)
    ctx = Ctx(args)
    require_sampling(ctx)
    t0 = time.monotonic()
    TESTS[args.test](ctx)
    print(f"{args.test}: {time.monotonic() - t0:.1f} s, {len(failures)} failed check(s)")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
