"""The differential check of jitdump/symbols against perf: the same recording's native and
kernel addresses named by `perf script` and by the Symbolizer (through cpp-tests/symbols/
symbols_probe), and native inline chains against LLVM's llvm-symbolizer.

perf 6.1's text gives, per call chain frame, the address as perf shows it (the file offset for
user-space files: perf's map_ip; the address itself for the kernel), the symbol and the DSO;
`--show-mmap-events` gives each mapping. The absolute address the Symbolizer takes is rebuilt
from the mapping: start + offset - pgoff."""
from __future__ import annotations

import collections
import json
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from support.checks import check

MMAP = re.compile(r"PERF_RECORD_MMAP2? (-?\d+)/(-?\d+): \[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (?:0x)?([0-9a-f]+)[^\]]*\]: "
                  r"(\S+) (.*)$")
SAMPLE = re.compile(r"^\S.*?\s+(-?\d+)/(-?\d+)\s")
FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")


@dataclass
class Mapping:
    start: int
    end: int
    pgoff: int
    path: str


@dataclass
class Comparison:
    """Per DSO: distinct addresses compared and those named differently."""
    compared: collections.Counter = field(default_factory=collections.Counter)
    perf_named: collections.Counter = field(default_factory=collections.Counter)
    differ: dict = field(default_factory=lambda: collections.defaultdict(list))
    answers: dict = field(default_factory=dict)   # key -> the probe's answer
    requests: dict = field(default_factory=dict)  # key -> (dso, absolute address, mapping)
    files: list = field(default_factory=list)     # the probe's FileReports
    probe_seconds: float = 0.0

    def file(self, recorded_path: str) -> dict:
        for f in self.files:
            if f["recorded_path"] == recorded_path:
                return f
        return {}

    def summary(self) -> str:
        lines = [f"{dso}: {n} compared, perf named {self.perf_named[dso]}, {len(self.differ[dso])} differ"
                 for dso, n in sorted(self.compared.items())]
        for dso, rows in self.differ.items():
            lines += [f"  {dso} {address:#x}: perf {perf!r}, ours {ours!r} ({outcome})"
                      for address, perf, ours, outcome in rows[:10]]
        return "\n".join(lines)


def perf_script(data: Path, env: dict) -> str:
    p = subprocess.run(["perf", "script", "-i", str(data), "--show-mmap-events", "-F", "comm,pid,tid,time,ip,sym,dso"],
                       capture_output=True, text=True, env=env, errors="replace")
    check(p.returncode == 0, f"perf script failed on {data}", p.stderr[-2000:])
    return p.stdout


def build_ids(data: Path, env: dict) -> dict:
    p = subprocess.run(["perf", "buildid-list", "-i", str(data)], capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"perf buildid-list failed on {data}", p.stderr[-2000:])
    ids = {}
    for line in p.stdout.splitlines():
        bid, _, path = line.partition(" ")
        ids[path] = bid
    return ids


def requests_of(script: str, ids: dict):
    """The probe's requests for every distinct (pid, dso, address) of the script's call chains:
    {key: (request line, perf's symbol, dso, absolute address, Mapping)}, and the kernel line."""
    maps = collections.defaultdict(list)
    text = 0
    pid = None
    requests = {}
    for line in script.splitlines():
        m = MMAP.search(line)
        if m:
            start, size, pgoff, path = int(m.group(3), 16), int(m.group(4), 16), int(m.group(5), 16), m.group(7)
            if path.startswith("[kernel.kallsyms]"):
                text = pgoff
            else:
                maps[int(m.group(1))].append(Mapping(start, start + size, pgoff, path))
            continue
        f = FRAME.match(line)
        if not f:
            h = SAMPLE.match(line)
            if h:
                pid = int(h.group(1))
            continue
        shown, sym, dso = int(f.group(1), 16), f.group(2), f.group(3)
        if dso == "[kernel.kallsyms]":
            requests[("kernel", shown)] = (f"kaddr\t{shown:x}", sym, dso, shown, None)
            continue
        # Files and the vdso; not JIT code (perf maps, anonymous memory) nor unknown DSOs.
        if not (dso.startswith("/") or dso == "[vdso]") or dso.startswith("/tmp/perf-"):
            continue
        key = (pid, dso, shown)
        if key in requests:
            continue
        held = [mp for mp in maps[pid] if mp.path == dso and mp.pgoff <= shown < mp.pgoff + (mp.end - mp.start)]
        if not held:
            continue
        mp = held[-1]
        address = mp.start + shown - mp.pgoff
        requests[key] = (f"user\t{pid}\t{mp.start:x}\t{mp.end:x}\t{mp.pgoff:x}\t{ids.get(dso, '-')}\t{address:x}\t{dso}",
                         sym, dso, address, mp)
    kernel = f"kernel\t{ids.get('[kernel.kallsyms]', '-')}\t{text:x}\t-"
    return requests, kernel


def probe(probe_path: Path, lines: list, args=(), env=None) -> tuple[list, list, float]:
    t0 = time.monotonic()
    p = subprocess.run([str(probe_path), *map(str, args)], input="".join(l + "\n" for l in lines), capture_output=True,
                       text=True, env=env)
    seconds = time.monotonic() - t0
    check(p.returncode == 0, f"symbols_probe failed (rc={p.returncode})", p.stderr[-2000:])
    out = [json.loads(l) for l in p.stdout.splitlines()]
    return out[:-1], out[-1]["files"], seconds


def compare(probe_path: Path, data: Path, env: dict, args=(), script: str | None = None) -> Comparison:
    """Names every distinct native and kernel address of the recording both ways."""
    script = script if script is not None else perf_script(data, env)
    requests, kernel = requests_of(script, build_ids(data, env))
    keys = list(requests)
    answers, files, seconds = probe(probe_path, [kernel] + [requests[k][0] for k in keys], args, env)
    result = Comparison(files=files, probe_seconds=seconds)
    for key, answer in zip(keys, answers):
        _, perf_sym, dso, address, mapping = requests[key]
        ours = answer["frames"][-1]["function"] or "[unknown]"
        result.compared[dso] += 1
        result.perf_named[dso] += perf_sym != "[unknown]"
        result.answers[key] = answer
        result.requests[key] = (dso, address, mapping)
        if ours != perf_sym:
            result.differ[dso].append((address, perf_sym, ours, answer["outcome"]))
    return result


def vaddr_of_offset(elf: Path, offset: int) -> int | None:
    """The ELF address of a file offset, from readelf's program headers (PT_LOAD)."""
    out = subprocess.run(["readelf", "-lW", str(elf)], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 6 and parts[0] == "LOAD":
            off, vaddr, filesz = int(parts[1], 16), int(parts[2], 16), int(parts[4], 16)
            if off <= offset < off + filesz:
                return offset - off + vaddr
    return None


def llvm_chains(debug_file: str, vaddrs: list) -> list:
    """LLVM's llvm-symbolizer --inlines: per address, the (file name, line) of each inline level,
    innermost first. (binutils 2.40's addr2line misreads some DWARF 5 line tables: it names
    strtoul.c where glibc's line table says strtol.c.)"""
    p = subprocess.run(["llvm-symbolizer", f"--obj={debug_file}", "--inlines"],
                       input="".join(f"0x{a:x}\n" for a in vaddrs), capture_output=True, text=True, check=True)
    chains = []
    for block in p.stdout.strip("\n").split("\n\n"):
        lines = block.splitlines()
        chain = []
        for place in lines[1::2]:
            parts = place.rsplit(":", 2)
            name, number = (parts[0], parts[1]) if len(parts) == 3 else (place, "0")
            # Where no DWARF line row holds the address (glibc's __restore_rt), LLVM names the file
            # from the ELF symbol table's STT_FILE entry, a bare name where DWARF's carry directories.
            # That is not DWARF, which this compares, and the symbolizer does not read it: no file.
            if len(lines) == 2 and "/" not in name and number in ("", "0"):
                name = "??"
            chain.append((Path(name).name if name != "??" else "", int(number) if number.isdigit() else 0))
        chains.append(chain)
    return chains


def our_chain(answer: dict) -> list:
    return [(Path(f["file"]).name, f["line"]) for f in answer["frames"]]
