"""`jitdump report` on real recordings (perf record, real JVMs): inline frames at the sampled pc
and at the call instruction of every caller, with and without -g, on JDK 17 and the newer JDKs;
two JVMs in one recording; a JVM the agent attached to while perf recorded; a JVM whose dump went
to jit-<pid>-2/ because another JVM with its pid held jit-<pid>.dump; and the javac
workload, whose source-line share must be what the dumps' line tables give, the same with and
without -g (perf-java -g once reported 0.00 %)."""
import bisect
import collections
import fcntl
import json
import re
import shlex
import shutil
import struct
import subprocess
import time

import pytest

from support.checks import check, figure, log

from .report_consumers import FlameGraphPage, pprof, pprof_top, pprof_traces
from .report_runs import (C, CALLEE, INLINING, OTHER, Model, check_same_profiles, folded, marked_lines, model, report,
                          same_profiles, two_callers)
from .profile_diff import compare as _compare
from .runs import fresh, run


@pytest.mark.meson(timeout=900)
@pytest.mark.parametrize("graph", ["g", "flat"])
def test_report_inlining(ctx, graph):
    """callee() is inlined into inliningCaller() and compiled on its own for otherCaller(). The
    folded stacks, the profile model, the pprof as `go tool pprof` reads it and the flame graph
    as Chromium draws it must show both shapes: the inlined callee as an inner frame of
    inliningCaller's code, with callee's own line and the caller's call line; the standalone
    callee under otherCaller (with -g), whose frame is looked up inside its call instruction and
    so carries the call's line."""
    classes, jvm_opts = two_callers(ctx)
    lines = marked_lines()
    run_dir = fresh(ctx.work / f"two-callers-{graph}")
    ctx.perf_java("-o", run_dir, "-q", "-F", "999", *(["-g"] if graph == "g" else []), "--", ctx.jdk.java, *jvm_opts,
                  "-cp", classes, "report.TwoCallers", "4")
    check_same_profiles(ctx, run_dir / "perf.data", f"two-callers-{graph}", "--dumps", run_dir / "jit")
    stacks = folded(run_dir / "folded.txt")
    total = sum(n for _, n in stacks)
    inlined = sum(n for f, n in stacks if f[-2:] == [INLINING, CALLEE])
    if graph == "g":
        alone = sum(n for f, n in stacks if f[-2:] == [OTHER, CALLEE])
    else:
        alone = sum(n for f, n in stacks if f[-2:] == ["java", CALLEE])  # no chain: the leaf alone
    log(f"{total} samples: {inlined} in callee inlined into inliningCaller, {alone} in callee compiled alone")
    ctx.check(inlined >= 0.2 * total, f"folded: ...;inliningCaller;callee holds {inlined} of {total} samples")
    ctx.check(alone >= 0.2 * total, f"folded: callee compiled on its own holds {alone} of {total} samples")
    ctx.check(not any(f[-2:] == [OTHER, CALLEE] and n for f, n in stacks if graph == "flat"),
              "without -g, no stack has a caller frame")

    annotated = ctx.perf_java("folded", "-o", run_dir, "--annotate").stdout
    ctx.check(f";{INLINING}_[j];{CALLEE}_[i] " in annotated, "--annotate: inliningCaller _[j], callee inlined _[i]")
    if graph == "g":
        ctx.check(f";{OTHER}_[j];{CALLEE}_[j] " in annotated, "--annotate: otherCaller _[j] calls callee _[j]")
        ctx.check(";Interpreter_[0];" in annotated, "--annotate: the interpreted main() is _[0]")

    # The model the pprof and HTML writers get.
    m = model(ctx, run_dir / "perf.data", run_dir / "profile.json", "--dumps", run_dir / "jit")
    want_inlined = [(CALLEE, "inlined", lines["callee"]), (INLINING, "compiled", lines["inlining call"])]
    leaf_inlined = m.count(lambda stack: stack[0] == want_inlined)
    ctx.check(leaf_inlined >= 0.2 * m.total,
              f"model: {leaf_inlined} samples with the leaf chain callee:{lines['callee']} (inlined) in "
              f"inliningCaller:{lines['inlining call']}")
    leaf_alone = m.count(lambda stack: stack[0] == [(CALLEE, "compiled", lines["callee"])])
    ctx.check(leaf_alone >= 0.2 * m.total, f"model: {leaf_alone} samples in callee compiled alone at its line")
    ctx.check(m.count(lambda stack: any(c[0][0] == CALLEE and len(c) > 1 and c[1][0] == OTHER for c in stack)) == 0,
              "model: callee never inlined into otherCaller (the directive holds)")
    if graph == "g":
        # The caller frame of the standalone callee: otherCaller at the line of its call.
        under_other = m.count(lambda stack: stack[0][0][0] == CALLEE and len(stack[0]) == 1 and len(stack) > 1 and
                              stack[1] == [(OTHER, "compiled", lines["other call"])])
        ctx.check(under_other >= 0.8 * leaf_alone,
                  f"model: {under_other} of {leaf_alone} standalone callee samples have otherCaller:"
                  f"{lines['other call']} (the call instruction's line) as caller")
    # pprof, read by go tool pprof: the inlined callee's Location carries callee (inline) at its
    # line and inliningCaller at the call's line; with -g the standalone callee's caller is
    # otherCaller at its call line.
    traces = pprof_traces(run_dir / "profile.pb.gz", ctx.work / f"pprof-{graph}")
    pp_total = sum(n for n, _ in traces)
    callee_at = f"{CALLEE} report/TwoCallers.java:{lines['callee']}"
    pp_inlined = sum(n for n, f in traces if f[:2] == [f"{callee_at} (inline)",
                                                      f"{INLINING} report/TwoCallers.java:{lines['inlining call']}"])
    ctx.check(pp_total == m.total, f"pprof: {pp_total} samples, the model's {m.total}")
    ctx.check(pp_inlined >= 0.2 * pp_total,
              f"pprof -traces: {pp_inlined} of {pp_total} samples in callee:{lines['callee']} (inline) inside "
              f"inliningCaller:{lines['inlining call']}")
    pp_alone = sum(n for n, f in traces if f[0] == callee_at)
    ctx.check(pp_alone >= 0.2 * pp_total, f"pprof -traces: {pp_alone} samples in callee compiled alone")
    if graph == "g":
        pp_other = sum(n for n, f in traces
                       if f[:2] == [callee_at, f"{OTHER} report/TwoCallers.java:{lines['other call']}"])
        ctx.check(pp_other >= 0.8 * pp_alone,
                  f"pprof -traces: {pp_other} of {pp_alone} standalone callee samples under otherCaller:"
                  f"{lines['other call']}")
    top = pprof_top(run_dir / "profile.pb.gz", ctx.work / f"pprof-{graph}")
    # pprof marks the merged row "(inline)", "(partial-inline)" or not at all by its own merging
    # rules, which vary from run to run on the same profile (the first location merged decides);
    # the inline frames themselves are asserted through -traces above. Here: the row of callee at
    # its line and its flat samples (the inlined and the standalone callee at that line).
    top_callee = {k: v for k, v in top.items() if k.startswith(CALLEE)}
    ctx.check(sum(v for k, v in top_callee.items() if k == callee_at or k.startswith(callee_at + " (")) >=
              0.4 * pp_total, f"pprof -top -lines: callee at its line with its flat samples ({top_callee})")

    # pprof's header names the profiled program: the JVM's executable (pprof takes the first
    # mapping), not ld-linux-x86-64.so.2 or [kernel.kallsyms].
    header = pprof(run_dir / "profile.pb.gz", ctx.work / f"pprof-{graph}", "-top", "-nodecount=1")
    main = next((l.split(":", 1)[1].strip() for l in header.splitlines() if l.startswith("File:")), "")
    ctx.check(main == "java", f"pprof's header names the JVM's program: File: {main!r}")

    # The HTML flame graph, drawn by headless Chromium from its file.
    page = FlameGraphPage(run_dir / "flamegraph.html", ctx.work / f"browser-{graph}")
    try:
        ctx.check(page.total() == m.total, f"flame graph: {page.total()} samples, the model's {m.total}")
        nodes = page.nodes(CALLEE)
        fg_inlined = sum(n["total"] for n in nodes if n["kind"] == "inlined" and n["path"][-2:] == [INLINING, CALLEE])
        # The node is the method on that path: every line of the inlined callee, and the samples
        # of whatever it was running (kernel frames of a page fault) above it.
        any_line = m.count(lambda stack: any([(name, kind) for name, kind, _ in chain] ==
                                             [(CALLEE, "inlined"), (INLINING, "compiled")] for chain in stack))
        ctx.check(fg_inlined == any_line and fg_inlined >= leaf_inlined,
                  f"flame graph: callee inlined under inliningCaller holds {fg_inlined} samples (model {any_line})")
        ctx.check(all(n["drawn"] for n in nodes if n["total"] >= 0.01 * m.total), "flame graph: callee's nodes are drawn")
        if graph == "g":
            fg_other = sum(n["total"] for n in nodes if n["kind"] == "compiled" and n["path"][-2:] == [OTHER, CALLEE])
            ctx.check(fg_other >= 0.8 * leaf_alone,
                      f"flame graph: callee compiled alone under otherCaller holds {fg_other} samples")
        ctx.check(not any(n["path"][-2:] == [OTHER, CALLEE] and n["kind"] == "inlined" for n in nodes),
                  "flame graph: callee never drawn as inlined into otherCaller")
        requests = page.requests()
        ctx.check(requests == [page.url], f"flame graph: the page made no request but its own ({requests})")
    finally:
        page.close()

    text = (run_dir / "srcline.txt").read_text()
    share = float(re.search(r"java_srcline_share: ([\d.]+)%", text).group(1))
    figure(f"report.two_callers.{graph}.java_srcline_percent", share)
    ctx.check(share >= 95.0, f"srcline.txt: {share}% of the compiled-Java samples have a source line (perf-java "
                             "-g once reported 0.00%)")
    top = re.search(r"^\s+[\d.]+%\s+\d+\s+(\S+)\s+(\S+)", text, re.M)
    ctx.check(top is not None and top.group(1) == f"report/TwoCallers.java:{lines['callee']}" and top.group(2) == CALLEE,
              f"srcline.txt: the hottest line is callee's ({top and top.group(0).strip()})")
    ctx.check.verify()


@pytest.mark.meson(timeout=900)
def test_report_two_jvms(ctx):
    """A launcher starting two JVMs under one perf-java: each JVM's samples are named from its own
    dump, each JVM is listed with its agent's statistics."""
    classes, jvm_opts = two_callers(ctx)
    run_dir = fresh(ctx.work / "two-jvms")
    script = (f"{ctx.jdk.java} {' '.join(jvm_opts)} -cp {classes} report.TwoCallers 3 & "
              f"{ctx.jdk.java} -cp {ctx.demo_classes()} demo.Demo 3 & wait")
    ctx.perf_java("-o", run_dir, "-q", "-g", "-F", "999", "--", "sh", "-c", script)
    check_same_profiles(ctx, run_dir / "perf.data", "two-jvms")
    summary = json.loads((run_dir / "summary.json").read_text())
    jvms = [p for p in summary["processes"] if p["jvm"]]
    ctx.check(len(jvms) == 2 and len({p["dump"] for p in jvms}) == 2,
              f"two JVMs with their own dumps: {[(p['pid'], p.get('dump')) for p in jvms]}")
    for p in jvms:
        ctx.check(p["samples"] >= 500 and p["jit_named_percent"] >= 99.0,
                  f"JVM {p['pid']}: {p['jit_named_percent']}% of {p['jit']} JIT samples named")
        ctx.check("agent_stats" in p and p["agent_stats"].get("events") is not None,
                  f"JVM {p['pid']}: its agent-stats-{p['dump_pid']}.json is in the summary")
    m = model(ctx, run_dir / "perf.data", run_dir / "profile.json")
    programs = collections.defaultdict(set)
    for s in m.samples:
        for loc in s["locations"]:
            for name, kind, _ in m.chain(loc):
                if kind in ("compiled", "inlined") and name.split(".")[0] in ("report", "demo"):
                    programs[s["process"]].add(name.split(".")[0])
    ctx.check(sorted(tuple(sorted(v)) for v in programs.values()) == [("demo",), ("report",)],
              f"each JVM's samples name only its own program's methods: {dict(programs)}")
    ctx.check.verify()


@pytest.mark.meson(timeout=900)
def test_report_late_attach(ctx, cleanup):
    """perf records a JVM that runs without the agent, the agent is attached (scripts/bin/attach)
    halfway: the dump appears in the middle of the recording, and samples from before the attach
    are named from the code the attach replayed."""
    classes, jvm_opts = two_callers(ctx)
    run_dir = fresh(ctx.work / "late-attach")
    (run_dir / "jit").mkdir(parents=True)
    jvm = subprocess.Popen([ctx.jdk.java, "-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions",
                            "-XX:+DebugNonSafepoints", *jvm_opts[1:], "-cp", classes, "report.TwoCallers", "8"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ctx.env, text=True)
    cleanup.kill(jvm)
    time.sleep(1)
    record = subprocess.Popen(["perf", "--buildid-dir", ctx.bid, "record", "-q", "-k", "1", "-e", "cpu-clock", "-F",
                               "999", "-g", "-p", str(jvm.pid), "-o", run_dir / "perf.data"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ctx.env, text=True)
    cleanup.kill(record)
    time.sleep(2)
    attach = run([ctx.build.scripts / "bin" / "attach", str(jvm.pid), f"dir={run_dir / 'jit'},inline=on"],
                 env=dict(ctx.env, JITDUMPAGENT_LIB=str(ctx.agent)), timeout=120)
    log(attach.stdout + attach.stderr)
    out, _ = jvm.communicate(timeout=120)
    check(jvm.returncode == 0, f"the JVM failed: {out[-2000:]}")
    record.wait(timeout=120)
    check_same_profiles(ctx, run_dir / "perf.data", "late-attach")
    m = model(ctx, run_dir / "perf.data", run_dir / "profile.json")
    report(ctx, run_dir / "perf.data", "-q", "--summary", run_dir / "summary.json")
    summary = json.loads((run_dir / "summary.json").read_text())
    jvms = [p for p in summary["processes"] if p["jvm"]]
    check(len(jvms) == 1, f"one JVM with a dump: {summary['processes']}")
    p = jvms[0]
    log(f"late attach: {p['samples']} samples, {p['jit_named_percent']}% of JIT named, reader {summary['reader']}")
    ctx.check(summary["reader"]["jit_before_load"] > 0, "samples from before the attach were named from replayed code")
    ctx.check(p["jit_named_percent"] >= 99.0, f"{p['jit_named_percent']}% of the JVM's JIT samples named")
    inlined = m.count(lambda stack: [(name, kind) for name, kind, _ in stack[0]] ==
                      [(CALLEE, "inlined"), (INLINING, "compiled")])
    ctx.check(inlined >= 0.1 * m.total, f"{inlined} samples in callee inlined into inliningCaller")
    ctx.check.verify()


@pytest.mark.meson(timeout=900)
def test_report_same_pid(ctx, cleanup):
    """Two JVMs with one pid writing into one directory (two containers sharing a volume, each JVM
    pid 1): the recorded JVM finds jit-<pid>.dump held by the other and writes
    jit-<pid>-2/jit-<pid>.dump. `jitdump report --dumps DIR` must take the dump the JVM's marker
    names, not the other's jit-<pid>.dump, whose header pid matches too. Without the markers (a
    --script without them) the dump is found by name in the subdirectory, and where both are
    candidates one warning names them and the one used."""
    classes, jvm_opts = two_callers(ctx)
    run_dir = fresh(ctx.work / "same-pid")
    jit = run_dir / "jit"
    jit.mkdir(parents=True)
    pid_file, go, data = run_dir / "pid", run_dir / "go", run_dir / "perf.data"
    java = shlex.join(str(a) for a in [ctx.jdk.java, f"-agentpath:{ctx.agent}=dir={jit}", *jvm_opts, "-cp", classes,
                                       "report.TwoCallers", "4"])
    # The shell writes its pid (java keeps it through exec) and waits until the other dump is held.
    shell = f"echo $$ > {shlex.quote(str(pid_file))}; while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.01; done; " \
            f"exec {java}"
    record = subprocess.Popen(["perf", "--buildid-dir", ctx.bid, "record", "-q", "-k", "1", "-e", "cpu-clock", "-F",
                               "999", "-o", data, "--", "sh", "-c", shell],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ctx.env, text=True)
    cleanup.kill(record)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    pid = int(pid_file.read_text())
    # The other JVM's dump: a real dump (node's, committed) with this pid in its header, held as
    # the agent holds its own.
    held = jit / f"jit-{pid}.dump"
    other = bytearray((ctx.build.repo / "cpp-tests" / "fixtures" / "node-v20-fib.jitdump").read_bytes())
    struct.pack_into("<I", other, 20, pid)
    with open(held, "wb") as holder:
        holder.write(other)
        holder.flush()
        fcntl.flock(holder, fcntl.LOCK_SH)
        go.touch()
        out, _ = record.communicate(timeout=300)
    check(record.returncode == 0, f"perf record of the JVM: exit {record.returncode}", out[-3000:])
    moved = jit / f"jit-{pid}-2" / f"jit-{pid}.dump"
    check(moved.is_file(), f"the JVM wrote no {moved}", out[-3000:])

    def named(m: Model) -> int:
        return m.count(lambda stack: any(name.startswith(C) for chain in stack for name, _, _ in chain))

    def jvm_dump(m: Model) -> str:
        """The dump(s) of the pid's process images (the shell before its exec has none)."""
        return ", ".join(sorted({p["dump"] for p in m.processes if p["pid"] == pid and p["dump"]}))

    check_same_profiles(ctx, data, "same-pid", "--dumps", jit)
    # With the markers: the one in jit-<pid>-2/ decides.
    m = model(ctx, data, run_dir / "profile.json", "--dumps", jit)
    log(f"pid {pid}, marker: dump {jvm_dump(m)}, {named(m)} of {m.total} samples name TwoCallers")
    ctx.check(jvm_dump(m) == str(moved), f"--dumps {jit}: the JVM's dump is {moved}, its marker's "
              f"(got {jvm_dump(m)!r})")
    ctx.check(named(m) >= 0.5 * m.total, f"{named(m)} of {m.total} samples name TwoCallers methods")

    # Without them: the samples only, as a --script without side-band events (a dump found by
    # name then describes its pid all along; with task events, the shell's exec would end that).
    script = ctx.perf("script", "-i", data, "--show-mmap-events", "--show-task-events", "-F",
                      "comm,pid,tid,time,period,event,ip,sym,dso", "--ns", "--no-inline").stdout.splitlines(True)
    check(any("PERF_RECORD_MMAP" in line and f"/jit-{pid}.dump" in line for line in script),
          "the recording has no marker mmap of the dump")
    (run_dir / "no-markers.txt").write_text("".join(line for line in script if "PERF_RECORD_" not in line))

    def by_name(dumps_dir, name):
        p = run([ctx.tool.path, "report", "--script", run_dir / "no-markers.txt", "-q", "--profile-json",
                 run_dir / name, "--dumps", dumps_dir], env=ctx.env)
        return Model(run_dir / name), [line for line in p.stderr.splitlines() if "warning" in line]

    only = run_dir / "only-second"
    (only / moved.parent.name).mkdir(parents=True)
    shutil.copyfile(moved, only / moved.parent.name / moved.name)
    m, warnings = by_name(only, "only-second.json")
    log(f"no markers, --dumps {only}: dump {jvm_dump(m)}, {named(m)} of {m.total} samples name TwoCallers")
    ctx.check(jvm_dump(m) == str(only / moved.parent.name / moved.name),
              f"no markers: the dump in {only}'s jit-{pid}-2/ is found by name (got {jvm_dump(m)!r})")
    ctx.check(named(m) >= 0.5 * m.total and not warnings, f"no markers: {named(m)} of {m.total} samples name "
              f"TwoCallers methods, no warning ({warnings})")
    m, warnings = by_name(jit, "both.json")
    log(f"no markers, --dumps {jit}: dump {jvm_dump(m)}; {warnings}")
    ctx.check(len(warnings) == 1 and str(held) in warnings[0] and str(moved) in warnings[0] and
              f"using {held}" in warnings[0], f"no markers, both dumps: one warning naming both and the one used "
              f"({held}): {warnings}")
    ctx.check(jvm_dump(m) == str(held), f"no markers, both dumps: the warning's choice is used ({jvm_dump(m)})")
    ctx.check.verify()


# ------------------------------------------------------------------------------ javac shares

JIT_DSO = re.compile(r"perf-\d+\.map|//anon|\[anon|\[JIT\]")
JAVA_NAME = re.compile(r"^[^ (]+\.[^ (]+\(")  # names=java; an adapter's name has a space


class LineTables:
    """The dumps' own answer, computed here from `jitdump records --json` and nothing of the
    report's code: for a sampled pc at a time, the load (the latest in file order stamped at or
    before the sample; else the earliest covering it) and whether it is a compiled Java method
    with a source line at that pc (its inline record's line records, else its DEBUG_INFO)."""

    def __init__(self, dump):
        records = dump.records
        self.loads = []
        for i, r in enumerate(records):
            load = getattr(r, "load", None)
            if r.type != "CODE_LOAD" or not load or not load["code_size"]:
                continue
            ii, di = load["inline_info"], load["debug_info"]
            java = ii is not None or di is not None or bool(JAVA_NAME.match(load["name"]))
            if ii is not None:
                rows = sorted((l["code_offset"], l["line"]) for l in records[ii].inline["lines"])
            elif di is not None:
                rows = sorted((e["addr"] - load["code_addr"], e["line"]) for e in records[di].debug_info["entries"])
            else:
                rows = []
            self.loads.append((load["code_addr"], load["code_addr"] + load["code_size"], r.timestamp, i, java, rows))
        self.pages = collections.defaultdict(list)  # 4 KiB page -> loads touching it
        for entry in self.loads:
            for page in range(entry[0] >> 12, ((entry[1] - 1) >> 12) + 1):
                self.pages[page].append(entry)

    def line(self, pc, time_ns):
        """None outside Java code; else True/False: a line at pc."""
        cover = [e for e in self.pages.get(pc >> 12, ()) if e[0] <= pc < e[1]]
        if not cover:
            return None
        at = [e for e in cover if e[2] <= time_ns]
        load = max(at, key=lambda e: e[3]) if at else min(cover, key=lambda e: (e[2], e[3]))
        if not load[4]:
            return None
        rows = load[5]
        k = bisect.bisect_right(rows, (pc - load[0], float("inf"))) - 1
        return k >= 0 and rows[k][1] > 0


def dumps_answer(ctx, run_dir):
    """(compiled-Java samples, with a source line) from perf's sampled pcs and the line tables."""
    tables = {}
    for path in sorted((run_dir / "jit").glob("jit-*.dump")):
        dump = ctx.tool.records(path)
        tables[dump.pid] = LineTables(dump)
    p = ctx.perf("script", "-i", run_dir / "perf.data", "-F", "pid,time,ip,dso", "--ns", "-G", timeout=900)
    java = with_line = 0
    for row in p.stdout.splitlines():
        m = re.match(r"^\s*(\d+)\s+(\d+)\.(\d+):\s+([0-9a-f]+)\s+\((.*)\)\s*$", row)
        if not m or int(m.group(1)) not in tables or not JIT_DSO.search(m.group(5)):
            continue
        t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0"))
        has = tables[int(m.group(1))].line(int(m.group(4), 16), t)
        if has is not None:
            java += 1
            with_line += has
    return java, with_line


@pytest.mark.meson(timeout=3000)
def test_report_javac_shares(ctx):
    """javac compiling ~300 JDK sources, recorded with and without -g: the line share of the
    compiled-Java samples jitdump report gives is exactly what the dumps' line tables give (the
    reader loses nothing), and the same figure with and without -g."""
    root, listing = ctx.javac_sources()
    shares = {}
    for graph in ("g", "flat"):
        run_dir = fresh(ctx.work / f"javac-{graph}")
        out = fresh(ctx.work / f"javac-classes-{graph}")
        out.mkdir(parents=True)
        t0 = time.monotonic()
        ctx.perf_java("-o", run_dir, "-q", "-F", "999", *(["-g"] if graph == "g" else []), "--", ctx.jdk.javac,
                      "--patch-module", f"java.base={root}/java.base", "-d", out, "-nowarn", "-Xlint:none",
                      "-Xmaxwarns", "1", "-Xmaxerrs", "1", "-implicit:none", "-proc:none", f"@{listing}",
                      timeout=1800)
        log(f"javac {graph}: {time.monotonic() - t0:.1f} s under perf-java")
        check_same_profiles(ctx, run_dir / "perf.data", f"javac-{graph}")
        summary = json.loads((run_dir / "summary.json").read_text())
        java, with_line = dumps_answer(ctx, run_dir)
        log(f"javac {graph}: report {summary['java']} compiled-Java samples, {summary['java_with_line']} with a line "
            f"({summary['java_with_line_percent']}%); the dumps' line tables: {java}, {with_line}")
        ctx.check(summary["java"] >= 1000, f"javac {graph}: enough compiled-Java samples ({summary['java']})")
        ctx.check((summary["java"], summary["java_with_line"]) == (java, with_line),
                  f"javac {graph}: the report's ({summary['java']}, {summary['java_with_line']}) are the dumps' "
                  f"({java}, {with_line})")
        ctx.check(summary["jit_named_percent"] >= 99.9, f"javac {graph}: {summary['jit_named_percent']}% of JIT named")
        shares[graph] = summary["java_with_line_percent"]
        figure(f"report.javac.{graph}.java_with_line_percent", shares[graph])
        seconds = float(dict(l.split() for l in (run_dir / "summary.txt").read_text().splitlines())["report_seconds"])
        figure(f"report.javac.{graph}.report_seconds", seconds)
    ctx.check(min(shares.values()) >= 95.0, f"javac: line shares {shares} >= 95%")
    ctx.check(abs(shares["g"] - shares["flat"]) <= 1.5, f"javac: the same line share with and without -g ({shares})")
    ctx.check.verify()


@pytest.mark.meson(timeout=900)
def test_report_dwarf(ctx):
    """--call-graph dwarf: the perf.data reader unwinds each sample's user stack copy itself
    (libdwfl) where perf script uses perf's unwinder; the profiles must be the same, and the
    inlined callee still shows with its caller's call line at the leaf (DWARF unwinding stops at
    the first JIT frame: HotSpot's code has no CFI)."""
    classes, jvm_opts = two_callers(ctx)
    run_dir = fresh(ctx.work / "two-callers-dwarf")
    ctx.perf_java("-o", run_dir, "-q", "-F", "499", "--call-graph", "dwarf,8192", "--", ctx.jdk.java, *jvm_opts,
                  "-cp", classes, "report.TwoCallers", "3")
    check_same_profiles(ctx, run_dir / "perf.data", "two-callers-dwarf")
    m = model(ctx, run_dir / "perf.data", run_dir / "profile.json")
    leaf_inlined = m.count(lambda stack: [(n, k) for n, k, _ in stack[0]] == [(CALLEE, "inlined"), (INLINING, "compiled")])
    native_callers = m.count(lambda stack: any(chain and chain[0][1] == "native" for chain in stack[1:]))
    log(f"dwarf: {m.total} samples, {leaf_inlined} with the inlined callee at the leaf, {native_callers} with native "
        "callers unwound")
    ctx.check(leaf_inlined >= 0.2 * m.total, f"dwarf: {leaf_inlined} of {m.total} samples in callee inlined into "
                                             "inliningCaller")
    ctx.check(native_callers > 0, "dwarf: native frames below the leaf were unwound from the stack copies")
    ctx.check.verify()


@pytest.mark.meson(timeout=900)
def test_report_compressed_and_pipe(ctx, cleanup):
    """`perf record -z` (COMPRESSED records: one zstd stream) and pipe mode (`perf record -o - |
    jitdump report -`, with no perf on jitdump's PATH): the perf.data reader's profile is perf
    script's, and the stream read from standard input gives the same as the file it was
    saved to."""
    classes, jvm_opts = two_callers(ctx)
    run_dir = fresh(ctx.work / "compressed-pipe")
    run_dir.mkdir(parents=True)
    ctx.perf_java("-o", run_dir / "z", "-q", "-g", "-z", "-F", "999", "--", ctx.jdk.java, *jvm_opts, "-cp", classes,
                  "report.TwoCallers", "3")
    info = json.loads(ctx.tool.run("perfdata", "--json", run_dir / "z" / "perf.data").stdout.splitlines()[-1])
    ctx.check(info["stats"]["compressed"] > 0, f"perf record -z wrote {info['stats']['compressed']} COMPRESSED records")
    check_same_profiles(ctx, run_dir / "z" / "perf.data", "compressed", "--dumps", run_dir / "z" / "jit")

    jit = run_dir / "pipe-jit"
    jit.mkdir(parents=True)
    saved = run_dir / "pipe.data"
    record = subprocess.Popen(["perf", "--buildid-dir", ctx.bid, "record", "-q", "-k", "1", "-e", "cpu-clock", "-F",
                               "999", "-g", "-o", "-", "--", ctx.jdk.java, f"-agentpath:{ctx.agent}=dir={jit},inline=on",
                               "-XX:+PreserveFramePointer", *jvm_opts, "-cp", classes, "report.TwoCallers", "3"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ctx.env)
    cleanup.kill(record)
    tee = subprocess.Popen(["tee", saved], stdin=record.stdout, stdout=subprocess.PIPE)
    record.stdout.close()
    no_perf = dict(ctx.env, PATH="/nonexistent", PERF="/nonexistent/perf")
    report_p = subprocess.run([ctx.tool.path, "report", "-", "-q", "--profile-json",
                               run_dir / "stdin.json"], stdin=tee.stdout, capture_output=True, text=True,
                              env=no_perf, timeout=900)
    tee.stdout.close()
    record.wait(timeout=300)
    tee.wait(timeout=60)
    check(report_p.returncode == 0, f"jitdump report - failed: {report_p.stderr[-3000:]}")
    from_stdin = Model(run_dir / "stdin.json")
    inlined = from_stdin.count(lambda stack: [(n, k) for n, k, _ in stack[0]] ==
                               [(CALLEE, "inlined"), (INLINING, "compiled")])
    log(f"pipe: {from_stdin.total} samples from standard input, {inlined} in the inlined callee")
    ctx.check(from_stdin.total > 500 and inlined >= 0.2 * from_stdin.total,
              f"pipe, no perf on PATH: {inlined} of {from_stdin.total} samples name the inlined callee")
    total, equal, diffs = same_profiles(ctx.tool.path, ctx.env, saved, run_dir / "pipe-file", "pipe")
    ctx.check(total > 0 and equal == total, f"pipe mode saved to a file: perf.data reader = perf script "
                                             f"({equal} of {total})")
    stdin_total, stdin_equal, _ = _compare(run_dir / "stdin.json", run_dir / "pipe-file" / "perfdata.json")
    # A stream is read once: samples taken before the agent mapped its dump (JVM start-up) cannot
    # be named from that dump, where the saved file's side-band pass finds it first.
    ctx.check(stdin_total == total and stdin_equal >= 0.97 * total,
              f"pipe: standard input gives the profile of the saved stream but for start-up samples before the "
              f"dump's marker ({stdin_equal} of {stdin_total})")
    ctx.check.verify()


@pytest.mark.meson(timeout=1500)
def test_report_compressed_deep_stacks(ctx):
    """`perf record --call-graph dwarf,65528 -z` (perf-java --interp=65528 -z's recording) of javac,
    whose threads' stack copies fill whole compressed chunks: jitdump report reads every byte perf
    record compressed (the reader's decompressed total is perf record's "original" size) and every
    sample, and names interpreted frames. perf 6.1 itself stops at some of these recordings' first
    COMPRESSED record whose content is larger than its decompression buffer ("Couldn't
    decompress data"): through perf script, as the report read recordings before, they came out
    empty (scripts/bench/interp-recording met one)."""
    root, listing = ctx.javac_sources()
    files = [line for line in listing.read_text().splitlines() if line.strip()][:120]
    run_dir = fresh(ctx.work / "deep-z")
    (run_dir / "jit").mkdir(parents=True)
    (run_dir / "files.txt").write_text("\n".join(files) + "\n")
    data = run_dir / "perf.data"
    r = ctx.perf("record", "-k", "1", "-e", "cpu-clock", "-F", "999", "--call-graph", "dwarf,65528", "-z", "-o", data,
                 "--", ctx.jdk.javac, f"-J-agentpath:{ctx.agent}=dir={run_dir / 'jit'},interp=on",
                 "-J-XX:+PreserveFramePointer", "--patch-module", f"java.base={root}/java.base", "-d", run_dir / "out",
                 "-nowarn", "-Xlint:none", "-Xmaxwarns", "1", "-Xmaxerrs", "1", "-implicit:none", "-proc:none",
                 f"@{run_dir / 'files.txt'}", timeout=1200)
    m = re.search(r"compressed \(original ([\d.]+) MB", r.stderr)
    check(m is not None, f"perf record -z printed no original size: {r.stderr[-1000:]}")
    original_mb = float(m.group(1))
    summary_path = run_dir / "summary.json"
    p = run([ctx.tool.path, "report", data, "-q", "--summary", summary_path], env=ctx.env, timeout=900)
    summary = json.loads(summary_path.read_text())
    info = json.loads(ctx.tool.run("perfdata", "--json", data).stdout.splitlines()[-1])
    decompressed_mb = info["stats"]["decompressed_bytes"] / (1 << 20)
    recording = summary["recording"]
    walks = summary.get("interpreted_frames") or {}
    perf_stats = ctx.perf("report", "-i", data, "--stats", check_rc=False, timeout=900)
    perf_failed = "decompress" in perf_stats.stderr or perf_stats.returncode != 0
    log(f"dwarf,65528 -z: perf record compressed {original_mb:.3f} MB; the reader decompressed {decompressed_mb:.3f} MB "
        f"in {info['stats']['compressed']} COMPRESSED records; report: {recording['samples']} samples, "
        f"warnings {recording['warnings']}; interpreted frames {walks}; perf report --stats "
        f"{'failed: ' + perf_stats.stderr.strip()[-300:] if perf_failed else 'read it'}")
    figure("report.deep_z.samples", recording["samples"])
    ctx.check(info["stats"]["compressed"] > 0 and abs(decompressed_mb - original_mb) <= 0.001,
              f"the reader decompressed {decompressed_mb:.3f} MB, perf record compressed {original_mb:.3f} MB")
    ctx.check(recording["samples"] >= 1000 and not recording["damaged"],
              f"jitdump report read {recording['samples']} samples, damaged {recording['damaged']}: {p.stderr[-500:]}")
    ctx.check(recording["samples"] == info["counts"].get("SAMPLE"), "the report took every sample the reader read")
    ctx.check(walks.get("named", 0) > 0, f"interpreted frames named in the deep stacks ({walks})")
    ctx.check.verify()
