"""scripts/bin/perf-java's own contract: clear errors (no perf, no command, no agent, no -k 1,
sampling impossible), side effects kept in the run directory, clean, call graphs and folded
stacks."""
import os
import re

from support.checks import figure

from .runs import disk_figures, fresh, run


def test_no_k1(ctx):
    """perf 6.1 rule: without -k 1 inject fails with its message, and perf-java explains it."""
    check = ctx.check
    run_dir = fresh(ctx.work / "no-k1")
    (run_dir / "jit").mkdir(parents=True)
    env = dict(ctx.env, JAVA_TOOL_OPTIONS=f"-agentpath:{ctx.agent}=dir={run_dir}/jit")
    run(["perf", "--buildid-dir", ctx.bid, "record", "-N", "-e", "cpu-clock", "-o", run_dir / "perf.data",
         "--", ctx.jdk.java, "-cp", ctx.demo_classes(), "demo.Demo", "1"], env=env)
    p = ctx.perf("inject", "--jit", "-i", run_dir / "perf.data", "-o", run_dir / "perf.jit.data", check_rc=False)
    check(p.returncode != 0, f"perf inject --jit fails on a recording without -k 1 (rc={p.returncode})")
    check("jitted code must be sampled with perf record -k 1" in p.stderr, "perf says: " + p.stderr.strip()[:120])
    w = ctx.perf_java("inject", "-o", run_dir, check_rc=False)
    check(w.returncode != 0 and "recorded without -k 1" in w.stderr and "perf record -k 1" in w.stderr,
          "perf-java inject explains the missing -k 1: " + w.stderr.strip().splitlines()[0][:140])
    w = ctx.perf_java("-o", ctx.work / "no-k1-wrapper", "-k", "realtime", "--", "java", "-version", check_rc=False)
    check(w.returncode != 0 and "-k 1" in w.stderr and "CLOCK_MONOTONIC" in w.stderr,
          "perf-java refuses a non-monotonic -k before running anything: " + w.stderr.strip().splitlines()[0][:120])
    check(not (ctx.work / "no-k1-wrapper" / "perf.data").exists(), "nothing was recorded")


def test_cleanup(ctx):
    """perf's side effects stay in the run directory: ~/.debug is untouched; clean removes the
    jitted ELFs; the reports still work after clean (inject runs again)."""
    check = ctx.check
    debug = ctx.home / ".debug"
    (debug / "sentinel").mkdir(parents=True, exist_ok=True)
    (debug / "sentinel" / "keep").write_text("x")

    def snapshot(top):
        return sorted((os.path.relpath(os.path.join(d, f), top), os.path.getsize(os.path.join(d, f)))
                      for d, _, fs in os.walk(top) for f in fs)
    before = snapshot(ctx.home)
    tmp_maps = {f for f in os.listdir("/tmp") if f.startswith("perf-")}
    run_dir = fresh(ctx.work / "cleanup")
    ctx.perf_java("-o", run_dir, "-q", "--inject", "-F", "999", "--", ctx.jdk.java, "-cp", ctx.demo_classes(),
                  "demo.Demo", "2")
    check(snapshot(ctx.home) == before, "$HOME (and ~/.debug) unchanged by a perf-java run")
    check(not (run_dir / ".buildid").exists(), "no build-id cache left in the run directory")
    new_maps = {f for f in os.listdir("/tmp") if f.startswith("perf-")} - tmp_maps
    check(not new_maps, f"no /tmp/perf-*.map left behind ({sorted(new_maps)[:3]})")
    summary = disk_figures(run_dir, "demo2s")
    n = len(list((run_dir / "jit").glob("jitted-*")))
    check(n > 100 and int(summary["jitted_elfs"]) == n, f"{n} jitted ELFs in the run's jit/ directory")
    p = ctx.perf_java("clean", "-o", run_dir)
    left = list((run_dir / "jit").glob("jitted-*"))
    check(not left, f"clean removed the jitted ELFs: {p.stdout.strip()}")
    after_clean = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(run_dir) for f in fs)
    figure("demo2s.run_bytes_after_clean", after_clean)
    r = ctx.perf_java("report", "-o", run_dir)
    check("demo.Demo.divideChain" in r.stdout, "report after clean still names Java methods (inject reran)")
    check(snapshot(ctx.home) == before, "$HOME still unchanged after report")
    ctx.perf_java("clean", "-o", run_dir, "--all")
    check(not run_dir.exists(), "clean --all removes the run directory")


def test_wrapper(ctx):
    """perf-java's own contract: clear errors, folded stacks with --call-graph, outputs listed."""
    check = ctx.check
    perf_java = ctx.perf_java_path
    env = dict(ctx.env, PERF="/nonexistent/perf")
    p = run([perf_java, "--", "java", "-version"], check_rc=False, env=env)
    check(p.returncode != 0 and "perf not found" in p.stderr, "perf missing: " + p.stderr.strip()[:100])
    p = ctx.perf_java("--", check_rc=False)
    check(p.returncode != 0 and "no command" in p.stderr, "no command: " + p.stderr.strip()[:80])
    p = ctx.perf_java("--agent", "/nonexistent.so", "--", "java", "-version", check_rc=False)
    check(p.returncode != 0 and "agent not found" in p.stderr, "agent missing: " + p.stderr.strip()[:80])
    # The paranoid/probe path: a probe for an event that cannot be opened must print the
    # perf_event_paranoid value and perf's own words, and exit non-zero.
    p = run(["bash", "-c", f"source <(sed -n '/^probe_sampling()/,/^}}/p' {perf_java}); prog=perf-java; "
             f"d=$(mktemp -d); probe_sampling $d no-such-event; echo survived"], check_rc=False, env=ctx.env)
    check(p.returncode != 0 and "perf_event_paranoid" in p.stderr and "survived" not in p.stdout,
          "sampling impossible: clear message with perf_event_paranoid: " + p.stderr.strip().splitlines()[0][:100])

    run_dir = fresh(ctx.work / "callgraph")
    p = ctx.perf_java("-o", run_dir, "-g", "--inject", "-F", "999", "--", ctx.jdk.java, "-cp", ctx.demo_classes(), "demo.Demo",
                      "2")
    check("PreserveFramePointer" in (run_dir / "perf.data").read_bytes().decode("latin1")
          or "PreserveFramePointer" in p.stderr, "--call-graph starts the JVM with -XX:+PreserveFramePointer")
    check("--call-graph fp" in (run_dir / "command").read_text(), "--call-graph records with fp")
    for f in ("perf.data", "perf.jit.data", "report.txt", "srcline.txt", "folded.txt", "summary.txt"):
        check((run_dir / f).exists(), f"run directory has {f}")
    check(str(run_dir) in p.stdout, "perf-java prints where the results are")
    folded = (run_dir / "folded.txt").read_text().splitlines()
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


def test_hand_inject(ctx):
    """The docs' recipe on a finished run: `perf inject --jit` by hand reads dumps whose inline
    records (inline=on, which perf 6.1 does not know) perf-java moved to jit-PID.dump.inline, so
    perf prints no warning per record, and jitdump report still expands inlined frames."""
    check = ctx.check
    run_dir = fresh(ctx.work / "hand")
    ctx.perf_java("-o", run_dir, "-q", "-F", "999", "--", ctx.jdk.java, "-cp", ctx.demo_classes(), "demo.Demo", "2")
    dumps = list((run_dir / "jit").glob("jit-*.dump"))
    check(len(dumps) == 1 and dumps[0].with_name(dumps[0].name + ".inline").exists(),
          f"the finished dump's inline records are in its .inline file: {sorted(p.name for p in (run_dir / 'jit').iterdir())}")
    p = ctx.perf("inject", "--jit", "-i", run_dir / "perf.data", "-o", ctx.work / "hand.jit.data", check_rc=False)
    unknown = [line for line in p.stderr.splitlines() if "unknown record type" in line]
    check(p.returncode == 0 and not unknown,
          f"a hand-run perf inject --jit is clean (rc={p.returncode}, {len(unknown)} unknown-record lines): "
          f"{p.stderr[:600]}")
    r = ctx.perf("report", "-i", ctx.work / "hand.jit.data", "--stdio", "--sort", "sym")
    check("demo.Demo." in r.stdout, "perf report after the hand-run inject names the demo's methods")
    folded = (run_dir / "folded.txt").read_text()
    check("demo.Demo.inlinedCaller;demo.Demo.leaf" in folded,
          "jitdump report still expands inlined frames (from the .inline file)")
