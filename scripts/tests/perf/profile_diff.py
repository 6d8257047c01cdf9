"""Two `jitdump report --profile-json` profiles of one recording, compared sample by sample: the
one read from real `perf script` text of it (`jitdump report --script`) and the one the perf.data
reader (jitdump/perfdata/) builds without perf.

A sample is its process (pid, command, dump), its thread and its stack; the stacks must be the
same frame for frame:
- a JIT frame (compiled, inlined, interpreted, stub) by its address and its whole inline chain:
  every function's name, kind, file and line;
- a kernel, native or unknown frame by its kind and DSO, and, with `names`, by its function's
  name too (what perf printed against what the symbolizer found); native addresses differ by
  design (perf script prints absolute and file-relative addresses, the reader file-relative ones)
  and are not compared.

Counts are compared per distinct (process, thread, stack)."""
from __future__ import annotations

import collections
import json
import re
from pathlib import Path

JIT_KINDS = {"compiled", "inlined", "interpreted", "stub"}
PERF_MAP = re.compile(r"^/tmp/perf-\d+\.map$")
END_OF_STACK = 2**64 - 1


def _mapping_name(name: str) -> str:
    # perf names a container JVM's anonymous code after its in-namespace pid; the reader after
    # the host pid: both say "anonymous executable memory".
    return "/tmp/perf-PID.map" if PERF_MAP.match(name) else name


class Profile:
    def __init__(self, path: Path):
        data = json.loads(Path(path).read_text())
        self.functions = data["functions"]
        self.mappings = data["mappings"]
        self.locations = data["locations"]
        self.samples = data["samples"]
        self.processes = data["processes"]

    def frame(self, index: int, names: bool) -> tuple:
        loc = self.locations[index]
        lines = [(self.functions[l["function"]], l["line"]) for l in loc["lines"]]
        kinds = {f["kind"] for f, _ in lines}
        if kinds & JIT_KINDS:
            return ("jit", loc["address"], tuple((f["name"], f["kind"], f["file"], line) for f, line in lines))
        mapping = _mapping_name(self.mappings[loc["mapping"]]["file"]) if loc["mapping"] else ""
        inner = lines[0][0]
        return (inner["kind"], mapping, inner["name"] if names else None)

    def stacks(self, names: bool) -> collections.Counter:
        out = collections.Counter()
        for s in self.samples:
            p = self.processes[s["process"]]
            locations = s["locations"]
            # perf 6.1's libunwind ends a DWARF-unwound stack whose last return address is 0 with
            # a frame at 0 - 1; the reader's unwinder (libdwfl) stops before it.
            if len(locations) > 1 and self.locations[locations[-1]]["address"] == END_OF_STACK:
                locations = locations[:-1]
            frames = [self.frame(i, names) for i in locations]
            # DWARF stacks through the vdso: perf unwinds past it only when its build-id cache holds
            # the vdso's image (perf-java keeps ~/.debug untouched), the reader with this process's
            # vdso (the same kernel's). Both are compared down to the vdso frame.
            vdso = next((k for k, f in enumerate(frames) if f[0] == "native" and f[1] == "[vdso]"), None)
            if vdso is not None:
                frames = frames[:vdso + 1]
            key = (p["pid"], p["command"], p["dump"], s["thread"], tuple(frames))
            out[key] += s["count"]
        return out


def _empty(key) -> bool:
    """A sample perf script printed with no frame at all (perf 6.1 discards a call chain with an
    invalid context marker): the report reading its text makes it one unknown frame at address 0."""
    return len(key[4]) == 1 and key[4][0] == ("unknown", "", "[unknown]" if key[4][0][2] else None)


def compare(perf_script: Path, perfdata: Path, names: bool = False) -> tuple[int, int, list[str]]:
    """(samples in the perf script profile, samples with an equal stack in both, descriptions of
    the first differences). A sample perf script printed without frames, which the perf.data
    reader names by its sampled ip instead of an unknown frame at 0, counts as equal when the
    reader's profile has exactly as many samples left over."""
    a = Profile(perf_script).stacks(names)
    b = Profile(perfdata).stacks(names)
    total = sum(a.values())
    equal = sum(min(n, b.get(key, 0)) for key, n in a.items())
    empty = sum(n for key, n in a.items() if _empty(key) and key not in b)
    if empty and sum(b.values()) - equal == empty and total - equal == empty:
        equal += empty
    diffs = []
    for key in sorted(set(a) | set(b), key=repr):
        if a.get(key, 0) != b.get(key, 0) and len(diffs) < 12:
            diffs.append(f"{a.get(key, 0)} via perf script, {b.get(key, 0)} via perf.data: pid {key[0]} "
                         f"thread {key[3]!r}: " + " <- ".join(repr(f) for f in key[4][:8]))
    return total, equal, diffs
