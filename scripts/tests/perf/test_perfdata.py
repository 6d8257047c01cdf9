"""The perf.data reader (jitdump/perfdata/, through `jitdump perfdata --records --json`) against
perf itself on real recordings of the demo JVM, one per shape the reader handles: -g, no call
graph, --call-graph dwarf, -z, pipe mode (plain and -z), two events, system-wide. For every
sample perf script prints, the reader must give the same thread, time, ip and event, in the same
order (perf's FINISHED_ROUND ordering), and as many frames: the kernel's call chain without its
context markers, and for DWARF recordings the user frames the reader unwinds from the stack
copy where perf unwinds them with its own unwinder. perf's LOST and sample counts agree with
the reader's statistics."""
import json
import re
import subprocess

import pytest

from support.checks import check, figure, log

from .profile_diff import guessed_cut_length
from .runs import fresh, run

HEADER = re.compile(r"^\s*(-?\d+)\s+(\d+)\.(\d+):\s+(\S+):\s*([0-9a-f]+)?")
END_OF_STACK = 2**64 - 1
MARKERS = 2**64 - 4095
CONTEXTS = {2**64 - 32, 2**64 - 128, 2**64 - 512}  # PERF_CONTEXT_HV, _KERNEL, _USER
SHAPES = {
    "g": ["-g"],
    "flat": [],
    "dwarf": ["--call-graph", "dwarf,4096"],
    "z": ["-g", "-z"],
    "two_events": ["-g", "-e", "task-clock"],
    "system_wide": ["-g", "-a"],
    "pipe": ["-g", "-o", "-"],
    "pipe_z": ["-g", "-z", "-o", "-"],
}


def perf_samples(ctx, data, dwarf):
    """[(tid, time ns, event, ip, frames)] as perf script prints them (frames: the call chain's
    lines, perf's end-of-stack frame of a DWARF unwind left out)."""
    fields = "tid,time,event,ip"
    p = ctx.perf("script", "-i", data, "-F", fields, "--ns", "--no-inline", "--max-stack", "65535", timeout=900)
    out, cur = [], None
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        m = HEADER.match(line)
        if m and not line.startswith("\t"):
            ip = int(m.group(5), 16) if m.group(5) else None  # printed here only without a call chain
            cur = [int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")), m.group(4), ip, []]
            out.append(cur)
        elif cur is not None:
            cur[4].append(int(line.split()[0], 16))
    for s in out:
        if dwarf and s[4] and s[4][-1] == END_OF_STACK:
            s[4].pop()
    return out


def reader_samples(ctx, data):
    """([(tid, time ns, event, ip, frames, pid, mapped)], the summary, {pid: [(start, end, pgoff,
    name)]}: what each process mapped, in record order, for guessed_cut_length; a sample's
    `mapped` is how many of its process's mappings had been made when it was taken)."""
    p = ctx.tool.run("perfdata", "--json", "--records", "--unwind", data, timeout=900)
    check(p.returncode == 0, f"jitdump perfdata {data}: exit {p.returncode}: {p.stderr[-2000:]}")
    lines = p.stdout.splitlines()
    summary = json.loads(lines[-1])
    out, maps = [], {}
    for line in lines[:-1]:
        r = json.loads(line)
        if r["type"] == "MMAP2":
            maps.setdefault(r["pid"], []).append((r["start"], r["start"] + r["len"], r["pgoff"], r["filename"]))
        if r["type"] != "SAMPLE":
            continue
        raw = r.get("callchain", [])
        chain = [ip for ip in raw if ip < MARKERS]
        # perf 6.1 takes only these context markers; with any other it discards the whole chain.
        if any(ip >= MARKERS and ip not in CONTEXTS for ip in raw):
            chain = []
        out.append([r["tid"], r["time"], r["event"], r["ip"], chain + r.get("unwound", []), r["pid"],
                    len(maps.get(r["pid"], []))])
    return out, summary, maps


def _places(frames, mappings):
    """A sample's frames as profile_diff.guessed_cut_length takes them: (kind, file, file-relative
    pc), "native" for a frame in a file the process mapped: the latest of `mappings` (those
    mapped when the sample was taken) holding it, since a later mapping replaces an earlier one
    where they overlap (a JVM maps libraries into "//anon" reservations)."""
    out = []
    for pc in frames:
        place = ("unknown", "", pc)
        for start, end, pgoff, path in reversed(mappings):
            if start <= pc < end:
                if path.startswith("/") and not path.startswith("//"):
                    place = ("native", path, pc - start + pgoff)
                break
        out.append(place)
    return out


@pytest.mark.parametrize("shape", ["g", "flat", "dwarf", "z", "two_events", "system_wide", "pipe", "pipe_z"])  # SHAPES
def test_reader_matches_perf(ctx, shape):
    run_dir = fresh(ctx.work / f"perfdata-{shape}")
    run_dir.mkdir(parents=True)
    data = run_dir / "perf.data"
    jit = run_dir / "jit"
    args = SHAPES[shape]
    java = [ctx.jdk.java, f"-agentpath:{ctx.agent}=dir={jit}", "-XX:+PreserveFramePointer", "-cp", ctx.demo_classes(),
            "demo.Demo", "2"]
    cmd = ["perf", "--buildid-dir", ctx.bid, "record", "-q", "-k", "1", "-e", "cpu-clock", "-F", "499", *args]
    if "-o" in args:
        with open(data, "wb") as out:
            subprocess.run(cmd + ["--", *java], stdout=out, stderr=subprocess.DEVNULL, env=ctx.env, check=True,
                           timeout=600)
    else:
        run(cmd + ["-o", data, "--", *java], env=ctx.env, timeout=600)
    theirs = perf_samples(ctx, data, shape == "dwarf")
    ours, summary, maps = reader_samples(ctx, data)
    log(f"{shape}: {data.stat().st_size} bytes, perf script {len(theirs)} samples, reader {len(ours)}; "
        f"{summary['mode']} mode, {len(summary['events'])} events, stats {summary['stats']}")
    figure(f"perfdata.{shape}.samples", len(ours))
    ctx.check(len(theirs) > 300, f"{shape}: enough samples ({len(theirs)})")
    ctx.check(summary["warnings"] == [] and not summary["truncated"], f"{shape}: no warning ({summary['warnings']})")
    if shape in ("z", "pipe_z"):
        ctx.check(summary["stats"]["compressed"] > 0, f"{shape}: read {summary['stats']['compressed']} COMPRESSED records")
    ctx.check(summary["mode"] == ("pipe" if shape.startswith("pipe") else "file"), f"{shape}: {summary['mode']} mode")
    # perf script prints a call chain's addresses relative to their file: the ip is compared
    # where it prints it absolute, on the line of a sample without a call chain.
    same = [a[:3] == b[:3] and (b[3] is None or a[3] == b[3]) for a, b in zip(ours, theirs)]
    ctx.check(len(ours) == len(theirs) and all(same),
              f"{shape}: every sample's thread, time, event (and ip) as perf script's, in its order "
              f"({sum(same)} of {len(theirs)})")
    frames = [(len(a[4]) == len(b[4])) for a, b in zip(ours, theirs)]
    if shape == "dwarf":
        guessed = 0
        for i, (a, b) in enumerate(zip(ours, theirs)):
            cut = None if frames[i] else guessed_cut_length(_places(a[4], maps.get(a[5], [])[:a[6]]))
            if cut is not None and len(a[4]) >= cut and len(b[4]) >= cut:
                frames[i] = True
                guessed += 1
        if guessed:
            log(f"dwarf: {guessed} samples equal up to the caller of a frame without CFI (guessed_cut_length)")
    first = next((i for i, ok in enumerate(frames) if not ok), None)
    ctx.check(all(frames), f"{shape}: every sample with as many frames as perf script's ({sum(frames)} of "
                           f"{len(theirs)}; first difference at sample {first}: "
                           f"{[hex(x) for x in ours[first][4]] if first is not None else ''} against "
                           f"{[hex(x) for x in theirs[first][4]] if first is not None else ''})")
    if shape == "dwarf":
        unwound = sum(1 for s in ours if len(s[4]) > 3)
        ctx.check(unwound >= 50, f"dwarf: {unwound} of {len(ours)} samples unwound through more than 3 frames "
                                 "(the samples in native code; DWARF unwinding stops at the first JIT frame)")
    if shape == "two_events":
        events = {s[2] for s in ours}
        ctx.check(events == {"cpu-clock", "task-clock"}, f"two events: samples of {sorted(events)}")
    ctx.check.verify()
