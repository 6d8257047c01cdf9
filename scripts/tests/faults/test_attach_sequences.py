"""scripts/bin/attach after a failed attach, and a second load with other options (issue #13, item 11).

One JVM, attached to four times with scripts/bin/attach:
1. a typo (names=bogus): the agent disables itself; scripts/bin/attach exits non-zero saying nothing
   will be written; the JVM's stderr names the bad option;
2. an unusable dir= (a path under a regular file): the same, the JVM's stderr naming the path;
3. the corrected options: scripts/bin/attach exits 0 and names the dump it writes (before the fix it
   refused this one as "already loaded" and exited 0 while nothing was written);
4. other options while the agent runs: scripts/bin/attach exits non-zero saying the options were not
   applied and how to change them; with --force the load reaches the agent, which keeps its
   options and says so in one warning naming both option strings and the way out (stop first).
Then the JVM finishes: exit 0, output intact, the one dump valid and closed, holding the code
compiled after the attach; the directories of the other loads never created.
"""
import subprocess

import pytest

from support.checks import check, log
from support.jvm import wait_line
from support.output import agent_lines, dumps_in

from .conftest import PHASE2_COMPILED

ROUNDS = 3000


@pytest.mark.meson(every_jdk=True)
def test_attach_sequences(ctx) -> None:
    expected = ctx.expected_output(ROUNDS)
    gate = ctx.work / "gate"
    jvm_args = PHASE2_COMPILED + (["-XX:+EnableDynamicAgentLoading"] if ctx.jvm.jdk.feature >= 21 else [])
    proc = ctx.jvm.start("Work", ROUNDS, "return", gate, jvm_args=jvm_args)
    wait_line(proc, "READY", timeout=120)

    def attach(options: str, force: bool = False) -> subprocess.CompletedProcess:
        command = [str(ctx.scripts / "bin" / "attach"), "--agent", str(ctx.agent), *(["--force"] if force else []),
                   str(proc.pid), options]
        r = subprocess.run(command, capture_output=True, text=True, timeout=120)
        log(f"$ attach {options}{' --force' if force else ''}: exit {r.returncode}\n{r.stdout}{r.stderr}".rstrip())
        return r

    def new_agent_lines(seen: list) -> list:
        lines = [line for line in agent_lines(proc.err_path.read_text(errors="replace"))]
        fresh = lines[len(seen):]
        seen[:] = lines
        return fresh

    seen: list = []
    blocker = ctx.work / "a-file"
    blocker.write_text("not a directory\n")
    out, other = ctx.work / "out", ctx.work / "other"
    for what, options, named in (("typo", "names=bogus", "bogus"),
                                 ("unusable dir=", f"dir={blocker}/sub", str(blocker))):
        r = attach(options)
        check(r.returncode != 0 and "nothing will be written" in r.stderr,
              f"{what}: scripts/bin/attach should exit non-zero saying nothing will be written", r.stdout + r.stderr)
        lines = new_agent_lines(seen)
        check(any("error" in line and named in line for line in lines), f"{what}: the JVM's stderr should name {named}",
              "\n".join(lines))

    r = attach(f"dir={out}")
    check(r.returncode == 0 and f"writing {out}/jit-{proc.pid}.dump" in r.stdout,
          "the corrected attach should start the agent and name its dump", r.stdout + r.stderr)
    check(new_agent_lines(seen) == [], "the corrected attach: no agent message expected")

    r = attach(f"dir={other}")
    check(r.returncode != 0 and "already runs" in r.stdout and "not applied" in r.stderr
          and f"stop it first (jitdump-attach {proc.pid} stop)" in r.stderr,
          "other options while running: scripts/bin/attach should exit non-zero saying they were not applied",
          r.stdout + r.stderr)
    r = attach(f"dir={other}", force=True)
    check(r.returncode != 0 and "not applied" in r.stderr, "--force: scripts/bin/attach should still say so",
          r.stdout + r.stderr)
    lines = new_agent_lines(seen)
    check(len(lines) == 1 and "warning: already running in this JVM" in lines[0] and f"dir={out}" in lines[0]
          and f"dir={other}" in lines[0] and "Stop the session first (jitdump-attach PID stop" in lines[0],
          "--force: the agent should warn once, naming the kept and the ignored options", "\n".join(lines))

    gate.touch()
    rc = proc.wait(timeout=120)
    stderr = proc.err_path.read_text(errors="replace")
    check(rc == 0, f"JVM exit {rc}", stderr)
    check(proc.out_path.read_text().splitlines() == expected, "program output changed", stderr)
    check(not other.exists() and sorted(p.name for p in ctx.work.glob("a-file*")) == ["a-file"],
          "a load whose options were refused or ignored created files")
    dumps = dumps_in(out)
    check(len(dumps) == 1, f"expected one dump in {out}, found {dumps}")
    d = ctx.assert_valid(dumps[0], "the attached agent's dump")
    check(d.closed, "the dump should end with CLOSE", d.describe())
    check(any("Work$P" in load.name for load in d.loads), "the dump lacks the code compiled after the attach")
    log(f"attach sequence: two refused loads, one that writes ({len(d.loads)} loads), one ignored with a warning")
