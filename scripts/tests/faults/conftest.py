"""The faults suite's fixture: `ctx`, one test's JVMs with the agent (options first, as every
fault test passes them), the workload's expected output, and dump validation through the tool."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support.checks import check
from support.jitdump import Dump, Tool
from support.jvm import Jvm

# JVM flags for a test that checks that the code the workload's phase 2 compiles after its gate
# (Work$P, $Q, $R) is in the dump: -Xbatch compiles in the calling thread when a method reaches
# its threshold, so that code is compiled long before phase 2 ends however busy the machine. A
# background compile can lose the race against the JVM's exit on a loaded 2-core machine
# (faults-same_pid-temurin-25 failed so once in a full run).
PHASE2_COMPILED = ["-Xbatch"]


class FaultContext:
    def __init__(self, build, jvm: Jvm, tool: Tool, work: Path, rng, long: bool):
        self.scripts = build.scripts
        self.jvm = jvm
        self.tool = tool
        self.work = work
        self.rng = rng
        self.seed = rng.seed_value
        self.long = long
        self.agent = jvm.agent
        self._expected: dict = {}

    # Options None or "" load the agent without options; bytes options test non-UTF-8 input.
    def java_cmd(self, options, main: str, *args, jvm_args=()) -> list:
        return self.jvm.command(main, *args, agent=options or "", jvm_args=jvm_args)

    def run_java(self, options, main: str = "Work", *args, **kwargs) -> subprocess.CompletedProcess:
        return self.jvm.run(main, *args, agent=options or "", **kwargs)

    def start_java(self, options, main: str = "Work", *args, **kwargs) -> subprocess.Popen:
        return self.jvm.start(main, *args, agent=options or "", **kwargs)

    def expected_result(self, rounds: int) -> str:
        """The workload's RESULT line computed without the agent (cached per round count)."""
        if rounds not in self._expected:
            r = self.jvm.run("Work", rounds)
            check(r.returncode == 0, "workload fails without the agent", r.stderr.decode(errors="replace"))
            self._expected[rounds] = r.stdout.decode().splitlines()[0]
        return self._expected[rounds]

    def expected_output(self, rounds: int) -> list[str]:
        """The workload's stdout lines in gated mode (RESULT, READY, RESULT2), without the agent."""
        key = ("gated", rounds)
        if key not in self._expected:
            gate = self.work / "gate-open"
            gate.touch()
            r = self.jvm.run("Work", rounds, "return", gate)
            check(r.returncode == 0, "workload fails without the agent", r.stderr.decode(errors="replace"))
            self._expected[key] = r.stdout.decode().splitlines()
        return self._expected[key]

    def tool_check(self, dump: Path) -> subprocess.CompletedProcess:
        return self.tool.check(dump)

    def assert_valid(self, dump: Path, what: str, allow_truncated_tail: bool = False) -> Dump:
        """`jitdump check` accepts `dump`, its header is whole and (unless allowed) it ends on a
        whole record. Returns what `jitdump records --json` read."""
        r = self.tool_check(dump)
        check(r.returncode == 0, f"{what}: `jitdump check {dump}` exit {r.returncode}", r.stdout + r.stderr)
        d = self.tool.records(dump)
        check(d.header_ok, f"{what}: bad jitdump header", d.describe())
        check(allow_truncated_tail or d.truncated_bytes == 0,
              f"{what}: file does not end on a whole record ({d.truncated_bytes} stray bytes)", d.describe())
        return d


@pytest.fixture
def ctx(build, jvm, tool, work, rng, long_run) -> FaultContext:
    return FaultContext(build, jvm, tool, work, rng, long_run)
