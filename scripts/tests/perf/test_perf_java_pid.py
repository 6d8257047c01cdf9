"""`perf-java -p PID -d SECONDS`: a JVM already running, started without the agent, profiled in
one command. The agent is attached, the JVM recorded, the reports written, and the JVM runs on
and finishes its work. A second run on the same JVM reads the dump the agent already writes. A
JVM that cannot be attached, a process that is no JVM, and (as root) a JVM of another user."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from support.checks import check, log

from .runs import fresh

DEMO_SECONDS = "40"  # long enough for two recordings; the JVM is killed at the end of the test


def start_demo(ctx, cleanup, *jvm_args, user=None):
    """The demo, started without the agent; returns once its code is compiled (1.5 s in)."""
    cmd = [ctx.jdk.java, *jvm_args, "-cp", ctx.demo_classes(), "demo.Demo", DEMO_SECONDS]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *cmd]
    out = ctx.work / f"jvm-{len(list(ctx.work.glob('jvm-*.out')))}.out"
    with open(out, "wb") as f:  # a file, not a pipe nobody drains: the JVM must never block on it
        jvm = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=ctx.env, cwd="/")
    cleanup.kill(jvm)
    time.sleep(1.5)
    check(jvm.poll() is None, f"the demo JVM died at start: {out.read_text(errors='replace')[-1500:]}")
    return jvm


def jvm_entry(run_dir: Path, pid: int) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    jvms = [p for p in summary["processes"] if p["jvm"] and p["pid"] == pid]
    check(len(jvms) == 1, f"summary.json has JVM {pid} with a dump: {summary['processes']}")
    return jvms[0]


def profiled(ctx, run_dir: Path, pid: int, label: str, min_line_percent: float) -> dict:
    p = jvm_entry(run_dir, pid)
    log(f"{label}: {p['samples']} samples of JVM {pid}, {p['jit_named_percent']}% of JIT samples named, "
        f"{p['java_with_line_percent']}% of Java samples with a source line")
    ctx.check(p["samples"] >= 100, f"{label}: {p['samples']} samples of the JVM (at most ~3,000 in 3 s at 999 Hz; fewer on a loaded machine)")
    ctx.check(p["jit_named_percent"] >= 99.0, f"{label}: {p['jit_named_percent']}% of JIT samples named")
    ctx.check(p["java_with_line_percent"] >= min_line_percent,
              f"{label}: {p['java_with_line_percent']}% of Java samples with a source line")
    srcline = (run_dir / "srcline.txt").read_text()
    ctx.check("demo/Demo.java:" in srcline and "demo.Demo." in srcline,
              f"{label}: srcline.txt names the demo's methods and lines:\n{srcline[:800]}")
    return p


@pytest.mark.meson(timeout=900, every_jdk=True)
def test_java_pid(ctx, cleanup):
    jvm = start_demo(ctx, cleanup)
    first = fresh(ctx.work / "first")
    r = ctx.perf_java("-o", first, "-q", "-p", str(jvm.pid), "-d", "3", check_rc=False, timeout=300)
    log(r.stdout + r.stderr)
    check(r.returncode == 0, f"perf-java -p exit {r.returncode}: {r.stderr[-2000:]}")
    check(jvm.poll() is None, "the JVM runs on after perf-java -p")
    check(len(list((first / "jit").glob("jit-*.dump"))) == 1, "the attached agent writes into the run's jit/")
    for name in ("perf.data", "folded.txt", "profile.pb.gz", "flamegraph.html"):
        check((first / name).exists(), f"the run has {name}")
    # Code compiled before the attach has safepoint line information only (no DebugNonSafepoints):
    # most samples still get a line.
    profiled(ctx, first, jvm.pid, "first attach", 80.0)
    if ctx.jdk.feature >= 21:
        attach_log = (first / "attach.log").read_text()
        check("EnableDynamicAgentLoading" in attach_log,
              f"JDK {ctx.jdk.feature}: the run says what -XX:+EnableDynamicAgentLoading changes: {attach_log}")

    # The agent stays loaded; a second run finds its dump in the first run's directory. No -d:
    # it records until Ctrl-C, sent here as a terminal sends it, to the whole process group.
    second = fresh(ctx.work / "second")
    p = subprocess.Popen([ctx.perf_java_path, "-o", second, "-p", str(jvm.pid)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ctx.env, text=True, start_new_session=True)
    cleanup.kill(p)
    time.sleep(4)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=300)
    log(out + err)
    check(p.returncode == 0, f"perf-java -p stopped by Ctrl-C: exit {p.returncode}: {err[-2000:]}")
    check("already loaded" in err and str(first / "jit") in err,
          f"the second run says it reads the dump the agent already writes: {err[:600]}")
    check("flamegraph.html" in out, f"the reports were written after Ctrl-C: {out[-600:]}")
    p = jvm_entry(second, jvm.pid)
    ctx.check(p["jit_named_percent"] >= 99.0, f"second run: {p['jit_named_percent']}% of JIT samples named")
    check(jvm.poll() is None, "the JVM runs on after the second run")
    jvm.kill()
    jvm.wait(timeout=60)
    ctx.check.verify()


def test_java_pid_refusals(ctx, cleanup):
    """Refused before anything is recorded, the target left running, the reason in one message."""
    jvm = start_demo(ctx, cleanup, "-XX:+DisableAttachMechanism")
    run_dir = fresh(ctx.work / "disabled")
    r = ctx.perf_java("-o", run_dir, "-p", str(jvm.pid), "-d", "1", check_rc=False, timeout=120)
    check(r.returncode != 0 and "DisableAttachMechanism" in r.stderr,
          f"a JVM with -XX:+DisableAttachMechanism is refused by name: rc {r.returncode}, {r.stderr[:400]}")
    check(not (run_dir / "perf.data").exists(), "nothing recorded for the refused JVM")
    check(jvm.poll() is None, "the refused JVM runs on")
    jvm.kill()

    sleeper = subprocess.Popen(["sleep", "60"])
    cleanup.kill(sleeper)
    r = ctx.perf_java("-o", fresh(ctx.work / "not-a-jvm"), "-p", str(sleeper.pid), "-d", "1", check_rc=False)
    check(r.returncode != 0 and "not a HotSpot JVM" in r.stderr, f"a process that is no JVM: {r.stderr[:300]}")
    r = ctx.perf_java("-p", str(jvm.pid), "--", "java", "-version", check_rc=False)
    check(r.returncode != 0 and "give no command" in r.stderr, f"-p with a command: {r.stderr[:300]}")
    r = ctx.perf_java("-d", "3", "--", "java", "-version", check_rc=False)
    check(r.returncode != 0 and "-d goes with -p" in r.stderr, f"-d without -p: {r.stderr[:300]}")


@pytest.mark.meson(timeout=900)
def test_java_pid_other_user(ctx, cleanup):
    """As root, a JVM running as nobody: the agent (the JVM's user) writes into the run's jit/,
    which perf-java hands to that user; a run directory the user cannot reach is refused."""
    check(os.geteuid() == 0, "this test runs as root (the README's test command does)")
    nobody = 65534
    jvm = start_demo(ctx, cleanup, user=nobody)
    closed = ctx.work / "closed"
    closed.mkdir(mode=0o700, exist_ok=True)
    os.chmod(closed, 0o700)
    r = ctx.perf_java("-o", closed / "run", "-p", str(jvm.pid), "-d", "1", check_rc=False, timeout=120)
    check(r.returncode != 0 and "cannot write" in r.stderr and "uid 65534" in r.stderr,
          f"a run directory closed to the JVM's user is refused: rc {r.returncode}, {r.stderr[:400]}")
    run_dir = Path(f"/tmp/perf-java-test-{os.getpid()}")
    cleanup.remove(run_dir)
    r = ctx.perf_java("-o", run_dir, "-q", "-p", str(jvm.pid), "-d", "3", check_rc=False, timeout=300)
    check(r.returncode == 0, f"perf-java -p on nobody's JVM: exit {r.returncode}: {r.stderr[-2000:]}")
    dumps = list((run_dir / "jit").glob("jit-*.dump"))
    check(len(dumps) == 1 and dumps[0].stat().st_uid == nobody, f"the dump is written by the JVM's user: {dumps}")
    profiled(ctx, run_dir, jvm.pid, "nobody's JVM", 80.0)
    check(jvm.poll() is None, "nobody's JVM runs on")
    jvm.kill()
    ctx.check.verify()
