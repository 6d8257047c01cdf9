"""Starting JVMs, with or without the agent: one launcher for every suite.

A JVM's environment is cleaned of every variable that would load an agent or add options behind
the test's back (JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS, _JAVA_OPTIONS, JITDUMPAGENT_OPTIONS); the
test adds what it wants with env=. Started JVMs write their output to jvmN.out / jvmN.err in the
test's work directory (kept for inspection) and are killed at the end of the test.
With FAULT_ASAN=1 (and an agent built with -Db_sanitize=address,undefined) every JVM runs with
gcc's libasan preloaded, set up so HotSpot's own SEGV handling keeps working.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .checks import check
from .jdks import Jdk
from .procs import Cleanup

AGENT_ENV = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "JITDUMPAGENT_OPTIONS")


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV}
    env.update(extra)
    return env


def compile_java(jdk: Jdk, sources: list, out: Path, options=()) -> Path:
    """Compiles `sources` into `out` with `jdk`'s javac, unless they are older than the last
    compilation by the same JDK."""
    stamp = out / f".compiled-by-{jdk.name}"
    newest = max(os.path.getmtime(s) for s in sources)
    if stamp.exists() and stamp.stat().st_mtime >= newest:
        return out
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob(".compiled-by-*"):
        old.unlink()
    r = subprocess.run([jdk.javac, *options, "-d", str(out), *map(str, sources)], capture_output=True, text=True,
                       env=clean_env())
    check(r.returncode == 0, f"javac failed on {[Path(s).name for s in sources]}", r.stdout + r.stderr)
    stamp.touch()
    return out


def asan_prefix(preload: str = "") -> list:
    """With FAULT_ASAN=1: run under libasan, before the test's own LD_PRELOAD shim (`preload`)."""
    if os.environ.get("FAULT_ASAN") != "1":
        return []
    libasan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return ["env", f"LD_PRELOAD={libasan}" + (f":{preload}" if preload else ""),
            "ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:abort_on_error=1",
            "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"]


class Jvm:
    """JVMs of one JDK running the classes in `classes`, with the agent at `agent`."""

    def __init__(self, jdk: Jdk, agent: Path, classes: Path, work: Path, cleanup: Cleanup):
        self.jdk = jdk
        self.agent = agent
        self.classes = classes
        self.work = work
        self.cleanup = cleanup
        self._started = [0]  # shared with with_jdk() copies: one numbering of jvmN.out per test

    @property
    def java(self) -> str:
        return self.jdk.java

    def with_jdk(self, jdk: Jdk) -> "Jvm":
        """The same classes on another (newer) JDK."""
        other = Jvm(jdk, self.agent, self.classes, self.work, self.cleanup)
        other._started = self._started
        return other

    def agent_arg(self, options: str | bytes = "") -> str | bytes:
        """-agentpath:AGENT[=options]; bytes options give a bytes argument (non-UTF-8 tests)."""
        if isinstance(options, bytes):
            return b"-agentpath:" + os.fsencode(self.agent) + (b"=" + options if options else b"")
        return f"-agentpath:{self.agent}" + (f"={options}" if options else "")

    def command(self, main: str, *args, agent=None, jvm_args=(), env=None) -> list:
        """java [jvm_args] [-agentpath...] -cp CLASSES main args; agent=None runs without it.
        `env` (the one the JVM gets) only matters for its LD_PRELOAD under FAULT_ASAN."""
        agent_args = [] if agent is None else [self.agent_arg(agent)]
        return [*asan_prefix((env or {}).get("LD_PRELOAD", "")), self.java, *jvm_args, *agent_args, "-cp", str(self.classes), main, *map(str, args)]

    def run(self, main: str, *args, agent=None, jvm_args=(), env=None, timeout: float = 120,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Runs to the end; stdout and stderr captured as bytes."""
        return subprocess.run(self.command(main, *args, agent=agent, jvm_args=jvm_args, env=env), capture_output=True,
                              env=clean_env(**(env or {})), timeout=timeout, cwd=cwd or self.work)

    def start(self, main: str, *args, agent=None, jvm_args=(), env=None, wrapper=(), umask: int | None = None,
              cwd: Path | None = None) -> subprocess.Popen:
        """Starts in the background (see spawn)."""
        return self.spawn([*wrapper, *self.command(main, *args, agent=agent, jvm_args=jvm_args, env=env)], env=env,
                          umask=umask, cwd=cwd)

    def spawn(self, command: list, env=None, umask: int | None = None, cwd: Path | None = None,
              full_env: dict | None = None) -> subprocess.Popen:
        """Starts `command` (a JVM, or a wrapper around one) in the background; its output goes to
        proc.out_path / proc.err_path; it is killed at the end of the test."""
        self._started[0] += 1
        n = self._started[0]
        out_path, err_path = self.work / f"jvm{n}.out", self.work / f"jvm{n}.err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(command, stdout=out, stderr=err,
                                    env=full_env if full_env is not None else clean_env(**(env or {})),
                                    cwd=cwd or self.work,
                                    preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
        proc.out_path, proc.err_path = out_path, err_path
        self.cleanup.kill(proc)
        return proc


def output(proc: subprocess.Popen) -> tuple[str, str]:
    """(stdout, stderr) of a started JVM so far."""
    return (proc.out_path.read_text(errors="replace"), proc.err_path.read_text(errors="replace"))


def finish(proc: subprocess.Popen, timeout: float = 60) -> tuple[int, str, str]:
    """Waits for a started JVM: (exit status, stdout, stderr)."""
    proc.wait(timeout=timeout)
    return (proc.returncode, *output(proc))


def wait_line(proc: subprocess.Popen, prefix: str, timeout: float = 30) -> str:
    """The first line of the JVM's stdout that starts with `prefix`; fails if it exits or the
    time runs out first."""
    deadline = time.monotonic() + timeout
    while True:
        exited = proc.poll() is not None
        text = proc.out_path.read_text(errors="replace")
        for line in text[:text.rfind("\n") + 1].splitlines():  # whole lines only
            if line.startswith(prefix):
                return line.strip()
        check(not exited, f"process exited (rc {proc.returncode}) before printing '{prefix}'",
              proc.err_path.read_text(errors="replace"))
        check(time.monotonic() < deadline, f"timed out waiting for '{prefix}'")
        time.sleep(0.02)
