"""What the perf tests share: perf and perf-java with their side effects kept in the work
directory, the bundled demo and the javac workload, and the symbolization measure."""
from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from support import perf
from support.checks import CheckFailed, SoftChecks, figure
from support.jdks import Jdk
from support.jitdump import Tool
from support.jvm import compile_java
from support.prereq import require_file

SRC_ZIP = "/usr/lib/jvm/openjdk-17/src.zip"
# java.util and a few subpackages: ~300 sources, 10-40 s of javac depending on the machine's load.
JAVAC_PACKAGES = re.compile(
    r"^java\.base/java/util/(concurrent/|concurrent/atomic/|concurrent/locks/|function/|stream/|regex/)?[A-Za-z0-9_]+\.java$")
JITTED = re.compile(r"jitted-(\d+)-(\d+)\.so")
PERFMAP = re.compile(r"perf-\d+\.map|//anon|\[anon|\[JIT\]")
SCRIPT_ROW = re.compile(r"^\s*(\d+)\s+([\d.]+):\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")


def run(cmd, check_rc=True, env=None, cwd=None, timeout=900) -> subprocess.CompletedProcess:
    t0 = time.monotonic()
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
                       errors="replace")
    p.seconds = time.monotonic() - t0
    if check_rc and p.returncode != 0:
        raise CheckFailed(f"command failed (rc={p.returncode}): {' '.join(map(str, cmd))}\n"
                          f"{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    return p


def fresh(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    return path


class PerfRun:
    """One perf test: perf and perf-java with $HOME and the build-id cache in its work directory."""

    def __init__(self, build, agent: Path, tool: Tool, jdk: Jdk, work: Path, check: SoftChecks):
        self.build = build
        self.agent = agent
        self.tool = tool
        self.jdk = jdk
        self.work = work
        self.check = check
        self.perf_java_path = build.scripts / "bin" / "perf-java"
        self.demo_src = build.scripts / "demo-app"
        self.home = work / "home"  # perf and the JVM never see the real $HOME
        self.bid = work / "buildid"
        self.env = perf.env(self.home, PERF_JAVA_AGENT=str(agent), PERF_JAVA_JITDUMP=str(tool.path))

    def perf(self, *args, check_rc=True, **kw):
        return run(["perf", "--buildid-dir", self.bid, *args], check_rc=check_rc, env=self.env, **kw)

    def perf_java(self, *args, check_rc=True, **kw):
        return run([self.perf_java_path, *args], check_rc=check_rc, env=self.env, **kw)

    def demo_classes(self) -> Path:
        return compile_java(self.jdk, [self.demo_src / "demo" / "Demo.java"],
                            self.build.tests / "classes" / f"perf-demo-{self.jdk.name}", options=["-g"])

    def javac_sources(self):
        """A fixed subset of Debian's openjdk-17-source, unpacked once into the build dir."""
        require_file(SRC_ZIP, "openjdk-17-source", "the javac workload's sources")
        root = self.build.tests / "jdk-src"
        listing = root / "files.txt"
        if not listing.exists():
            names = run(["unzip", "-Z1", SRC_ZIP]).stdout.split()
            wanted = sorted(n for n in names if JAVAC_PACKAGES.match(n))
            root.mkdir(parents=True, exist_ok=True)
            run(["unzip", "-q", "-o", SRC_ZIP, *wanted, "-d", root])
            tmp = listing.with_suffix(".tmp")
            tmp.write_text("\n".join(str(root / n) for n in wanted) + "\n")
            tmp.rename(listing)
        return root, listing

    def record_demo(self, name, seconds="4", freq="2999", agent_opts=None, extra=()) -> Path:
        """The demo under perf-java --inject: these tests judge perf's own views (perf.jit.data),
        which perf-java makes only on request since jitdump report reads perf.data itself."""
        run_dir = fresh(self.work / name)
        args = ["-o", run_dir, "-q", "--inject", "-F", freq, *extra]
        if agent_opts:
            args += ["--agent-opts", agent_opts]
        self.perf_java(*args, "--", self.jdk.java, "-cp", self.demo_classes(), "demo.Demo", seconds)
        return run_dir

    def hot_lines(self) -> dict:
        """{'divideChain': N, 'leaf': N}: the lines marked "// HOT: name" in Demo.java."""
        out = {}
        for n, line in enumerate((self.demo_src / "demo" / "Demo.java").read_text().splitlines(), 1):
            m = re.search(r"// HOT: (\w+)", line)
            if m:
                out[m.group(1)] = n
        return out

    def script_rows(self, data) -> list:
        """(pid, time, ip, sym, dso) per sample, in perf script's order."""
        p = self.perf("script", "-i", data, "-F", "pid,time,ip,sym,dso", "--no-inline")
        rows = []
        for line in p.stdout.splitlines():
            m = SCRIPT_ROW.match(line)
            if m:
                rows.append((int(m.group(1)), m.group(2), int(m.group(3), 16), m.group(4), m.group(5)))
        return rows

    def dump_loads(self, run_dir: Path) -> list:
        """The CODE_LOADs of every dump in the run's jit/ directory."""
        loads = []
        for path in sorted((run_dir / "jit").glob("jit-*.dump")):
            loads += self.tool.records(path).loads
        return loads

    def symbolization(self, run_dir: Path, label: str) -> dict:
        """Share of the samples in JIT code that perf attributes to a named symbol after inject.

        JIT samples are those that perf, before inject, puts in the JVM's anonymous executable code
        cache mapping (shown as /tmp/perf-PID.map). After inject each must be in a jitted-*.so with a
        symbol; anything else (still perf-PID.map, [unknown]) is unresolved. Unresolved samples are
        classified with the dump: "late" when a load covers the ip but is stamped after the sample
        (what backdate fixes), "unreported" when no load in the whole dump covers the ip (code the
        JVM never reported through JVMTI), "other" otherwise.
        Returns a dict: share, jit, resolved, unresolved, late, unreported, other, share_reported.
        """
        before = self.script_rows(run_dir / "perf.data")
        after = self.script_rows(run_dir / "perf.jit.data")
        self.check(len(before) == len(after), f"{label}: perf inject kept every sample ({len(before)} -> {len(after)})")
        jit_keys = collections.Counter((r[0], r[1], r[2]) for r in before if PERFMAP.search(r[4]))
        resolved, unresolved = 0, []
        for r in after:
            key = (r[0], r[1], r[2])
            if jit_keys.get(key, 0) <= 0:
                continue
            jit_keys[key] -= 1
            if JITTED.search(r[4]) and not r[3].startswith("[unknown]"):
                resolved += 1
            else:
                unresolved.append(r)
        loads = self.dump_loads(run_dir)
        kinds = collections.Counter()
        for pid, t, ip, sym, dso in unresolved:
            cover = [r for r in loads if r.pid == pid and r.code_addr <= ip < r.code_addr + r.code_size]
            t_ns = round(float(t) * 1e9)
            kind = ("unreported" if not cover else
                    "late" if all(r.timestamp > t_ns - 1000 for r in cover) else "other")
            kinds[kind] += 1
            if sum(kinds.values()) <= 12:
                desc = (", ".join(f"{r.name[:50]} stamped {r.timestamp / 1e9:.6f}" for r in cover[:2])
                        or "no load covers it")
                print(f"  unresolved ({kind}): t={t} ip={ip:#x} {sym} ({os.path.basename(dso)}): {desc}")
        total = resolved + len(unresolved)
        reported = total - kinds["unreported"]
        res = dict(jit=total, resolved=resolved, unresolved=len(unresolved), late=kinds["late"],
                   unreported=kinds["unreported"], other=kinds["other"],
                   share=100.0 * resolved / total if total else 0.0,
                   share_reported=100.0 * resolved / reported if reported else 0.0)
        print(f"{label}: {len(before)} samples, {total} in JIT code, {resolved} resolved, {len(unresolved)} unresolved "
              f"(late {res['late']}, unreported code {res['unreported']}, other {res['other']}): {res['share']:.3f}%, "
              f"{res['share_reported']:.3f}% of the samples in code the JVM reported")
        return res


def report_symbolization(prefix: str, res: dict) -> None:
    for k in ("jit", "unresolved", "late", "unreported", "other"):
        figure(f"{prefix}.{k}", res[k])
    figure(f"{prefix}.symbolized_percent", f"{res['share']:.3f}")
    figure(f"{prefix}.symbolized_percent_of_reported_code", f"{res['share_reported']:.3f}")


def disk_figures(run_dir: Path, label: str) -> dict:
    summary = dict(line.split() for line in (run_dir / "summary.txt").read_text().splitlines())
    for key in ("inject_seconds", "jitted_elfs", "run_bytes", "jit_dir_bytes"):
        figure(f"{label}.{key}", summary[key])
    return summary
