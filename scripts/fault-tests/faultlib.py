"""Shared helpers for the fault tests: finding the JDK, compiling the Java workloads, running a
JVM with the agent, mounts that are always undone, and checking dumps.

Every test script takes the same arguments (meson passes them):
    --agent PATH   libjitdumpagent.so
    --tool PATH    the jitdump CLI (jitdump check FILE: 0 valid, 1 invalid)
    --work DIR     scratch directory (wiped at start)
    --java-home D  JDK to run (default: $FAULT_JAVA_HOME, $JAVA_HOME, Debian's 17, or `java` on PATH)
    --long         the long variant (more iterations); CI runs the short one
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
JAVA_SRC = HERE / "java"

MAGIC = 0x4A695444
REC_LOAD, REC_MOVE, REC_DEBUG, REC_CLOSE, REC_UNWIND = 0, 1, 2, 3, 4
REC_SAMPLY_INLINE = 827346259


# ---------------------------------------------------------------- reporting

class TestFailure(Exception):
    pass


_checks = 0


def check(cond: bool, message: str, detail: str = "") -> None:
    """Fails the test with `message` (and `detail`, e.g. the JVM's stderr) unless `cond`."""
    global _checks
    _checks += 1
    if not cond:
        raise TestFailure(message + (("\n--- detail ---\n" + detail.rstrip()) if detail else ""))


# Agent bugs the tests found and that are not fixed yet (see README.md, "Known agent bugs").
# A check tagged with one of these names reports XFAIL instead of failing, so CI stays green
# while the bug is open; FAULT_STRICT=1 makes them fail. When the bug is fixed the check
# passes and says XPASS: delete the name here.
# Agent bugs the suite found, listed here while open so CI stays green (XFAIL); all fixed so far.
KNOWN_BUGS: set = set()


def known_bug(name: str, cond: bool, message: str, detail: str = "") -> None:
    """check(), except that while `name` is in KNOWN_BUGS a failure only logs XFAIL."""
    strict = os.environ.get("FAULT_STRICT") == "1"
    if cond:
        if name in KNOWN_BUGS:
            log(f"XPASS {name}: fixed? remove it from KNOWN_BUGS in faultlib.py")
        return
    if name in KNOWN_BUGS and not strict:
        log(f"XFAIL {name}: {message}")
        return
    check(False, f"[{name}] {message}", detail)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def main(body) -> None:
    """Runs `body(ctx)`; prints PASS/FAIL; exits 0/1. Cleanup handlers run in any case."""
    ctx = Context.from_args()
    start = time.monotonic()
    try:
        body(ctx)
    except TestFailure as failure:
        print(f"FAIL: {failure}", flush=True)
        _run_cleanups()
        sys.exit(1)
    except subprocess.TimeoutExpired as e:
        print(f"FAIL: timed out: {e}", flush=True)
        _run_cleanups()
        sys.exit(1)
    _run_cleanups()
    print(f"PASS ({_checks} checks, {time.monotonic() - start:.1f} s)", flush=True)
    sys.exit(0)


# ---------------------------------------------------------------- cleanup (mounts, processes)

_cleanups: list = []


def on_exit(fn) -> None:
    """Registers `fn` to run at the end of the test, last registered first, whatever happens."""
    _cleanups.append(fn)


def _run_cleanups() -> None:
    while _cleanups:
        fn = _cleanups.pop()
        try:
            fn()
        except Exception as e:  # cleanup must never hide the test's verdict
            print(f"cleanup: {e}", file=sys.stderr)


atexit.register(_run_cleanups)
for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_sig, lambda signum, frame: sys.exit(128 + signum))


def mount_tmpfs(target: Path, options: str) -> None:
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "faulttest", str(target)], check=True)
    on_exit(lambda: umount(target))


def bind_mount_readonly(source: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "--bind", str(source), str(target)], check=True)
    on_exit(lambda: umount(target))
    subprocess.run(["mount", "-o", "remount,bind,ro", str(target)], check=True)


def umount(target: Path) -> None:
    for _ in range(50):
        if subprocess.run(["mountpoint", "-q", str(target)]).returncode != 0:
            return
        if subprocess.run(["umount", str(target)], stderr=subprocess.DEVNULL).returncode == 0:
            return
        time.sleep(0.1)
    subprocess.run(["umount", "-l", str(target)])


def need_root() -> None:
    if os.geteuid() != 0:
        print("SKIP: needs root (mounts, chown)", flush=True)
        sys.exit(77)


# ---------------------------------------------------------------- context

class Context:
    def __init__(self, agent: Path, tool: Path, work: Path, java_home: Path, long: bool, seed: int):
        self.agent = agent
        self.tool = tool
        self.work = work
        self.java_home = java_home
        self.long = long
        self.rng = random.Random(seed)
        self.seed = seed
        self._classes: Path | None = None

    @staticmethod
    def from_args() -> "Context":
        p = argparse.ArgumentParser()
        p.add_argument("--agent", required=True)
        p.add_argument("--tool", required=True)
        p.add_argument("--work", required=True)
        p.add_argument("--java-home", default="")
        p.add_argument("--long", action="store_true")
        p.add_argument("--seed", type=int, default=int(os.environ.get("FAULT_SEED", "0")) or int(time.time()))
        a = p.parse_args()
        work = Path(a.work).resolve()
        if work.exists():
            _force_rmtree(work)
        work.mkdir(parents=True)
        os.chmod(work, 0o755)
        agent = Path(a.agent).resolve()
        check(agent.is_file(), f"agent library missing: {agent}")
        log(f"seed {a.seed} (rerun with FAULT_SEED={a.seed}); work dir {work}")
        return Context(agent, Path(a.tool).resolve(), work, find_java_home(a.java_home), a.long, a.seed)

    # ---- Java

    @property
    def java(self) -> str:
        return str(self.java_home / "bin" / "java")

    def classes(self) -> Path:
        """Compiles every workload under java/ once (with the JDK that runs it)."""
        if self._classes is None:
            out = self.work / "classes"
            out.mkdir(exist_ok=True)
            javac = self.java_home / "bin" / "javac"
            sources = sorted(str(p) for p in JAVA_SRC.glob("*.java"))
            r = subprocess.run([str(javac), "-nowarn", "-d", str(out), *sources], capture_output=True, text=True)
            check(r.returncode == 0, "javac failed", r.stdout + r.stderr)
            self._classes = out
        return self._classes

    def agent_arg(self, options: str | bytes | None) -> str | bytes:
        if options is None or options == "":
            return f"-agentpath:{self.agent}"
        if isinstance(options, bytes):
            return b"-agentpath:" + os.fsencode(self.agent) + b"=" + options
        return f"-agentpath:{self.agent}={options}"

    def java_cmd(self, options, main: str, *args: str, jvm_args=()) -> list:
        return [*asan_prefix(), self.java, "-Xshare:auto", *jvm_args, self.agent_arg(options), "-cp",
                str(self.classes()), main, *args]

    def run_java(self, options, main: str = "Work", *args: str, jvm_args=(), env=None, timeout: float = 120,
                 cwd: Path | None = None) -> subprocess.CompletedProcess:
        cmd = self.java_cmd(options, main, *args, jvm_args=jvm_args)
        full_env = dict(os.environ)
        full_env.pop("JITDUMPAGENT_OPTIONS", None)
        full_env.pop("JAVA_TOOL_OPTIONS", None)
        full_env.pop("_JAVA_OPTIONS", None)
        if env:
            full_env.update(env)
        return subprocess.run(cmd, capture_output=True, env=full_env, timeout=timeout, cwd=cwd or self.work)

    def expected_result(self, rounds: int) -> str:
        """The workload's RESULT line computed without the agent (cached per round count)."""
        cache = self.__dict__.setdefault("_expected", {})
        if rounds not in cache:
            r = subprocess.run([self.java, "-cp", str(self.classes()), "Work", str(rounds)], capture_output=True,
                               text=True, timeout=120)
            check(r.returncode == 0, "workload fails without the agent", r.stderr)
            cache[rounds] = r.stdout.splitlines()[0]
        return cache[rounds]

    def expected_output(self, rounds: int) -> list[str]:
        """The workload's stdout lines in gated mode (RESULT, READY, RESULT2), without the agent."""
        cache = self.__dict__.setdefault("_expected_gated", {})
        if rounds not in cache:
            gate = self.work / "gate-open"
            gate.touch()
            r = subprocess.run([self.java, "-cp", str(self.classes()), "Work", str(rounds), "return", str(gate)],
                               capture_output=True, text=True, timeout=120)
            check(r.returncode == 0, "workload fails without the agent", r.stderr)
            cache[rounds] = r.stdout.splitlines()
        return cache[rounds]

    def start_java(self, options, main: str = "Work", *args: str, jvm_args=(), env=None,
                   wrapper: list | None = None) -> subprocess.Popen:
        """Starts a JVM; stdout/stderr go to files in the work dir (proc.out_path / proc.err_path)."""
        cmd = (wrapper or []) + self.java_cmd(options, main, *args, jvm_args=jvm_args)
        full_env = dict(os.environ)
        for k in ("JITDUMPAGENT_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS"):
            full_env.pop(k, None)
        full_env.update(env or {})
        n = self.__dict__.setdefault("_started", 0) + 1
        self._started = n
        out_path, err_path = self.work / f"jvm{n}.out", self.work / f"jvm{n}.err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=full_env, cwd=self.work)
        proc.out_path, proc.err_path = out_path, err_path
        on_exit(lambda: kill_group(proc))
        return proc

    # ---- the jitdump CLI

    def tool_check(self, dump: Path) -> subprocess.CompletedProcess:
        """`jitdump check FILE`. Fails loudly when the tool is not built (not committed yet?)."""
        check(self.tool.is_file() and os.access(self.tool, os.X_OK),
              f"the jitdump CLI is missing at {self.tool}: it is built from jitdump/tool (target jitdump_tool); "
              "these tests need `jitdump check`")
        return subprocess.run([str(self.tool), "check", str(dump)], capture_output=True, text=True, timeout=120)

    def assert_valid(self, dump: Path, what: str, allow_truncated_tail: bool = False) -> "Dump":
        """Both the CLI and the independent walker below must accept `dump`."""
        r = self.tool_check(dump)
        check(r.returncode == 0, f"{what}: `jitdump check {dump}` exit {r.returncode}", r.stdout + r.stderr)
        d = read_dump(dump)
        check(d.header_ok, f"{what}: bad jitdump header", d.describe())
        check(allow_truncated_tail or d.truncated_bytes == 0,
              f"{what}: file does not end on a whole record ({d.truncated_bytes} stray bytes)", d.describe())
        return d


def _force_rmtree(path: Path) -> None:
    # Leftover mounts from a crashed earlier run must not make us delete through them.
    r = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True)
    for target in sorted(r.stdout.split(), reverse=True):
        if target == str(path) or target.startswith(str(path) + "/"):
            umount(Path(target))
    shutil.rmtree(path, ignore_errors=True)


def asan_prefix() -> list:
    """With FAULT_ASAN=1 (and --agent built with -Db_sanitize=address,undefined), the JVM runs with
    gcc's libasan preloaded, set up so HotSpot's own SEGV handling keeps working. `env` exec's
    java, so the pid is the same."""
    if os.environ.get("FAULT_ASAN") != "1":
        return []
    libasan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return ["env", f"LD_PRELOAD={libasan}",
            "ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0:abort_on_error=1",
            "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"]


def find_java_home(explicit: str) -> Path:
    for candidate in (explicit, os.environ.get("FAULT_JAVA_HOME", ""), os.environ.get("JAVA_HOME", ""),
                      "/usr/lib/jvm/java-17-openjdk-amd64"):
        if candidate and (Path(candidate) / "bin" / "java").is_file():
            return Path(candidate)
    java = shutil.which("java")
    check(java is not None, "no JDK found (set FAULT_JAVA_HOME)")
    return Path(os.path.realpath(java)).parent.parent


# ---------------------------------------------------------------- agent output

def agent_lines(stderr: bytes | str) -> list[str]:
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    return [line for line in text.splitlines() if line.startswith("jitdumpagent:")]


def stats_from_stderr(stderr: bytes | str) -> dict | None:
    for line in agent_lines(stderr):
        if line.startswith("jitdumpagent: stats: "):
            return json.loads(line[len("jitdumpagent: stats: "):])
    return None


def read_stats(path: Path) -> dict:
    check(path.is_file(), f"stats file {path} was not written")
    return json.loads(path.read_text())


def dumps_in(directory: Path) -> list[Path]:
    return sorted(directory.glob("jit-*.dump")) if directory.is_dir() else []


# ---------------------------------------------------------------- an independent dump walker

class Dump:
    def __init__(self) -> None:
        self.header_ok = False
        self.header_error = ""
        self.size = 0
        self.pid = 0
        self.counts: dict[int, int] = {}
        self.records = 0
        self.truncated_bytes = 0
        self.last_id = None
        self.names: list[str] = []

    @property
    def loads(self) -> int:
        return self.counts.get(REC_LOAD, 0)

    @property
    def debug_infos(self) -> int:
        return self.counts.get(REC_DEBUG, 0)

    @property
    def closed(self) -> bool:
        return self.last_id == REC_CLOSE and self.truncated_bytes == 0

    def describe(self) -> str:
        return (f"size {self.size} header_ok {self.header_ok} {self.header_error} records {self.records} "
                f"counts {self.counts} truncated_bytes {self.truncated_bytes} last_id {self.last_id}")


def read_dump(path: Path, names: bool = False) -> Dump:
    """Walks the records by their total_size: counts by type, and whether the tail is cut."""
    d = Dump()
    data = path.read_bytes()
    d.size = len(data)
    if len(data) < 40:
        d.header_error = "shorter than the header"
        return d
    magic, version, total, _mach, _pad, pid, _ts, flags = struct.unpack_from("<IIIIIIQQ", data, 0)
    if magic != MAGIC or version != 1 or total != 40 or flags not in (0, 1):
        d.header_error = f"magic {magic:#x} version {version} total_size {total} flags {flags}"
        return d
    d.header_ok = True
    d.pid = pid
    off = 40
    while off < len(data):
        if len(data) - off < 16:
            d.truncated_bytes = len(data) - off
            break
        rid, size, _ = struct.unpack_from("<IIQ", data, off)
        if size < 16 or off + size > len(data):
            d.truncated_bytes = len(data) - off
            break
        d.counts[rid] = d.counts.get(rid, 0) + 1
        d.records += 1
        d.last_id = rid
        if names and rid == REC_LOAD:
            start = off + 16 + 40  # pid tid vma code_addr code_size code_index
            end = data.index(b"\0", start, off + size)
            d.names.append(data[start:end].decode("utf-8", "replace"))
        off += size
    return d


# ---------------------------------------------------------------- processes

def wait_for(predicate, timeout: float, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            proc.kill()
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)
