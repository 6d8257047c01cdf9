"""`perf-java -p PID -d SECONDS`: a JVM already running, started without the agent, profiled in
one command. The agent is attached, the JVM recorded, the reports written, the agent's session
stopped, and the JVM runs on and finishes its work with nothing of the agent's running. Visits in
a row (after rm -rf of the previous run, Ctrl-C, perf-java SIGKILLed) each name >= 99 % of JIT
samples; a session perf-java did not start (the agent loaded with the JVM, another visit's) is
read and left running. A JVM that cannot be attached, a process that is no JVM, and (as root) a
JVM of another user."""
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from support.checks import check, log
from support.visits import agent_threads, check_left_nothing, mapped_dumps, rss_mib, thread_count

from .runs import fresh

DEMO_SECONDS = "40"  # long enough for two recordings; the JVM is killed at the end of the test
STEADY_SECONDS = 3   # after a visit the dump must stay as it was closed (docs/measurements.md: 30 s, integration-session_attach_stop --long)


def start_demo(ctx, cleanup, *jvm_args, user=None, seconds=DEMO_SECONDS):
    """The demo, started without the agent (unless jvm_args load it); returns once its code is
    compiled (1.5 s in)."""
    cmd = [ctx.jdk.java, *jvm_args, "-cp", ctx.demo_classes(), "demo.Demo", str(seconds)]
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
    entry = profiled(ctx, first, jvm.pid, "first attach", 80.0)
    # The session perf-java started writes its statistics when it stops, before the reports.
    stats = first / "jit" / f"agent-stats-{jvm.pid}.json"
    check(stats.exists(), f"the attached agent wrote its statistics ({stats})")
    agent_stats = entry.get("agent_stats", {})
    check(agent_stats.get("session", {}).get("stopped_by") and agent_stats.get("lost", {}).get("total") == 0,
          f"summary.json carries the attached agent's statistics, a stopped session that lost nothing: "
          f"{json.dumps(agent_stats)[:600]}")
    check(f"jit/agent-stats-{jvm.pid}.json" in r.stdout, f"perf-java lists the statistics: {r.stdout[-800:]}")
    if ctx.jdk.feature >= 21:
        attach_log = (first / "attach.log").read_text()
        check("EnableDynamicAgentLoading" in attach_log,
              f"JDK {ctx.jdk.feature}: the run says what -XX:+EnableDynamicAgentLoading changes: {attach_log}")
    attach_log = (first / "attach.log").read_text()
    check("stopped:" in attach_log, f"perf-java stopped the agent's session (attach.log): {attach_log}")
    check_left_nothing(ctx.tool, jvm.pid, next((first / "jit").glob("jit-*.dump")), STEADY_SECONDS, "first visit")

    # The agent stays loaded, dormant; a second run starts a new session into its own run. No
    # -d: it records until Ctrl-C, sent here as a terminal sends it, to the whole process group.
    second = fresh(ctx.work / "second")
    p = subprocess.Popen([ctx.perf_java_path, "-o", second, "-p", str(jvm.pid)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=ctx.env, text=True, start_new_session=True)
    cleanup.kill(p)
    check(wait_until(lambda: (second / "perf.data").exists(), 120), "the second run never began recording")
    time.sleep(3)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=300)
    log(out + err)
    check(p.returncode == 0, f"perf-java -p stopped by Ctrl-C: exit {p.returncode}: {err[-2000:]}")
    check("starting a new session" in err and "stopped:" in err,
          f"the second run says it starts a new session and stops it after Ctrl-C: {err[:1500]}")
    check("flamegraph.html" in out, f"the reports were written after Ctrl-C: {out[-600:]}")
    p = jvm_entry(second, jvm.pid)
    ctx.check(p["jit_named_percent"] >= 99.0, f"second run: {p['jit_named_percent']}% of JIT samples named")
    check(jvm.poll() is None, "the JVM runs on after the second run")
    check_left_nothing(ctx.tool, jvm.pid, next((second / "jit").glob("jit-*.dump")), 1, "second visit")
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


def perf_processes_of(run_dir: Path) -> list:
    """Processes whose command line names `run_dir` (a perf record perf-java left behind)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if str(run_dir).encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def visit_summary(ctx, run_dir: Path, pid: int) -> dict:
    """summary.json's entry for the JVM; for a run whose perf-java was killed, from `jitdump
    report` on what it recorded."""
    if not (run_dir / "summary.json").exists():
        out = run_dir / "report-after-kill"
        r = ctx.tool.run("report", str(run_dir / "perf.data"), "--dumps", str(run_dir / "jit"), "-o", str(out))
        check(r.returncode == 0, f"jitdump report on the killed visit's recording: {r.stderr[-1000:]}")
        run_dir = out
    return jvm_entry(run_dir, pid)


@pytest.mark.meson(timeout=1500, every_jdk=True)
def test_java_pid_visits(ctx, cleanup, long_run):
    """Visits in a row to one JVM (5 here, 20 with --long): plain, after rm -rf of the previous
    run, stopped with Ctrl-C, perf-java SIGKILLed mid-recording (its session ends at its own
    stop_after=). Every visit names >= 99 % of its JIT samples; after each, nothing of the
    agent's is left in the JVM; RSS and thread count stay flat across the visits."""
    kinds = ["plain", "after-rm", "ctrl-c", "sigkill", "plain"]
    if long_run:
        kinds = (kinds * 4)[:20]
    # A fixed, pre-touched heap: the JVM's RSS then moves only with what is not the heap.
    jvm = start_demo(ctx, cleanup, "-Xms256m", "-Xmx256m", "-XX:+AlwaysPreTouch", seconds=60 + 40 * len(kinds))
    previous = None
    marks = []
    for n, kind in enumerate(kinds, 1):
        run_dir = fresh(ctx.work / f"visit-{n}")
        what = f"visit {n} ({kind})"
        if kind == "after-rm" and previous is not None:
            shutil.rmtree(previous)
        if kind == "ctrl-c":
            p = subprocess.Popen([ctx.perf_java_path, "-q", "-o", run_dir, "-p", str(jvm.pid)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=ctx.env, text=True, start_new_session=True)
            cleanup.kill(p)
            check(wait_until(lambda: (run_dir / "perf.data").exists(), 120), f"{what}: the recording never began")
            time.sleep(3)
            os.killpg(p.pid, signal.SIGINT)
            out, err = p.communicate(timeout=300)
            check(p.returncode == 0, f"{what}: exit {p.returncode}: {err[-1500:]}")
        elif kind == "sigkill":
            # perf-java alone is killed; the perf record it started finishes its -d on its own.
            p = subprocess.Popen([ctx.perf_java_path, "-q", "-o", run_dir, "-p", str(jvm.pid), "-d", "5",
                                  "--agent-opts", "stop_after=10"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=ctx.env, text=True)
            cleanup.kill(p)
            check(wait_until(lambda: (run_dir / "perf.data").exists(), 60), f"{what}: the recording never began")
            time.sleep(1)
            p.kill()
            p.wait(timeout=60)
            check(agent_threads(jvm.pid), f"{what}: the session runs on after perf-java was killed")
            check(wait_until(lambda: not perf_processes_of(run_dir), 60), f"{what}: perf record did not finish")
        else:
            r = ctx.perf_java("-q", "-o", run_dir, "-p", str(jvm.pid), "-d", "3", check_rc=False, timeout=300)
            check(r.returncode == 0, f"{what}: exit {r.returncode}: {r.stderr[-1500:]}")
        dump = next((run_dir / "jit").glob("jit-*.dump"))
        # A killed perf-java leaves the session to its deadline (stop_after=10 from the attach).
        check_left_nothing(ctx.tool, jvm.pid, dump, STEADY_SECONDS if kind != "sigkill" else 1, what)
        entry = visit_summary(ctx, run_dir, jvm.pid)
        log(f"{what}: {entry['samples']} samples, {entry['jit_named_percent']}% of JIT samples named")
        ctx.check(entry["jit_named_percent"] >= 99.0, f"{what}: {entry['jit_named_percent']}% of JIT samples named")
        marks.append((rss_mib(jvm.pid), thread_count(jvm.pid)))
        previous = run_dir
    check(jvm.poll() is None, "the JVM runs on after every visit")
    log("after each visit, RSS (MiB) and threads: " + ", ".join(f"{r:.0f}/{t}" for r, t in marks))
    # The first attach starts HotSpot's Attach Listener: from the first visit on, flat.
    threads = {t for _, t in marks}
    ctx.check(len(threads) == 1, f"thread count flat across the visits: {[t for _, t in marks]}")
    growth = marks[-1][0] - marks[0][0]
    ctx.check(growth <= 16, f"RSS flat across the visits: {marks[0][0]:.0f} -> {marks[-1][0]:.0f} MiB")
    print(f"FIGURE visits={len(kinds)} rss_first_mib={marks[0][0]:.0f} rss_last_mib={marks[-1][0]:.0f} "
          f"threads={sorted(threads)}", flush=True)
    ctx.check.verify()


def wait_until(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.meson(timeout=900)
def test_java_pid_found_running(ctx, cleanup, agent):
    """A session perf-java did not start is read where it is and left running, and perf-java
    says which kind it found: the agent loaded with the JVM, or another visit's session."""
    at_start = ctx.work / "at-start"
    at_start.mkdir()
    jvm = start_demo(ctx, cleanup, f"-agentpath:{agent}=dir={at_start}", seconds=120)
    run_dir = fresh(ctx.work / "over-at-start")
    r = ctx.perf_java("-o", run_dir, "-p", str(jvm.pid), "-d", "2", check_rc=False, timeout=300)
    check(r.returncode == 0 and "loaded with JVM" in r.stderr, f"at start: exit {r.returncode}: {r.stderr[-1500:]}")
    check(agent_threads(jvm.pid) and mapped_dumps(jvm.pid), "the JVM's own session runs on after the visit")
    ctx.check(jvm_entry(run_dir, jvm.pid)["jit_named_percent"] >= 99.0, "at start: JIT samples named")
    jvm.kill()
    jvm.wait(timeout=60)

    jvm = start_demo(ctx, cleanup, seconds=120)
    other = ctx.work / "other-visit"
    other.mkdir()
    attach = subprocess.run([ctx.build.scripts / "bin" / "attach", "--agent", agent, str(jvm.pid),
                             f"dir={other},stop_after=120"], capture_output=True, text=True, env=ctx.env)
    check(attach.returncode == 0, f"jitdump-attach: {attach.stdout}{attach.stderr}")
    run_dir = fresh(ctx.work / "over-other")
    r = ctx.perf_java("-o", run_dir, "-p", str(jvm.pid), "-d", "2", check_rc=False, timeout=300)
    check(r.returncode == 0 and "another visit started" in r.stderr, f"another visit's: {r.stderr[-1500:]}")
    check(agent_threads(jvm.pid), "the other visit's session runs on")
    ctx.check(jvm_entry(run_dir, jvm.pid)["jit_named_percent"] >= 99.0, "another visit's session: JIT samples named")
    stop = subprocess.run([ctx.build.scripts / "bin" / "attach", "--agent", agent, str(jvm.pid), "stop"], capture_output=True,
                          text=True, env=ctx.env)
    check(stop.returncode == 0 and "stopped:" in stop.stdout, f"jitdump-attach stop: {stop.stdout}{stop.stderr}")
    check_left_nothing(ctx.tool, jvm.pid, next(other.glob("jit-*.dump")), 1, "the other visit's session, stopped")
    ctx.check.verify()


def test_attach_waits_for_live_phase(ctx, cleanup):
    """A JVM attached to in its first moments answers "Dynamic agent loading is only permitted in
    the live phase" (perf-java_pid_visits-temurin-25 met it under load, 1.5 s after the start):
    jitdump attach sends the load again until the JVM is live. Here a jattach that answers so
    twice before passing the load on to Debian's jattach stands for that JVM: the attach
    succeeds on the third load, says it waited, and the agent writes its dump."""
    jvm = start_demo(ctx, cleanup)
    count = ctx.work / "jattach-calls"
    fake = ctx.work / "jattach-starting"
    fake.write_text("#!/bin/sh\n"
                    f"n=$(cat {count} 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {count}\n"
                    "if [ $n -lt 3 ]; then\n"
                    "  echo 'Connected to remote JVM'; echo 'JVM response code = 0'\n"
                    "  echo 'Dynamic agent loading is only permitted in the live phase'; echo 'return code: -1'\n"
                    "  exit 1\nfi\n"
                    "exec /usr/bin/jattach \"$@\"\n")
    fake.chmod(0o755)
    jit = ctx.work / "live-jit"
    jit.mkdir(parents=True, exist_ok=True)
    r = ctx.tool.run("attach", "--agent", str(ctx.agent), "--jattach", str(fake), "--timeout", "30", str(jvm.pid),
                     f"dir={jit}")
    log(f"attach: exit {r.returncode}, {count.read_text().strip()} loads sent\n{r.stdout}{r.stderr}")
    check(r.returncode == 0, f"jitdump attach failed after the JVM became live: {r.stdout}{r.stderr}")
    check(count.read_text().strip() == "3", f"three loads sent (two refused, one loaded): {count.read_text()}")
    check("still starting" in r.stdout, f"the attach said it waited for the live phase: {r.stdout}")
    check((jit / f"jit-{jvm.pid}.dump").exists(), f"the agent writes {jit}/jit-{jvm.pid}.dump")
