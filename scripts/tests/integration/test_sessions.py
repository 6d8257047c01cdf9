"""Sessions of the agent in a running JVM (docs/agent.md, Sessions), on a JVM that compiles and
unloads code all the time (Churn): `jitdump-attach PID stop` ends a session and leaves nothing of
the agent's behind while the JVM keeps compiling, a later attach starts a new one in another
directory (replaying the code compiled by then), stop_after= ends a session on its own, an agent
loaded with the JVM stops on request too, and max_size= caps a dump under churn."""
import json
import time

import pytest

from support.checks import check, log
from support.jvm import wait_line
from support.output import agent_lines
from support.visits import agent_threads, check_left_nothing, churn_jvm

from .workload import attach

STEADY_SECONDS = 5  # with --long 30 s, the figure in docs/measurements.md


def stats_of(path):
    return json.loads(path.read_text())


# Sessions depend on how HotSpot calls Agent_OnAttach again: also on every other JDK.
@pytest.mark.meson(every_jdk=True)
def test_session_attach_stop(build, jdk, agent, tool, work, cleanup, long_run):
    churn = churn_jvm(build.repo, build, jdk, agent, work, cleanup)
    p = churn.start("Churn", "120", "300", agent=None)
    wait_line(p, "churn ready")
    one, two = work / "one", work / "two"
    r = attach(build.scripts, agent, p.pid, f"dir={one},stats={one}/stats.json")
    check(r.returncode == 0 and "writing" in r.stdout, "the first attach starts a session", r.stdout + r.stderr)
    time.sleep(2)
    check(agent_threads(p.pid), "a running session has its writer thread")
    dump_one = one / f"jit-{p.pid}.dump"

    r = attach(build.scripts, agent, p.pid, "stop")
    check(r.returncode == 0 and "stopped:" in r.stdout, "jitdump-attach PID stop says it stopped", r.stdout + r.stderr)
    check_left_nothing(tool, p.pid, dump_one, 30 if long_run else STEADY_SECONDS, "after stop")
    stats = stats_of(one / "stats.json")
    check(stats["session"]["stopped_by"] == "stop", f"the stats say why: {stats['session']}")
    offered = (stats["events"]["compiled_method_load"] + stats["events"]["dynamic_code_generated"]
               - stats["events"]["empty_blobs"])
    check(stats["written"]["code_loads"] + stats["events"]["duplicate_loads"] + stats["lost"]["total"] == offered,
          f"every event of the session written, a duplicate or lost: {stats}")
    r = attach(build.scripts, agent, p.pid, "stop")
    check(r.returncode == 0 and "nothing to stop" in r.stdout, "a second stop says there is nothing to stop", r.stdout)

    # A new session, in another directory, replays what is compiled now.
    r = attach(build.scripts, agent, p.pid, f"dir={two}")
    check(r.returncode == 0 and "starting a new session" in r.stdout and "writing" in r.stdout,
          "an attach to a dormant agent says it starts a new session", r.stdout + r.stderr)
    time.sleep(2)
    r = attach(build.scripts, agent, p.pid, "stop")
    check(r.returncode == 0, "the second stop", r.stdout + r.stderr)
    dump_two = two / f"jit-{p.pid}.dump"
    check_left_nothing(tool, p.pid, dump_two, 1, "after the second stop")
    d = tool.records(dump_two)
    check(any(l.name == "Interpreter" for l in d.loads) and any(".Churn" in l.name or "Churn$" in l.name
                                                               for l in d.loads),
          "the second session replayed stubs and compiled methods", d.describe())
    check(p.poll() is None, "the JVM runs on")
    lines = agent_lines(p.err_path.read_text(errors="replace"))
    check(not [l for l in lines if "warning" in l or "error" in l], f"no agent warning: {lines}")


@pytest.mark.meson(every_jdk=True)
def test_session_stop_after(build, jdk, agent, tool, work, cleanup):
    """A session started with the JVM stops on request; stop_after= ends a later one on its own."""
    churn = churn_jvm(build.repo, build, jdk, agent, work, cleanup)
    start, timed = work / "start", work / "timed"
    p = churn.start("Churn", "120", "300", agent=f"dir={start}")
    wait_line(p, "churn ready")
    time.sleep(2)
    r = attach(build.scripts, agent, p.pid, "stop")
    check(r.returncode == 0 and "stopped:" in r.stdout, "an agent loaded with the JVM stops on request",
          r.stdout + r.stderr)
    check_left_nothing(tool, p.pid, start / f"jit-{p.pid}.dump", 1, "the JVM's own session stopped")

    r = attach(build.scripts, agent, p.pid, f"dir={timed},stop_after=3,stats={timed}/stats.json")
    check(r.returncode == 0, "attach with stop_after=3", r.stdout + r.stderr)
    began = time.monotonic()
    check(agent_threads(p.pid), "the timed session runs")
    check_left_nothing(tool, p.pid, timed / f"jit-{p.pid}.dump", 1, "stop_after=3")
    took = time.monotonic() - began
    check(took < 10, f"the session stopped {took:.1f} s after the attach (stop_after=3)")
    stats = stats_of(timed / "stats.json")
    check(stats["session"]["stopped_by"] == "stop_after", f"the stats say why: {stats['session']}")
    log(f"stop_after=3: stopped {took:.1f} s after the attach returned")


def test_session_size_cap(build, jdk, agent, tool, work, cleanup):
    """max_size= under churn: the dump stops at the cap, the rest is counted (lost.size_cap) with
    one warning, the JVM finishes its work."""
    churn = churn_jvm(build.repo, build, jdk, agent, work, cleanup)
    out = work / "capped"
    cap = 2 << 20
    r = churn.run("Churn", "12", "400", agent=f"dir={out},max_size=2M,stats={out}/stats.json", timeout=180)
    stderr = r.stderr.decode(errors="replace")
    check(r.returncode == 0 and b"churn done" in r.stdout, f"the JVM finishes: exit {r.returncode}", stderr)
    dumps = sorted(out.glob("jit-*.dump"))
    check(len(dumps) == 1, f"one dump: {dumps}")
    dump = dumps[0]
    size = dump.stat().st_size
    stats = stats_of(out / "stats.json")
    check(size <= cap and size > cap - (256 << 10), f"the dump stops at the cap: {size} bytes, cap {cap}")
    check(stats["lost"]["size_cap"] > 0, f"loads past the cap are counted: {stats['lost']}")
    check(stats["structures"]["dump_bytes"]["bound"] == cap, f"the stats name the cap: {stats['structures']}")
    d = tool.records(dump)
    check(d.closed and d.truncated is None, "the capped dump is whole and closed", d.describe())
    check(len(d.loads) == stats["written"]["code_loads"], f"{len(d.loads)} loads in the dump, stats say "
          f"{stats['written']['code_loads']}")
    lines = agent_lines(stderr)
    check(len(lines) == 1 and "reached max_size=" in lines[0], f"one warning about the cap: {lines}")
    log(f"max_size=2M under churn: {size} bytes, {stats['written']['code_loads']} loads written, "
        f"{stats['lost']['size_cap']} counted as lost.size_cap")
