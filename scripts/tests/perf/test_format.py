"""Every rule Debian's perf 6.1 applies when it reads a jitdump (tools/perf/util/jitdump.c),
checked on a real run through perf-java: the dump is read with `jitdump records --json`, the
marker and the clock in perf.data with perf itself."""
import collections
import os
import re

from support.jitdump import CODE_CLOSE, CODE_LOAD, DEBUG_INFO, MAGIC

# A CODE_LOAD is its 16-byte record prefix, 40 bytes of fixed fields (pid, tid, vma, code_addr,
# code_size, code_index), the name and its NUL, then the code bytes.
LOAD_FIXED_BYTES = 16 + 40


def test_format(ctx):
    check = ctx.check
    run_dir = ctx.record_demo("format", seconds="2", freq="999")
    jitdir = run_dir / "jit"
    dumps = sorted(f for f in os.listdir(jitdir) if f.endswith(".dump"))
    check(len(dumps) == 1 and re.fullmatch(r"jit-\d+\.dump", dumps[0]) is not None,
          f"rule: the dump is named jit-<pid>.dump ({dumps})")
    path = jitdir / dumps[0]
    d = ctx.tool.records(path)
    pid = int(re.search(r"\d+", dumps[0]).group(0))
    check(d.header.magic == MAGIC and not d.cross_endian,
          f"rule: magic 0x4A695444 in native (little-endian) order ({d.header.magic:#x}, cross_endian {d.cross_endian})")
    check(d.header.version == 1, f"rule: header version == 1 (perf 6.1 rejects > 1) ({d.header.version})")
    check(d.header.total_size == 40,
          f"rule: header total_size == 40 exactly (6.1 cannot skip extra bytes) ({d.header.total_size})")
    check(d.header.flags == 0, f"rule: flags == 0, no arch timestamps (this VM has no TIME_CONV) ({d.header.flags:#x})")
    check(d.header.elf_mach == 62, f"header elf_mach is x86-64 (62) ({d.header.elf_mach})")
    check(d.pid == pid, f"rule: header pid == the process pid (6.1 compares it with the marker's pid) ({d.pid})")
    check(d.truncated_bytes == 0, "the dump ends at a record boundary after a normal exit")
    ids = collections.Counter(r.id for r in d.records)
    check(set(ids) <= {0, 1, 2, 3, 4},
          f"rule: record ids < 5 (perf warns on others) with the default options ({dict(ids)})")
    check(d.counts[CODE_CLOSE] == 1 and d.records[-1].type == CODE_CLOSE, "a CLOSE record ends the file")
    check(all(r.total_size >= 16 for r in d.records), "rule: every record's total_size >= 16")
    loads = d.loads
    check(len(loads) > 100, f"loads written ({len(loads)})")
    check(all(r.code_size > 0 and r.total_size == LOAD_FIXED_BYTES + len(r.name.encode()) + 1 + r.code_size
              for r in loads),
          "rule: every CODE_LOAD carries code_size code bytes, last in the record (perf reads them from the end)")
    check(len({r.code_index for r in loads}) == len(loads), "rule: code_index unique (a duplicate overwrites a jitted ELF)")
    check(all(r.pid == pid for r in loads), "rule: CODE_LOAD pid is the process pid (it names the jitted ELF)")
    check(all(r.name and "\n" not in r.name for r in loads), "every load has a name")
    # DEBUG_INFO: perf applies it to the *next* CODE_LOAD and ignores its own code_addr.
    bad_order = bad_entries = nd = 0
    recs = d.records
    for i, r in enumerate(recs):
        if r.type != DEBUG_INFO:
            continue
        nd += 1
        nxt = recs[i + 1] if i + 1 < len(recs) else None
        if nxt is None or nxt.type != CODE_LOAD or nxt.load["code_addr"] != r.debug_info["code_addr"]:
            bad_order += 1
            continue
        entries = r.debug_info["entries"]
        addrs = [e["addr"] for e in entries]
        start, size = nxt.load["code_addr"], nxt.load["code_size"]
        # "\xff" as a file name means "the previous entry's file" to perf: never written by us.
        if (not addrs or addrs != sorted(addrs) or addrs[0] < start or addrs[-1] >= start + size
                or any(not e["file"] or e["file"] in ("\xff", "\ufffd") or e["line"] <= 0 for e in entries)):
            bad_entries += 1
    check(nd > 20, f"DEBUG_INFO records written ({nd})")
    check(bad_order == 0, f"rule: each DEBUG_INFO comes right before the CODE_LOAD it describes ({bad_order} misplaced)")
    check(bad_entries == 0, f"rule: DEBUG_INFO entries ascending, inside the code, full file names, no \\xff ({bad_entries} bad)")
    java_names = [r.name for r in loads if r.name.startswith("demo.Demo.")]
    check(any(n.startswith("demo.Demo.divideChain(long, int)") for n in java_names),
          f"Java method names readable in perf (names=java): {java_names[:3]}")
    # One jitted-<pid>-<index>.so per load, written by perf inject into the dump's directory.
    jitted = {f for f in os.listdir(jitdir) if f.startswith("jitted-")}
    check(jitted == {f"jitted-{r.pid}-{r.code_index}.so" for r in loads},
          f"rule: perf inject wrote one jitted-<pid>-<index>.so per CODE_LOAD into the dump directory ({len(jitted)} for {len(loads)})")
    # The marker: an executable mmap of the dump in perf.data, from the JVM's pid.
    p = ctx.perf("script", "-i", run_dir / "perf.data", "--show-mmap-events", "-F", "pid")
    marker = [l for l in p.stdout.splitlines() if "PERF_RECORD_MMAP" in l and dumps[0] in l]
    check(len(marker) == 1 and "r-xp" in marker[0] and f" {pid}/" in marker[0],
          f"rule: one PROT_EXEC marker mmap of the dump, from pid {pid}: {marker[:1]}")
    # The clock: perf.data was recorded with -k 1 (use_clockid, clockid 1).
    h = ctx.perf("report", "-i", run_dir / "perf.data", "--header-only")
    check(re.search(r"use_clockid = 1", h.stdout) is not None and re.search(r"clockid = 1\b", h.stdout) is not None,
          "rule: recorded with -k 1 (use_clockid = 1, clockid = 1 in the event attributes)")
    # Load timestamps in perf's clock domain: inside the recording's time span.
    ts = [r.timestamp for r in loads]
    times = [float(r[1]) * 1e9 for r in ctx.script_rows(run_dir / "perf.data")]
    check(min(times) - 5e9 < min(ts) and max(ts) < max(times) + 1e9,
          "rule: CLOCK_MONOTONIC timestamps, in the same domain as perf's sample times")
    p = ctx.tool.check(path)
    check(p.returncode == 0, f"jitdump check accepts the dump: {p.stdout.strip()[-200:]} {p.stderr.strip()[-200:]}")
