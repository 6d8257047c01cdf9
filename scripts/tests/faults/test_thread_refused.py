"""The writer thread cannot be created (issue #13, item 9).

The LD_PRELOAD shim (writer_faults.cc) makes the agent's first pthread_create fail with EAGAIN
(a thread limit, no memory for a stack); nothing else is touched. The agent starts its writer
with every signal blocked on the calling JVM thread; before the fix the failed start left that
mask in place (every JVM thread created afterwards inherited it: SigBlk fffffffe7ffbb236 instead
of HotSpot's own), left a header-only dump, kept the JVMTI environment and the one-agent claim,
so a later attach was ignored.

Twice, with -agentpath at start-up and with a late attach (scripts/bin/attach) into a JVM without
the agent: the shim refuses one thread; the agent says in one error line that it cannot start
its writer and is disabled; the output directory holds no dump; no JVM thread blocks more
signals than the same JVM's threads do without the agent (/proc/PID/task/*/status SigBlk, read
while the program waits); the failed attach makes scripts/bin/attach exit non-zero. Then a
scripts/bin/attach with other options succeeds (the claim was released), the JVM finishes its work
(exit 0, output intact) and the attached agent's dump is valid, closed and holds the code
compiled after the attach.
"""
import subprocess
from pathlib import Path

import pytest

from support.checks import check, log
from support.jvm import wait_line
from support.output import agent_lines, dumps_in

from .conftest import PHASE2_COMPILED

ROUNDS = 3000


def blocked_masks(pid: int) -> dict:
    """thread name -> set of SigBlk masks of the JVM's threads."""
    masks: dict = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = dict(line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line)
        except OSError:
            continue  # the thread ended meanwhile
        masks.setdefault(fields["Name"].strip(), set()).add(int(fields["SigBlk"], 16))
    return masks


@pytest.mark.meson(every_jdk=True)
def test_thread_refused(ctx, build) -> None:
    shim = build.tests / "faults" / "writer_faults.so"
    check(shim.is_file(), f"the shim is not built at {shim}: ninja -C {build.dir}")
    expected = ctx.expected_output(ROUNDS)
    env = {"LD_PRELOAD": str(shim), "WRITER_FAULTS_LIBRARY": "libjitdumpagent", "WRITER_FAULTS_PTHREAD_FAIL": "1"}
    jvm_args = PHASE2_COMPILED + (["-XX:+EnableDynamicAgentLoading"] if ctx.jvm.jdk.feature >= 21 else [])

    # The masks HotSpot gives its threads, without the agent (the shim preloaded all the same).
    gate = ctx.work / "gate-baseline"
    proc = ctx.jvm.start("Work", ROUNDS, "return", gate, env=env, jvm_args=jvm_args)
    wait_line(proc, "READY", timeout=120)
    baseline = set().union(*blocked_masks(proc.pid).values())
    gate.touch()
    check(proc.wait(timeout=120) == 0, "baseline JVM failed", proc.err_path.read_text(errors="replace"))
    log(f"SigBlk of JVM threads without the agent: {sorted(hex(m) for m in baseline)}")

    for how in ("agentpath", "attach"):
        refused_dir, later_dir = ctx.work / f"{how}-refused", ctx.work / f"{how}-later"
        gate = ctx.work / f"gate-{how}"
        if how == "agentpath":
            proc = ctx.start_java(f"dir={refused_dir}", "Work", ROUNDS, "return", gate, env=env, jvm_args=jvm_args)
            wait_line(proc, "READY", timeout=120)
        else:
            proc = ctx.jvm.start("Work", ROUNDS, "return", gate, env=env, jvm_args=jvm_args)
            wait_line(proc, "READY", timeout=120)
            r = attach(ctx, proc.pid, f"dir={refused_dir}")
            check(r.returncode != 0 and "nothing will be written" in r.stderr,
                  f"{how}: scripts/bin/attach should exit non-zero when the agent could not start", r.stdout + r.stderr)
        stderr = proc.err_path.read_text(errors="replace")
        check("writer_faults: refused pthread_create" in stderr, f"{how}: the shim refused no thread", stderr)
        lines = agent_lines(stderr)
        check(len(lines) == 1 and "error" in lines[0] and "cannot start the writer thread" in lines[0],
              f"{how}: expected one error line about the writer thread", stderr)
        check(dumps_in(refused_dir) == [], f"{how}: a dump was left behind: {dumps_in(refused_dir)}")
        masks = blocked_masks(proc.pid)
        extra = {name: sorted(hex(m) for m in ms - baseline) for name, ms in masks.items() if ms - baseline}
        check(not extra, f"{how}: JVM threads block signals HotSpot's threads do not (mask not restored): {extra}")

        r = attach(ctx, proc.pid, f"dir={later_dir}")
        check(r.returncode == 0 and "writing " in r.stdout, f"{how}: the later attach did not start the agent",
              r.stdout + r.stderr)
        gate.touch()
        rc = proc.wait(timeout=120)
        stderr = proc.err_path.read_text(errors="replace")
        check(rc == 0, f"{how}: JVM exit {rc}", stderr)
        check(proc.out_path.read_text().splitlines() == expected, f"{how}: program output changed", stderr)
        dumps = dumps_in(later_dir)
        check(len(dumps) == 1, f"{how}: expected one dump from the later attach in {later_dir}, found {dumps}")
        d = ctx.assert_valid(dumps[0], f"{how}: the later attach's dump")
        check(d.closed and any("Work$P" in load.name for load in d.loads),
              f"{how}: the later attach's dump should be closed and hold the code compiled after it", d.describe())
        log(f"{how}: writer thread refused, cleaned up (no dump, masks as HotSpot's); the later attach wrote "
            f"{len(d.loads)} loads")


def attach(ctx, pid: int, options: str) -> subprocess.CompletedProcess:
    r = subprocess.run([str(ctx.scripts / "bin" / "attach"), "--agent", str(ctx.agent), str(pid), options],
                       capture_output=True, text=True, timeout=120)
    log(f"$ attach {options}: exit {r.returncode}\n{r.stdout}{r.stderr}".rstrip())
    return r
