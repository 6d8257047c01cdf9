#!/usr/bin/env python3
"""Regenerates the seed corpus under corpus/ (the result is committed; rerun only to refresh it).

    make_corpus.py [--agent libjitdumpagent.so] [--java-home JDK] [--tool jitdump] [--perf-recordings] [--only SUBDIR]

- options/: option strings in the fuzzer's layout (COMMAND_LINE \\0 ENVIRONMENT \\0 CONFIG_FILE);
- reader/ and tool/:
  * agent dumps, cut down to a few KiB (header + the first whole records): default options,
    inline=on (samply DEBUG_INFO2 records), names=jvm, code=off; with --agent only;
  * node's dump (cpp-tests/fixtures/node-v20-fib.jitdump, cut further);
  * crafted files: empty, short header, bad magic/version/size/flags, byte-swapped (big-endian),
    records with total_size 0, 15, huge, past the end, a LOAD without NUL in the name,
    code_size larger than the record, DEBUG_INFO with nr_entry 2^63 and with no entries,
    inline records with huge counts and with indexes out of range, an unknown record type,
    a MOVE, an UNWINDING_INFO whose sizes do not add up, a truncated final record;
  * tool/ also gets dumps with `perf script` text after the separator (for `jitdump fold`);
- perfdata/ (with --perf-recordings, as root): real perf.data recordings of every shape the
  reader handles and damaged copies of them (perf_recordings below).
- symbols/: the symbols tests' fixture library as built, stripped, its debug file, with
  MiniDebugInfo, truncated (with --symbols-fixtures BUILD/cpp-tests/symbols/symfix-layouts),
  this process's vdso, a kallsyms excerpt and kernel notes.
The crafted files are written byte by byte on purpose (the reader must survive what no producer
writes); existing dumps are cut at record boundaries that `jitdump records --json` reports.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
CORPUS = HERE / "corpus"
SEP = b"\n#PERF-SCRIPT#\n"


def header(pid=4242, ts=1000, flags=0, magic=0x4A695444, version=1, total=40, endian="<"):
    return struct.pack(endian + "IIIIIIQQ", magic, version, total, 62, 0, pid, ts, flags)


def rec(rid, body, ts=2000, endian="<", total=None):
    size = 16 + len(body) if total is None else total
    return struct.pack(endian + "IIQ", rid, size, ts) + body


def load(addr, size, name=b"Foo.bar(int)", index=1, code=None, endian="<", ts=2000):
    code = code if code is not None else bytes([0xC3]) * size
    body = struct.pack(endian + "IIQQQQ", 4242, 4243, addr, addr, size, index) + name + b"\0" + code
    return rec(0, body, ts=ts, endian=endian)


def debug(addr, rows, endian="<"):
    body = struct.pack(endian + "QQ", addr, len(rows))
    for a, line, f in rows:
        body += struct.pack(endian + "Qii", a, line, 0) + f + b"\0"
    return rec(2, body, endian=endian)


def close(endian="<"):
    return rec(3, b"", endian=endian)


def pad4(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


def samply(files, names, functions, calls, ranges, lines, counts=None):
    body_lists = pad4(b"".join(f + b"\0" for f in files))
    names_list = pad4(b"".join(n + b"\0" for n in names))
    c = counts or [len(files), len(body_lists), len(names), len(names_list), len(functions), len(calls),
                   len(ranges), len(lines)]
    body = struct.pack("<8I", *c) + body_lists + names_list
    body += b"".join(struct.pack("<5I", *f) for f in functions)
    body += b"".join(struct.pack("<5I", *x) for x in calls)
    body += b"".join(struct.pack("<2I", *r) for r in ranges)
    body += b"".join(struct.pack("<4I", *l) for l in lines)
    return rec(827346259, body)


def crafted() -> dict:
    h = header()
    good = h + debug(0x1000, [(0x1000, 10, b"Foo.java"), (0x1008, 11, b"Foo.java")]) + load(0x1000, 32) + \
        load(0x2000, 16, b"Bar.baz()", 2) + close()
    inline = samply([b"Foo.java", b"Bar.java"], [b"Foo.outer", b"Bar.inner"],
                    [(0, 0, 10, 0, 0), (1, 1, 20, 0, 0)], [(0, 1, 1, 12, 0)], [(4, 8)],
                    [(0, 0, 10, 0), (4, 1, 21, 0), (12, 0, 13, 0)])
    out = {
        "empty": b"",
        "short-header": h[:20],
        "header-only": h,
        "bad-magic": header(magic=0x12345678) + load(0x1000, 8),
        "bad-version": header(version=2) + load(0x1000, 8),
        "header-size-big": header(total=0xFFFFFFFF) + load(0x1000, 8),
        "header-size-small": header(total=8) + load(0x1000, 8),
        "header-size-64": header(total=64) + b"\0" * 24 + load(0x1000, 8),
        "flags-tsc": header(flags=1) + load(0x1000, 8),
        "flags-unknown": header(flags=0xFFFF) + load(0x1000, 8),
        "good": good,
        "big-endian": header(endian=">", magic=0x4A695444) + load(0x1000, 16, endian=">") +
        load(0x3000, 8, b"x", 2, endian=">") + close(endian=">"),
        "rec-size-0": h + struct.pack("<IIQ", 0, 0, 1) + load(0x1000, 8),
        "rec-size-15": h + struct.pack("<IIQ", 0, 15, 1) + b"\0" * 40,
        "rec-size-huge": h + struct.pack("<IIQ", 0, 0xFFFFFFF0, 1) + b"\0" * 64,
        "load-short": h + rec(0, b"\1\2\3\4"),
        "load-no-nul": h + rec(0, struct.pack("<IIQQQQ", 1, 1, 0x1000, 0x1000, 0, 1) + b"nonul" * 5),
        "load-code-too-big": h + rec(0, struct.pack("<IIQQQQ", 1, 1, 0x1000, 0x1000, 1 << 62, 1) + b"f\0" + b"\xc3" * 8),
        "load-wrap": h + load(0xFFFFFFFFFFFFFFF0, 32) + load(0, 16, b"zero", 2),
        # Found by the reader fuzzer: a load at the very last address becomes an empty span.
        "load-at-max": h + load(0xFFFFFFFFFFFFFFFF, 32, b"\xff\xfe") + load(0xFFFFFFFFFFFFFFF0, 8, b"below", 2),
        "load-dup-index": h + load(0x1000, 8) + load(0x2000, 8, b"b", 1),
        "load-overlap": h + load(0x1000, 64) + load(0x1010, 8, b"inner", 2) + load(0x1000, 64, b"again", 3),
        "debug-huge-count": h + rec(2, struct.pack("<QQ", 0x1000, 1 << 63) + struct.pack("<Qii", 0x1000, 1, 0) + b"F\0") +
        load(0x1000, 8),
        "debug-empty": h + debug(0x1000, []) + load(0x1000, 8),
        "debug-unterminated": h + rec(2, struct.pack("<QQ", 0x1000, 2) + struct.pack("<Qii", 0x1000, 1, 0) + b"F" * 9) +
        load(0x1000, 8),
        "debug-orphan": h + debug(0x5000, [(0x5000, 1, b"X.java")]) + close(),
        "debug-wrong-addr": h + debug(0x9000, [(0x9000, 1, b"X.java")]) + load(0x1000, 8),
        "debug-negative-line": h + debug(0x1000, [(0x1000, -5, b"X.java"), (0x0FFF, 0x7FFFFFFF, b"")]) + load(0x1000, 8),
        "move": h + load(0x1000, 8) + rec(1, struct.pack("<IIQQQQQ", 1, 1, 0x1000, 0x1000, 0x8000, 8, 1)),
        "unwinding": h + rec(4, struct.pack("<QQQ", 16, 8, 16) + b"\0" * 16) + load(0x1000, 8),
        "unwinding-bad": h + rec(4, struct.pack("<QQQ", 1 << 60, 1 << 61, 3) + b"\0" * 8) + load(0x1000, 8),
        "unknown-type": h + rec(77, b"whatever") + load(0x1000, 8),
        "close-early": h + close() + load(0x1000, 8),
        "truncated-tail": good[:-20],
        "truncated-prefix": good + struct.pack("<II", 0, 500),
        "samply-good": h + inline + load(0x1000, 32),
        "samply-orphan": h + inline + close(),
        "samply-huge-counts": h + samply([b"F"], [b"n"], [(0, 0, 1, 0, 0)], [], [], [],
                                         counts=[0xFFFFFFFF, 4, 0x7FFFFFFF, 4, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
                                                 0xFFFFFFFF]) + load(0x1000, 8),
        "samply-bad-index": h + samply([b"F"], [b"n"], [(9, 9, 1, 0, 0)], [(3, 2, 7, 1, 0)], [(0xFFFFFFF0, 0x100)],
                                       [(0x7FFFFFFF, 5, 1, 0)]) + load(0x1000, 16),
        "samply-deep": h + samply([b"F"], [b"a", b"b"], [(0, 0, 1, 0, 0), (1, 0, 2, 0, 0)],
                                  [(d, 1, 1, d + 1, 0) for d in range(40)], [(0, 4)] * 40, []) + load(0x1000, 16),
    }
    return out


def whole_records(tool: str, path: Path) -> list:
    """[(offset, type, total_size)] of the whole records of `path`, from `jitdump records --json`."""
    r = subprocess.run([tool, "records", "--json", str(path)], capture_output=True, text=True, check=True)
    return [(rec["offset"], rec["type"], rec["total_size"]) for rec in json.loads(r.stdout)["records"]]


def trim(data: bytes, records: list, budget: int, keep_close: bool) -> bytes:
    """The header + `records` (whole records of `data`) from the first while under `budget` (a
    DEBUG_INFO, unwinding or inline record stays with the CODE_LOAD after it), then a CLOSE
    record when asked."""
    out = bytearray(data[:40])
    group = bytearray()
    for off, kind, size in records:
        group += data[off:off + size]
        if kind in ("DEBUG_INFO", "UNWINDING_INFO", "SAMPLY_DEBUG_INFO2"):
            continue  # belongs to the next load
        if len(out) + len(group) > budget:
            break
        out += group
        group = bytearray()
    if keep_close:
        out += close()
    return bytes(out)


def agent_dumps(agent: str, java_home: str, tool: str) -> dict:
    java = os.path.join(java_home, "bin", "java") if java_home else "java"
    javac = os.path.join(java_home, "bin", "javac") if java_home else "javac"
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([javac, "-d", tmp, str(HERE.parent / "java" / "Work.java")], check=True)
        for name, opts in (("agent-default", ""), ("agent-inline", ",inline=on"), ("agent-jvm-names", ",names=jvm"),
                           ("agent-nocode", ",code=off")):
            d = Path(tmp) / name
            subprocess.run([java, f"-agentpath:{agent}=dir={d}{opts}", "-cp", tmp, "Work", "3000"], check=True,
                           stdout=subprocess.DEVNULL)
            path = next(d.glob("jit-*.dump"))
            data, records = path.read_bytes(), whole_records(tool, path)
            # Skip the stubs at the start so compiled methods (with lines / inline records) are in.
            first = next((i for i, r in enumerate(records) if r[1] in ("DEBUG_INFO", "SAMPLY_DEBUG_INFO2")),
                         len(records))
            out[name] = trim(data, records[first:], 6000, keep_close=True)
            out[name + "-stubs"] = trim(data, records, 3000, keep_close=False)
    return out


def options_seeds() -> dict:
    return {
        "all-keys": b"dir=/tmp/x/%p,lines=off,code=off,inline=on,names=jvm,budget=8M,overflow=wait,wait_ms=5,"
                    b"stats=stderr,log=debug,perfmap=/srv/maps,mode=0644,backdate=off,flush_ms=3,cache=0,strict,help",
        "three-sources": b"names=simple,config=/etc/j.conf\0budget=1G,log=info\0# comment\nperfmap=on\nmode = 0640\n",
        "bad-values": b"budget=1K,mode=0400,names=cpp,flush_ms=0,wait_ms=99999,cache=-1,lines=maybe,perfmap=rel",
        "unknown": b"colour=red,,=x, ,dir_=1,DIR=/a",
        "non-utf8": b"names=\xc3\x28,\xff\xfe=1\0\xff\0\xfe\xff",
        "config-loop": b"config=/a\0config=/b\0config=/c\nconfig=/d",
        "sizes": b"budget=64K,budget=4G,budget=4096M,budget=18446744073709551615,budget=17179869184K",
        "pid": b"dir=/tmp/%p/%%p/%",
    }


def tool_seeds(reader: dict) -> dict:
    script = (b"java 4242/4243 [001] 1.000: 1 cycles:\n"
              b"\t    1004 Foo.bar(int)+0x4 (/tmp/perf-4242.map)\n"
              b"\t    2008 [unknown] ([unknown])\n"
              b"\t7f0000001000 main+0x10 (/usr/lib/jvm/bin/java)\n\n"
              b"java 4242 1010 Foo.bar\n")
    out = {k: v for k, v in reader.items() if k in ("good", "samply-good", "agent-inline", "agent-default",
                                                     "big-endian", "truncated-tail", "node-v20")}
    out["good+script"] = reader["good"] + SEP + script
    out["samply+script"] = reader["samply-good"] + SEP + script
    return out


def report_seeds(reader: dict) -> dict:
    """The report fuzzer's inputs: DUMP "\\n#PERF-SCRIPT#\\n" SCRIPT. Among
    them the shapes a JVM's hostile owner gives root's report (issue 22): a dump that shrinks
    (cut mid-record), a file that is no jitdump but someone's secret, records larger than any
    budget, names with terminal escapes, thousands of exec+marker pairs of one pid, a marker
    naming a root file."""
    pid = 4242
    good = header(pid) + debug(0x7F0000001000, [(0x7F0000001000, 10, b"svc/Main.java")]) + \
        load(0x7F0000001000, 64, b"svc.Main.loop()", index=1) + close()

    def marker(t, path=f"/home/alice/jit/jit-{pid}.dump"):
        return f"svc {pid}/{pid} {t:.9f}: PERF_RECORD_MMAP2 {pid}/{pid}: [0x7f00aaaa0000(0x1000) @ 0 00:00 0 0]: r-xp {path}\n"

    def sample(t, addr=0x7F0000001010, comm="svc"):
        return f"{comm} {pid}/{pid} {t:.9f}: 1000000 cpu-clock:\n\t{addr:x} [unknown] (//anon)\n\t401000 main (/usr/bin/svc)\n"

    def execs(n):
        return "".join(f"svc {pid}/{pid} {1 + i / 1000:.9f}: PERF_RECORD_COMM exec: svc:{pid}/{pid}\n" + marker(1.0001 + i / 1000)
                       + sample(1.0002 + i / 1000) for i in range(n))

    sep = b"\n#PERF-SCRIPT#\n"
    seeds = {
        "good": good + sep + (marker(1.0) + sample(1.5)).encode(),
        "shrunk-mid-record": good[:len(good) - 30] + sep + (marker(1.0) + sample(1.5)).encode(),
        "secret-not-a-dump": b"root:$6$not-a-jitdump:19000:0:99999:7:::\n" + sep + (marker(1.0) + sample(1.5)).encode(),
        "record-over-budget": header(pid) + rec(0, b"\0" * 64, total=0xFFFFFFF0) + sep + (marker(1.0) + sample(1.5)).encode(),
        "escapes-in-names": header(pid) + load(0x7F0000001000, 64, b"svc.\x1b]0;owned\x07\x1b[2J.run()", index=1) + sep +
        (marker(1.0) + sample(1.5, comm="\x1b[31mred")).encode(),
        "exec-marker-pairs": good + sep + execs(300).encode(),
        "marker-at-root-file": good + sep + (marker(1.0, "/etc/shadow/../jit-4242.dump") + sample(1.5)).encode(),
    }
    for name in ("good", "truncated-tail", "samply-good", "debug-huge-count", "load-at-max"):
        if name in reader:
            seeds[f"reader-{name}"] = reader[name] + sep + (marker(1.0) + sample(1.5)).encode()
    return seeds


def perf_recordings(work: Path) -> dict:
    """perfdata/: real recordings of a shell loop by this machine's perf (root), each under the
    fuzzer's 128 KiB: -g, no call graph, --call-graph dwarf (1 KiB stack copies), -z, pipe mode
    (plain and -z), two events, system-wide; then damaged copies of them: cut in the middle, a
    record of size 0, bytes flipped inside the zstd stream, the header's data size 0 (perf record
    killed), the feature table pointing outside the file."""
    loop = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"
    shapes = {
        "g": ["-g"], "flat": [], "dwarf": ["--call-graph", "dwarf,1024"], "z": ["-g", "-z"],
        "two-events": ["-g", "-e", "task-clock"], "pipe": ["-g", "-o", "-"], "pipe-z": ["-g", "-z", "-o", "-"],
    }
    out = {}
    for name, args in shapes.items():
        path = work / f"{name}.data"
        cmd = ["perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "-F", "999"] + args
        if "-o" not in args:
            cmd += ["-o", str(path)]
        cmd += ["--", "sh", "-c", loop]
        with open(path, "wb") if "-o" in args else open(os.devnull, "wb") as stdout:
            subprocess.run(cmd, check=True, stdout=stdout, stderr=subprocess.DEVNULL)
        out[name] = path.read_bytes()
    path = work / "system-wide.data"
    subprocess.run(["perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "-F", "49", "-a", "-g", "-o", str(path), "--",
                    "sleep", "0.2"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out["system-wide"] = path.read_bytes()
    for name in list(out):
        if len(out[name]) > 120000:
            out[name] = out[name][:120000]  # what the fuzzer can take: the damage is the tail
    g = out["g"]
    data_offset, data_size = struct.unpack_from("<QQ", g, 40)
    first = data_offset + struct.unpack_from("<H", g, data_offset + 6)[0]
    out["g-cut-in-half"] = g[:len(g) // 2]
    out["g-record-size-0"] = g[:first + 6] + b"\0\0" + g[first + 8:]
    out["g-data-size-0"] = g[:48] + struct.pack("<Q", 0) + g[56:]
    out["g-features-outside"] = g[:48] + struct.pack("<Q", data_size + (1 << 40)) + g[56:]
    z = out["z"]
    z_offset, z_size = struct.unpack_from("<QQ", z, 40)
    mid = z_offset + z_size // 2
    out["z-flipped"] = z[:mid] + bytes(b ^ 0x5A for b in z[mid:mid + 32]) + z[mid + 32:]
    return out


def own_vdso() -> bytes:
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith("[vdso]"):
                start, end = (int(x, 16) for x in line.split()[0].split("-"))
                with open("/proc/self/mem", "rb") as mem:
                    mem.seek(start)
                    return mem.read(end - start)
    return b""


def symbols_seeds(layouts: str) -> dict:
    out = {
        "kallsyms": b"ffffffff81000000 T _text\nffffffff81000100 t local\nffffffff81000200 W weak\n"
                    b"ffffffffc0001000 t modfn\t[ext4]\n0000000000000000 A percpu\n",
        # The kernel image alone: the symbols fuzzer reads it as perf's kallsyms copy too.
        "kallsyms-image": b"ffffffff81000000 T _text\nffffffff81000100 t local\nffffffff81000200 W weak\n"
                          b"ffffffff81000300 T _etext\n",
        # Found by the symbols fuzzer: a symbol in the last page, whose end wraps below its start.
        "kallsyms-top-page": b"fffffffffffff810 t l",
        "notes": struct.pack("<III", 4, 20, 3) + b"GNU\0" + bytes(range(20)),
    }
    vdso = own_vdso()
    if vdso:
        out["vdso"] = vdso
    if layouts:
        root = Path(layouts)
        for name, rel in (("plain.so", "plain/usr/lib/libsymfix.so"), ("stripped.so", "stripped/usr/lib/libsymfix.so"),
                          ("minidebug.so", "minidebug/usr/lib/libsymfix.so"),
                          ("truncated.so", "truncated/usr/lib/libsymfix.so")):
            out[name] = (root / rel).read_bytes()
        debug = next((root / "stripped/usr/lib/debug/.build-id").rglob("*.debug"))
        out["debug-file"] = debug.read_bytes()
    return {k: v for k, v in out.items() if len(v) <= 131072}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--agent", default="")
    p.add_argument("--java-home", default="")
    p.add_argument("--tool", default=str(ROOT / "build" / "jitdump" / "tool" / "jitdump"),
                   help="the jitdump tool that finds the record boundaries (default: build/ of this checkout)")
    p.add_argument("--perf-recordings", action="store_true",
                   help="also record perfdata/'s seeds with this machine's perf (root); without it perfdata/ is kept")
    p.add_argument("--symbols-fixtures", default=str(ROOT / "build" / "cpp-tests" / "symbols" / "symfix-layouts"),
                   help="the symbols tests' fixture layouts (default: build/ of this checkout)")
    p.add_argument("--only", default="", help="regenerate this corpus only (options, reader, tool, report, perfdata, symbols)")
    a = p.parse_args()
    reader = crafted()
    node = ROOT / "cpp-tests" / "fixtures" / "node-v20-fib.jitdump"
    if node.is_file():
        data = node.read_bytes()
        reader["node-v20"] = trim(data, whole_records(a.tool, node), 12000, keep_close=False)
        reader["node-v20-tail"] = data[:40] + data[-6000:]  # starts mid-record: garbage then records
    if a.agent:
        reader.update(agent_dumps(a.agent, a.java_home, a.tool))
    layouts = a.symbols_fixtures if Path(a.symbols_fixtures).is_dir() else ""
    targets = [("options", options_seeds()), ("reader", reader), ("tool", tool_seeds(reader)),
                       ("report", report_seeds(reader)), ("symbols", symbols_seeds(layouts))]
    if a.perf_recordings:
        with tempfile.TemporaryDirectory() as tmp:
            targets.append(("perfdata", perf_recordings(Path(tmp))))
    for sub, seeds in targets:
        if a.only and sub != a.only:
            continue
        d = CORPUS / sub
        d.mkdir(parents=True, exist_ok=True)
        for old in d.iterdir():
            old.unlink()
        for name, data in seeds.items():
            (d / name).write_bytes(data)
        total = sum(len(v) for v in seeds.values())
        print(f"{d.relative_to(ROOT)}: {len(seeds)} seeds, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
