"""A JVM as pid 1 of its own pid and mount namespaces with a private tmpfs /tmp, as in a
container: starting it, finding its host pid, reading its namespace pids. Needs root and
unshare (util-linux)."""
from __future__ import annotations

import os
import shlex
import time

from .checks import check
from .jvm import Jvm
from .prereq import require_command, require_root

# Where private_tmp() puts the workload classes and the agent inside the namespace.
NS_CLASSES = "/tmp/app"
NS_AGENT = "/tmp/agent/libjitdumpagent.so"


def require() -> None:
    require_root("unshare --pid --mount")
    require_command("unshare", "util-linux")


def private_tmp(jvm: Jvm) -> str:
    """Shell that gives a new mount namespace its own tmpfs /tmp (as a container has) holding the
    workload classes and the agent. They are copied in because the build directory may itself
    live under /tmp (a CI clone), where the new mount hides it: opened before the mount, they
    stay reachable through /proc/self/fd."""
    return (f"exec 3<{shlex.quote(str(jvm.classes))} 4<{shlex.quote(str(jvm.agent))} && "
            "mount -t tmpfs -o mode=1777 tmpfs /tmp && "
            f"mkdir -p /tmp/jit {NS_CLASSES} {os.path.dirname(NS_AGENT)} && "
            f"cp -r /proc/self/fd/3/. {NS_CLASSES} && cp /proc/self/fd/4 {NS_AGENT} && exec 3<&- 4<&- && ")


def unshare(jvm: Jvm, inner: str):
    """Runs the shell command `inner` as pid 1 of new pid+mount namespaces (a started process)."""
    return jvm.spawn(["unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c", inner])


def start_in_namespace(jvm: Jvm, java_args: str, agent_options: str):
    """Starts java as pid 1 of new pid+mount namespaces with a private tmpfs /tmp. Returns
    (unshare process, host pid of the JVM)."""
    p = unshare(jvm, private_tmp(jvm) +
                f"exec {jvm.java} -agentpath:{NS_AGENT}={agent_options} -cp {NS_CLASSES} {java_args}")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                children = f.read().split()
        except OSError:
            children = []
        for child in children:
            try:
                exe = os.readlink(f"/proc/{child}/exe")
            except OSError:
                continue
            if os.path.basename(exe) == "java":
                return p, int(child)
        time.sleep(0.01)
    check(False, "the JVM did not start in the namespace")


def ns_pid_of(hostpid: int) -> list[int]:
    """The process's pid in each pid namespace it is in, outermost first ([] if it is gone)."""
    with open(f"/proc/{hostpid}/status") as f:
        for line in f:
            if line.startswith("NStgid:"):
                return [int(x) for x in line.split()[1:]]
    return []
