"""What the jitdump report tests share: the TwoCallers workload (a callee inlined into one of its
two callers), running `jitdump report`, and reading its outputs."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from support.checks import CheckFailed, figure, log
from support.jvm import compile_java

from . import profile_diff
from .runs import run

JAVA = Path(__file__).resolve().parent / "java"
C = "report.TwoCallers."
CALLEE, INLINING, OTHER = C + "callee", C + "inliningCaller", C + "otherCaller"


def two_callers(ctx) -> tuple[Path, list]:
    """The compiled workload and the JVM options that make callee() inlined into inliningCaller()
    only (a compiler directive forbids inlining it into otherCaller())."""
    classes = compile_java(ctx.jdk, [JAVA / "TwoCallers.java"], ctx.build.tests / "classes" / f"report-{ctx.jdk.name}",
                           options=["-g"])
    return classes, ["-XX:+UnlockDiagnosticVMOptions", f"-XX:CompilerDirectivesFile={JAVA / 'two-callers.directives'}"]


def marked_lines() -> dict:
    """{'callee': N, 'inlining call': N, 'other call': N}: the lines marked "// MARK: ..."."""
    out = {}
    for n, line in enumerate((JAVA / "TwoCallers.java").read_text().splitlines(), 1):
        m = re.search(r"// MARK: (.+)$", line)
        if m:
            out[m.group(1).strip()] = n
    return out


def folded(path: Path) -> list:
    """[(frames, count)] of a folded-stacks file."""
    out = []
    for line in path.read_text().splitlines():
        stack, count = line.rsplit(" ", 1)
        out.append((stack.split(";"), int(count)))
    return out


def report(ctx, data: Path, *args) -> str:
    """Runs `jitdump report DATA ARGS`; returns its stderr (the summary lines)."""
    p = run([ctx.tool.path, "report", data, *args], env=ctx.env, timeout=900)
    return p.stderr


class Model:
    """`jitdump report --profile-json`: the Profile the pprof and flame-graph writers get."""

    def __init__(self, path: Path):
        self.json = json.loads(path.read_text())
        self.functions = self.json["functions"]
        self.locations = self.json["locations"]
        self.samples = self.json["samples"]
        self.processes = self.json["processes"]

    def chain(self, location: int) -> list:
        """[(name, kind, line)] innermost first."""
        return [(self.functions[l["function"]]["name"], self.functions[l["function"]]["kind"], l["line"])
                for l in self.locations[location]["lines"]]

    def count(self, predicate) -> int:
        """Samples whose stack (a list of chains, leaf first) satisfies `predicate`."""
        return sum(s["count"] for s in self.samples if predicate([self.chain(l) for l in s["locations"]]))

    @property
    def total(self) -> int:
        return sum(s["count"] for s in self.samples)


def model(ctx, data: Path, out: Path, *args) -> Model:
    report(ctx, data, "-q", "--profile-json", out, *args)
    return Model(out)


# What the report's --script reads: perf script's side-band events and every sample with these
# fields (jitdump/report/perf_script.h). --no-inline: perf would run addr2line on every native
# frame; --max-stack: perf script's default cuts chains at 127 frames.
SCRIPT_ARGS = ["--show-mmap-events", "--show-task-events", "-F", "comm,pid,tid,time,period,event,ip,sym,dso", "--ns",
               "--no-inline", "--max-stack", "65535"]


def no_perf_env(env: dict, out: Path) -> dict:
    """`env` with no perf to be found: PATH is one empty directory and $PERF unset, so a report that
    tried to run perf would fail."""
    empty = out / "no-perf-on-path"
    empty.mkdir(parents=True, exist_ok=True)
    return {k: v for k, v in dict(env, PATH=str(empty)).items() if k != "PERF"}


def same_profiles(tool: Path, env: dict, data: Path, out: Path, label: str, *args, names: bool = False) -> tuple:
    """jitdump report's profile of `data` as real `perf script` prints it (the test runs perf
    script and gives its text to `jitdump report --script TEXT DATA`, DATA telling only how the
    recording was made) and as the perf.data reader reads it with no perf on PATH: the same stacks,
    sample for sample (profile_diff.py). Returns (samples, samples with an equal stack, the
    first differences)."""
    out.mkdir(parents=True, exist_ok=True)
    text = out / "perf-script.txt"
    with open(text, "w") as f:
        p = subprocess.run([str(c) for c in ["perf", "script", "-i", data, *SCRIPT_ARGS]], env=env, timeout=1800,
                           stdout=f, stderr=subprocess.PIPE, text=True, errors="replace")
    if p.returncode != 0:
        raise CheckFailed(f"perf script -i {data} failed (rc={p.returncode}): {p.stderr[-2000:]}")
    run([tool, "report", "--script", text, data, "-q", "--profile-json", out / "perf-script.json", *args], env=env,
        timeout=1800)
    text.unlink()
    run([tool, "report", data, "-q", "--profile-json", out / "perfdata.json", *args], env=no_perf_env(env, out),
        timeout=1800)
    total, equal, diffs = profile_diff.compare(out / "perf-script.json", out / "perfdata.json", names=names)
    log(f"{label}: {equal} of {total} samples have the same stack through perf.data (no perf on PATH) as in "
        "perf script's text" + ("".join("\n  " + d for d in diffs)))
    figure(f"report.differential.{label}.samples", total)
    figure(f"report.differential.{label}.equal", equal)
    return total, equal, diffs


def check_same_profiles(ctx, data: Path, label: str, *args) -> None:
    """same_profiles as one of the test's checks (the recording must have samples)."""
    total, equal, _ = same_profiles(ctx.tool.path, ctx.env, data, ctx.work / f"differential-{label}", label, *args)
    ctx.check(total > 0 and equal == total,
              f"{label}: the perf.data reader's profile equals perf script's ({equal} of {total} samples)")
