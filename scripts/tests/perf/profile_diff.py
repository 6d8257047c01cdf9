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
import subprocess
from pathlib import Path

from support.checks import log

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
        # Every compared stack as it was read, frame by frame with addresses (what the key leaves
        # out), for printing differences.
        self.shown = {}
        # Every compared stack's frames as (kind, file, file-relative pc), for _guessed_cut.
        self.places = {}

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
            self.shown.setdefault(key, [self.show(i) for i in s["locations"]])
            self.places.setdefault(key, [self.place(i) for i in locations[:len(frames)]])
        return out

    def place(self, index: int) -> tuple:
        loc = self.locations[index]
        kind = self.functions[loc["lines"][0]["function"]]["kind"] if loc["lines"] else ""
        if not loc["mapping"]:
            return kind, "", loc["address"]
        m = self.mappings[loc["mapping"]]
        # perf script prints some addresses absolute, the reader file-relative ones.
        rel = loc["address"] - m["start"] + m["offset"] if m["start"] <= loc["address"] < m["limit"] else loc["address"]
        return kind, m["file"], rel

    def show(self, index: int) -> str:
        """One frame as text: address, kind, the function (the inline chain of a JIT frame,
        innermost first) and its mapping."""
        loc = self.locations[index]
        names = [f"{self.functions[l['function']]['name']}"
                 + (f":{l['line']}" if l["line"] else "") for l in loc["lines"]]
        kind = self.functions[loc["lines"][0]["function"]]["kind"] if loc["lines"] else "?"
        mapping = self.mappings[loc["mapping"]]["file"] if loc["mapping"] else ""
        return f"{loc['address']:#x} {kind} {' < '.join(names)} ({mapping})"


_FDE = re.compile(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)")
_cfi_ranges = {}


def _has_cfi(path: str, pc: int) -> bool:
    """Whether `path`'s .eh_frame or .debug_frame describes `pc` (readelf's FDE ranges), True when
    the file cannot be read (nothing to conclude)."""
    if path not in _cfi_ranges:
        p = subprocess.run(["readelf", "--debug-dump=frames", path], capture_output=True, text=True, errors="replace")
        _cfi_ranges[path] = [(int(a, 16), int(b, 16)) for a, b in _FDE.findall(p.stdout)] if p.returncode == 0 else None
    ranges = _cfi_ranges[path]
    return ranges is None or any(a <= pc < b for a, b in ranges)


def _guessed_cut(profile: Profile, key) -> tuple:
    """`key` cut after the caller of its first native frame whose pc no CFI describes (a stack
    unwound from a --call-graph dwarf copy). There both unwinders guess through the frame pointer
    and agree on the caller's pc, [rbp + 8], but not on its stack pointer: libdwfl (the reader)
    takes rbp + 16, consistent with the frame whose saved rbp and return address it read; perf
    6.1's libunwind keeps the guessed frame's CFA at rsp + 16 (x86_64 Gstep.c), so its frames
    beyond are read from the wrong stack slots (met on a JVM's exit: _fini of libjvm.so, crti.o's
    code without CFI, called from _dl_fini, whose frame pointer rbp is; perf went on to an //anon
    address). Frames beyond that point are not comparable; `key` unchanged if there is none."""
    frames = key[4]
    kept = guessed_cut_length(profile.places[key][:len(frames)])
    return key if kept is None else key[:4] + (frames[:kept],)


def guessed_cut_length(places) -> int | None:
    """How many of a stack's frames, given as (kind, file, file-relative pc) innermost first, both
    unwinders agree on: up to the caller of the first native frame whose pc no CFI describes
    (_guessed_cut says why); None when there is no such frame."""
    for i, (kind, path, pc) in enumerate(places[:-1]):
        if kind == "native" and path.startswith("/") and not _has_cfi(path, pc):
            return i + 2
    return None


def _empty(key) -> bool:
    """A sample perf script printed with no frame at all (perf 6.1 discards a call chain with an
    invalid context marker): the report reading its text makes it one unknown frame at address 0."""
    return len(key[4]) == 1 and key[4][0] == ("unknown", "", "[unknown]" if key[4][0][2] else None)


def compare(perf_script: Path, perfdata: Path, names: bool = False) -> tuple[int, int, list[str]]:
    """(samples in the perf script profile, samples with an equal stack in both, descriptions of
    the first differences). A sample perf script printed without frames, which the perf.data
    reader names by its sampled ip instead of an unknown frame at 0, counts as equal when the
    reader's profile has exactly as many samples left over."""
    pa, pb = Profile(perf_script), Profile(perfdata)
    a = pa.stacks(names)
    b = pb.stacks(names)
    total = sum(a.values())
    equal = sum(min(n, b.get(key, 0)) for key, n in a.items())
    empty = sum(n for key, n in a.items() if _empty(key) and key not in b)
    if empty and sum(b.values()) - equal == empty and total - equal == empty:
        equal += empty
    # Stacks that differ only beyond a frame both unwinders had to guess (no CFI): equal up to it.
    extra_a = {k: n - b.get(k, 0) for k, n in a.items() if n > b.get(k, 0) and not _empty(k)}
    extra_b = {k: n - a.get(k, 0) for k, n in b.items() if n > a.get(k, 0)}
    if extra_a and extra_b and len(extra_a) + len(extra_b) < 1000:
        cut_a, cut_b = collections.Counter(), collections.Counter()
        for k, n in extra_a.items():
            cut_a[_guessed_cut(pa, k)] += n
        for k, n in extra_b.items():
            cut_b[_guessed_cut(pb, k)] += n
        guessed = sum(min(n, cut_b.get(k, 0)) for k, n in cut_a.items() if k not in extra_a)
        if guessed:
            equal += guessed
            log(f"{guessed} samples equal up to the caller of a frame without CFI, where perf's libunwind and the "
                "reader's libdwfl guess differently (profile_diff._guessed_cut)")
            for k, n in cut_a.items():
                matched = min(n, cut_b.get(k, 0))
                if matched and k not in extra_a:
                    for old in [x for x in extra_a if _guessed_cut(pa, x) == k]:
                        take = min(matched, extra_a[old])
                        a[old] -= take
                        matched -= take
                    matched = min(n, cut_b.get(k, 0))
                    for old in [x for x in extra_b if _guessed_cut(pb, x) == k]:
                        take = min(matched, extra_b[old])
                        b[old] -= take
                        matched -= take
    return total, equal, _differences(pa, pb, a, b)


def _differences(pa: Profile, pb: Profile, a: collections.Counter, b: collections.Counter, limit: int = 6) -> list:
    """Each stack one side has more of, beside the other side's closest stack of the same thread
    (the most frames in common from the leaf), frame by frame with addresses: the compared parts
    first (marked where they differ), then what each side read beyond them."""
    extra_a = {k: n - b.get(k, 0) for k, n in a.items() if n > b.get(k, 0)}
    extra_b = {k: n - a.get(k, 0) for k, n in b.items() if n > a.get(k, 0)}

    def common(x, y):
        n = 0
        while n < min(len(x[4]), len(y[4])) and x[4][n] == y[4][n]:
            n += 1
        return n

    out = []
    for key in sorted(extra_a, key=repr)[:limit]:
        same_thread = [k for k in extra_b if k[:4] == key[:4]]
        # Closest: the most compared frames in common from the leaf, then the most frames equal as
        # printed (addresses and names, which the comparison may leave out), then the lengths.
        other = max(same_thread, key=lambda k: (common(key, k), sum(x == y for x, y in zip(pa.shown[key], pb.shown[k])),
                                                -abs(len(k[4]) - len(key[4]))), default=None)
        at = common(key, other) if other else 0
        lines = [f"{extra_a[key]} more via perf script than via perf.data: pid {key[0]} thread {key[3]!r}, "
                 + (f"first difference at frame {at} (perf script: {len(key[4])} compared frames, perf.data's "
                    f"closest stack of the thread: {len(other[4])})" if other else "perf.data has no other stack "
                    "of this thread left over")]
        left = pa.shown[key]
        right = pb.shown[other] if other else []
        for i in range(max(len(left), len(right))):
            mark = "  " if other and i < at else "!!"
            lines.append(f"  {mark} #{i:<3} perf script: {left[i] if i < len(left) else '-'}")
            lines.append(f"         perf.data:   {right[i] if i < len(right) else '-'}")
        out.append("\n".join(lines))
    for key in sorted(extra_b, key=repr):
        if len(out) >= 2 * limit:
            break
        if not any(k[:4] == key[:4] for k in extra_a):
            out.append(f"{extra_b[key]} more via perf.data than via perf script: pid {key[0]} thread {key[3]!r}: "
                       + " <- ".join(pb.shown[key]))
    return out
