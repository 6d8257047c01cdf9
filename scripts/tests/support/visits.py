"""What "a visit leaves nothing behind" means, checked on a live JVM (docs/agent.md, Sessions): no
thread of the agent's, no descriptor of its files, no dump mapped, and the last dump closed with its
CLOSE record and no longer growing while the JVM goes on compiling. Plus the churn workload
(scripts/bench/java/Churn.java), a JVM that compiles and unloads code for as long as it runs."""
from __future__ import annotations

import os
import time
from pathlib import Path

from .checks import check, log
from .jvm import Jvm, compile_java
from .procs import wait_for

# Every thread of the agent's is named jitdump...: the writer calls itself "jitdump-writer", and the
# JVM names it "jitdumpagent wr" (15 bytes of its Java name) where that shows instead.
AGENT_THREAD_PREFIX = "jitdump"


def churn_jvm(repo: Path, build, jdk, agent: Path, work: Path, cleanup) -> Jvm:
    """A Jvm running Churn (compiled once per JDK into BUILD/scripts/tests/classes/churn-JDK)."""
    classes = build.tests / "classes" / f"churn-{jdk.name}"
    compile_java(jdk, [repo / "scripts" / "bench" / "java" / "Churn.java"], classes, options=["-nowarn"])
    return Jvm(jdk, agent, classes, work, cleanup)


def agent_threads(pid: int) -> list[str]:
    """The names of the process's threads that are the agent's."""
    names = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return [n for n in names if n.startswith(AGENT_THREAD_PREFIX)]


def descriptors_under(pid: int, directory: Path) -> list[str]:
    """The targets of the process's descriptors inside `directory`."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory) + "/") or target == str(directory):
            found.append(target)
    return found


def mapped_dumps(pid: int) -> list[str]:
    with open(f"/proc/{pid}/maps") as f:
        return sorted({line.split()[-1] for line in f if "/jit-" in line and ".dump" in line})


def status_kib(pid: int, field: str) -> int:
    """A kB field of /proc/PID/status (VmRSS, HugetlbPages, ...); -1 where the kernel has none."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def rss_mib(pid: int) -> float:
    kib = status_kib(pid, "VmRSS")
    return kib / 1024 if kib >= 0 else 0.0


def thread_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def check_left_nothing(tool, pid: int, dump: Path, steady_seconds: float, what: str) -> None:
    """After a visit: nothing of the agent's in the JVM, `dump` closed and constant in size for
    `steady_seconds` while the JVM runs on."""
    check(wait_for(lambda: not agent_threads(pid), 10), f"{what}: agent threads left: {agent_threads(pid)}")
    check(not descriptors_under(pid, dump.parent), f"{what}: descriptors left: {descriptors_under(pid, dump.parent)}")
    check(not mapped_dumps(pid), f"{what}: dumps still mapped: {mapped_dumps(pid)}")
    d = tool.records(dump)
    check(d.closed and d.truncated is None, f"{what}: {dump} is not closed with JIT_CODE_CLOSE", d.describe())
    size = dump.stat().st_size
    time.sleep(steady_seconds)
    check(dump.stat().st_size == size, f"{what}: {dump} grew from {size} to {dump.stat().st_size} bytes after the visit")
    log(f"{what}: no agent thread, descriptor or mapping left; {dump.name} closed, {size} bytes, constant for "
        f"{steady_seconds:g} s")
