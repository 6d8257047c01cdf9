"""The live suite's fixture: `demo_jvm`, the bundled demo running with the agent and perfmap=on,
its /tmp/perf-PID.map already naming the demo's hot methods."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from perf.runs import PerfRun
from support.checks import check, log
from support.jvm import clean_env
from support.procs import wait_for

# The demo's methods that get their own compiled code and most of its time (Demo.java).
DEMO_METHODS = ("demo.Demo.divideChain(long, int)", "demo.Demo.inlinedCaller(long, int)",
                "demo.Demo.countPrimes(int, int)")


@dataclass
class DemoJvm:
    pid: int
    perf_map: Path


@pytest.fixture
def demo_jvm(build, agent, tool, jdk, work, soft, cleanup) -> DemoJvm:
    classes = PerfRun(build, agent, tool, jdk, work, soft).demo_classes()
    out = work / "jit"
    # 600 s of CPU time: the test stops it long before.
    proc = subprocess.Popen([str(jdk.java), f"-agentpath:{agent}=perfmap=on,dir={out}", "-cp", str(classes),
                             "demo.Demo", "600"], stdout=open(work / "jvm.out", "wb"),
                            stderr=open(work / "jvm.err", "wb"), env=clean_env())
    perf_map = Path(f"/tmp/perf-{proc.pid}.map")
    cleanup.remove(perf_map)  # undo steps run last first: the JVM is killed, then its map goes
    cleanup.kill(proc)

    def hot_methods_mapped() -> bool:
        try:
            text = perf_map.read_text(errors="replace")
        except OSError:
            return False
        return all(m in text for m in DEMO_METHODS)
    check(wait_for(hot_methods_mapped, 120, 0.5) and proc.poll() is None,
          f"the demo JVM's {perf_map} never named {', '.join(DEMO_METHODS)}",
          (work / "jvm.err").read_text(errors="replace"))
    log(f"demo JVM {proc.pid} runs, {perf_map} names its hot methods")
    return DemoJvm(proc.pid, perf_map)
