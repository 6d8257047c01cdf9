#!/usr/bin/env python3
"""CLI tests for the `jitdump` tool.

usage: cli_test.py SCENARIO JITDUMP_TOOL CLI_FIXTURE_GEN FIXTURE_DIR

Each scenario runs the tool on crafted files (written by cli_fixture_gen into a temporary
directory, with manifest.json naming the offsets `check` must report) or on the committed node
fixture, and checks exit codes (0 ok, 1 invalid, 2 usage), exact offsets, JSON and output.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []


def run(args, stdin=None):
    proc = subprocess.run([TOOL] + args, input=stdin, capture_output=True, text=True, errors="replace")
    return proc.returncode, proc.stdout, proc.stderr


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def expect_rc(args, rc, stdin=None):
    got, out, err = run(args, stdin)
    expect(got == rc, f"{args}: exit {got}, expected {rc}\nstdout: {out[:2000]}\nstderr: {err[:2000]}")
    return out, err


def json_of(args, rc=0):
    out, _ = expect_rc(args, rc)
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        expect(False, f"{args}: output is not JSON ({e}): {out[:500]}")
        return None


def node_fixture():
    return os.path.join(FIXTURES, "node-v20-fib.jitdump")


def scenario_help(d):
    out, _ = expect_rc(["--help"], 0)
    for command in ["info", "list", "lines", "addr2line", "check", "perfmap", "fold", "records", "methods"]:
        expect(command in out, f"main help names {command}")
        sub, _ = expect_rc([command, "--help"], 0)
        expect(sub.startswith("usage: jitdump " + command), f"{command} --help: {sub[:80]}")


def scenario_usage(d):
    f = os.path.join(d, "inline.dump")
    expect_rc([], 2)
    expect_rc(["frobnicate", f], 2)
    expect_rc(["info"], 2)
    expect_rc(["info", f, f], 2)
    expect_rc(["list", "--bogus", f], 2)
    expect_rc(["check", os.path.join(d, "does-not-exist.dump")], 2)
    expect_rc(["info", d], 2)  # a directory
    expect_rc(["addr2line", f], 2)
    expect_rc(["addr2line", f, "0xZZ"], 2)
    expect_rc(["perfmap", "--json", f], 2)
    expect_rc(["fold"], 2)
    _, err = expect_rc(["list", "--bogus", f], 2)
    expect("unknown option --bogus" in err, "usage error names the option: " + err)


def scenario_node(d):
    f = node_fixture()
    out, _ = expect_rc(["check", f], 0)
    for offset in [26440, 29636, 29984, 30941, 31901]:
        expect(re.search(rf"^offset {offset} \(0x{offset:x}\): warning: .*corrupted file name", out, re.M),
               f"node corrupted name at {offset} reported as a warning")
    expect(re.search(r"^offset 16 \(0x10\): warning: pad1 is 0xdeadbeef", out, re.M), "pad1 warning")
    expect(re.search(r"^offset 24 \(0x18\): warning: header timestamp .*another clock", out, re.M), "clock warning")
    expect("PC+0x40" in out, "PC+0x40 warning")
    expect(": error:" not in out, "no errors on the node file")
    expect(out.rstrip().endswith("valid, 90 records, 0 errors, 8 warnings"), "summary line: " + out[-200:])
    info, _ = expect_rc(["info", f], 0)
    expect("CODE_LOAD          35" in info and "UNWINDING_INFO     35" in info and "DEBUG_INFO         20" in info,
           "node record counts: " + info)
    expect("pad1 0xdeadbeef" in info, "info shows pad1")
    lst, _ = expect_rc(["list", f], 0)
    expect(len(lst.splitlines()) == 35, "35 loads listed")
    expect(re.search(r"^\d+ 0x[0-9a-f]{16} \d+ JS:\^resolve node:path:1217:10  \[node:path:1217-\d+\]$", lst, re.M),
           "list shows a source range for JS:^resolve")
    a2l, _ = expect_rc(["addr2line", f, "0x7f5ffef445c0"], 0)
    expect("JS:^resolve" in a2l, "addr2line on node: " + a2l)


def scenario_corrupt(d):
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    expect(len(manifest) >= 10, "manifest lists the corrupt files")
    for item in manifest:
        path = os.path.join(d, item["file"])
        out, _ = expect_rc(["check", path], 1)
        pattern = rf"^offset {item['offset']} \(0x{item['offset']:x}\): error: .*{re.escape(item['text'])}"
        expect(re.search(pattern, out, re.M), f"{item['file']}: expected error at {item['offset']} "
                                              f"containing {item['text']!r}, got:\n{out}")
        report = json_of(["check", "--json", path], 1)
        if report is not None:
            expect(report["valid"] is False and report["errors"] >= 1, f"{item['file']} JSON invalid")
            expect(any(p["offset"] == item["offset"] and p["severity"] == "error" for p in report["problems"]),
                   f"{item['file']} JSON names offset {item['offset']}")
    # The files that cannot be read at all fail the other commands with 1 too.
    expect_rc(["info", os.path.join(d, "bad-magic.dump")], 1)
    expect_rc(["list", os.path.join(d, "short.dump")], 1)


def scenario_truncated(d):
    f = os.path.join(d, "truncated.dump")
    out, _ = expect_rc(["check", f], 0)
    expect(re.search(r"^offset 490 \(0x1ea\): warning: truncated final CODE_LOAD record", out, re.M), out)
    info, _ = expect_rc(["info", f], 0)
    expect("truncated tail: at offset 490, 30 bytes present of 188" in info, info)
    j = json_of(["info", "--json", f])
    if j:
        expect(j["truncated"] == {"offset": 490, "bytes": 30, "total_size": 188}, str(j["truncated"]))


def scenario_inline(d):
    for name in ["inline.dump", "inline-be.dump"]:
        f = os.path.join(d, name)
        expect_rc(["check", f], 0)
        out, _ = expect_rc(["addr2line", f, "0x10048", "100a4", "0x10090", "0x20010"], 0)
        expected = (
            "0x10048: Outer.run (code_index 1, 0x10000+0x48, load at offset 470)\n"
            "  #0 Leaf.get Leaf.java:3\n"
            "  #1 Mid.step Mid.java:7  (caller)\n"
            "  #2 Outer.run Outer.java:30  (caller)\n"
            "0x100a4: Outer.run (code_index 1, 0x10000+0xa4, load at offset 470)\n"
            "  #0 Mid.step Mid.java:9\n"
            "  #1 Outer.run Outer.java:30  (caller)\n"
            "0x10090: Outer.run (code_index 1, 0x10000+0x90, load at offset 470)\n"
            "  #0 Outer.run Outer.java:31\n"
            "0x20010: Plain.fn (code_index 2, 0x20000+0x10, load at offset 792)\n"
            "  #0 Plain.fn ??:0\n")
        expect(out == expected, f"{name} addr2line:\n{out}")
        out, _ = expect_rc(["addr2line", f, "0x10"], 1)
        expect("0x10: not in any CODE_LOAD" in out, out)
        out, _ = expect_rc(["list", f], 0)
        expect(out == "1 0x0000000000010000 256 Outer.run  [Outer.java:24-33] inlines=2\n"
                      "2 0x0000000000020000 64 Plain.fn\n", f"{name} list:\n{out}")
        out, _ = expect_rc(["info", f], 0)
        expect("inline records: 1, functions 3, inline calls 2, max depth 2" in out, out)
        expect(("cross-endian" in out) == (name == "inline-be.dump"), "byte order line")
        out, _ = expect_rc(["lines", f], 0)
        expect("  0x0000000000010040 +0x40 Leaf.java:3  (inline)" in out and
               "  0x0000000000010080 +0x80 Outer.java:31\n" in out, out)


def scenario_json(d):
    for f in [node_fixture(), os.path.join(d, "inline.dump"), os.path.join(d, "inline-be.dump")]:
        info = json_of(["info", "--json", f])
        lst = json_of(["list", "--json", f])
        lines = json_of(["lines", "--json", f])
        check = json_of(["check", "--json", f])
        if None in (info, lst, lines, check):
            continue
        expect(check["valid"] is True and check["errors"] == 0, f"{f}: check JSON valid")
        expect(info["code_loads"] == len(lst), f"{f}: info/list agree")
        expect(all({"index", "addr", "size", "name", "source", "inlines"} <= set(x) for x in lst), "list fields")
    inline = json_of(["list", "--json", os.path.join(d, "inline.dump")])
    expect(inline and inline[0]["name"] == "Outer.run" and inline[0]["inlines"] == 2 and
           inline[0]["source"] == "Outer.java:24-33" and inline[0]["addr"] == 0x10000, str(inline))
    lines = json_of(["lines", "--json", os.path.join(d, "inline.dump")])
    expect(lines and len(lines[0]["rows"]) == 9 and lines[0]["rows"][4]["file"] == "Leaf.java" and
           lines[0]["rows"][4]["source"] == "inline", str(lines))
    info = json_of(["info", "--json", os.path.join(d, "inline.dump")])
    expect(info and info["inline"] == {"records": 1, "functions": 3, "inline_calls": 2, "max_depth": 2}, str(info))
    expect(info and info["closed"] is True and info["unknown_records"] == 0, str(info))
    node_info = json_of(["info", "--json", node_fixture()])
    expect(node_info and node_info["closed"] is False and node_info["header"]["pad1"] == 0xDEADBEEF, str(node_info))
    odd = json_of(["list", "--json", os.path.join(d, "oddname.dump")])
    expect(odd is not None and odd[0]["name"] == 'q"b\\s\x01\t\xff\xc3(\u20ac ok', "JSON escaping: " + repr(odd))
    node = json_of(["check", "--json", node_fixture()])
    expect(node and node["warnings"] == 8 and node["errors"] == 0, str(node)[:300])
    # node's corrupted names survive JSON encoding (non-UTF-8 bytes escaped)
    node_lines = json_of(["lines", "--json", node_fixture()])
    expect(node_lines is not None and len(node_lines) == 20, "20 loads with debug info in node lines JSON")


def latin1_fallback(raw):
    """What the tool's JSON makes of bytes: each well-formed UTF-8 sequence stays, every other
    byte becomes the code point of the same value."""
    out, i = [], 0
    while i < len(raw):
        for length in (1, 2, 3, 4):
            try:
                out.append(raw[i:i + length].decode("utf-8"))
                i += length
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append(chr(raw[i]))
            i += 1
    return "".join(out)


def strict_json(args, rc=0):
    """Runs the tool and parses stdout as JSON decoded strictly as UTF-8: output that is not
    valid UTF-8 fails here, where `json_of` would replace the bad bytes."""
    proc = subprocess.run([TOOL] + args, capture_output=True)
    expect(proc.returncode == rc, f"{args}: exit {proc.returncode}, expected {rc}: {proc.stderr[:500]!r}")
    try:
        return json.loads(proc.stdout.decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        expect(False, f"{args}: output is not valid UTF-8 JSON ({e}): {proc.stdout[:300]!r}")
        return None


def scenario_json_utf8(d):
    """Every --json output is valid UTF-8 JSON, whatever bytes the dump or the path hold; a byte
    that is not UTF-8 becomes the code point of the same value (0xff -> U+00FF)."""
    src = os.path.join(d, "oddbytes.dump")
    odd_dir = os.path.join(os.fsencode(d), b"dir-\xff\xc3(")
    os.mkdir(odd_dir)
    path = os.path.join(odd_dir, b"odd-\xfe.dump")
    with open(src, "rb") as f, open(path, "wb") as out:
        out.write(f.read())
    path_text = latin1_fallback(path)
    arg = os.fsdecode(path)  # subprocess gives the original bytes back to the tool
    file_name = latin1_fallback(b"S\xed\xa0\x80\xe0\x80\x80\xf4\x90\x80\x80.java")
    expect(file_name == "S\u00ed\u00a0\u0080\u00e0\u0080\u0080\u00f4\u0090\u0080\u0080.java", repr(file_name))

    info = strict_json(["info", "--json", arg])
    expect(info is not None and info["file"] == path_text, "info file: " + repr(info and info["file"]))
    lst = strict_json(["list", "--json", arg])
    expect(lst is not None and lst[0]["name"] == "L\u00c3(", "list name: " + repr(lst))
    expect(lst is not None and lst[0]["source"] == "In\u00ffline.java:1-3", "list source: " + repr(lst))
    lines = strict_json(["lines", "--json", arg])
    expect(lines is not None and [r["file"] for r in lines[0]["rows"]] == [file_name, "In\u00ffline.java"],
           "lines files: " + repr(lines))
    check = strict_json(["check", "--json", arg])
    expect(check is not None and check["file"] == path_text and check["valid"] is True, "check: " + repr(check))
    rec = strict_json(["records", "--json", arg])
    if rec is not None:
        expect(rec["file"] == path_text, "records file: " + repr(rec["file"]))
        expect(rec["records"][0]["inline"]["files"] == ["In\u00ffline.java"] and
               rec["records"][0]["inline"]["function_names"] == ["F\u00fe"], "records inline: " + repr(rec["records"][0]))
        expect(rec["records"][1]["debug_info"]["entries"][0]["file"] == file_name, "records debug_info file")
        expect(rec["records"][2]["load"]["name"] == "L\u00c3(", "records load name")
    strip = strict_json(["strip-inline", "--json", arg])
    expect(strip is not None and strip["file"] == path_text and strip["sidecar"] == path_text + ".inline" and
           strip["status"] == "stripped", "strip-inline: " + repr(strip))
    missing = strict_json(["strip-inline", "--json", os.fsdecode(os.path.join(odd_dir, b"gone-\xff.dump"))], rc=2)
    expect(missing is not None and missing["status"] == "io-error" and "gone-\u00ff.dump" in missing["error"],
           "strip-inline error text: " + repr(missing))


def scenario_perfmap(d):
    out, _ = expect_rc(["perfmap", os.path.join(d, "truncated.dump")], 0)
    expect(out == "1000 40 old code\n1040 40 new code\n1080 80 old code\n", "latest code wins:\n" + out)
    out, _ = expect_rc(["perfmap", node_fixture()], 0)
    rows = out.splitlines()
    expect(len(rows) == 35, f"node perfmap rows: {len(rows)}")
    expect(all(re.fullmatch(r"[0-9a-f]+ [0-9a-f]+ .+", r) for r in rows), "perf-map line format")
    expect("7f5ffef46380 180 JS:*fib /tmp/nodefx/fib.js:1:13" in rows, "JS:*fib line")


PERF_SCRIPT = """\
java  4242/4243 [000]   100.000000:          1 cpu-clock:u:
\t           10048 Outer.run+0x48 (/tmp/jitted-4242-1.so)
\t           20010 [unknown] (/tmp/perf-4242.map)
\t    7f0000001234 Interpreter (/usr/lib/jvm/java-17/lib/server/libjvm.so)
\t    7f0000005678 start_thread+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)

java  4242/4243 [000]   100.100000:          1 cpu-clock:u:
\t           10048 Outer.run+0x48 (/tmp/jitted-4242-1.so)
\t    7f0000005678 start_thread+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)

java  4242/4243 [000]   100.200000:          1 cpu-clock:u:
\t           10048 Outer.run+0x48 (/tmp/jitted-4242-1.so)
\t    7f0000005678 start_thread+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)

C2 CompilerThre  4242/4250 [001]   100.300000:          1 cpu-clock:u:
\t           10048 foo (/usr/lib/libfoo.so)
\t           100a4 [unknown] ([unknown])

java 4242/4243
\t10090 Outer.run
\t20010 Plain.fn

java 4242/4243 100a4 [unknown]
"""


def scenario_fold(d):
    f = os.path.join(d, "inline.dump")
    out, err = expect_rc(["fold", f], 0, stdin=PERF_SCRIPT)
    expected = sorted([
        "C2 CompilerThre;Outer.run;Mid.step;foo 1",
        "java;Outer.run;Mid.step 1",
        "java;Plain.fn;Outer.run 1",
        "java;start_thread;Interpreter;Plain.fn;Outer.run;Mid.step;Leaf.get 1",
        "java;start_thread;Outer.run;Mid.step;Leaf.get 2",
    ])
    expect(out.splitlines() == expected, "folded:\n" + out + "\nexpected:\n" + "\n".join(expected))
    expect("6 samples" in err, err)
    out, _ = expect_rc(["fold", f], 0, stdin="")
    expect(out == "", "empty input folds to nothing")


def scenario_fold_injected(d):
    """After perf inject --jit, perf script prints a JIT frame's ip relative to its ELF
    jitted-<pid>-<code_index>.so, whose .text starts at 0x80: 0xc8 in code_index 1 is
    0x10000 + 0x48, the same place as the absolute 0x10048 above."""
    f = os.path.join(d, "inline.dump")
    script = ("java  4242/4243 [000]   100.000000:          1 cpu-clock:u:\n"
              "\t              c8 Outer.run (/tmp/run/jit/jitted-4242-1.so)\n"
              "\t    7f0000005678 start_thread+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n"
              "java  4242/4243 [000]   100.100000:          1 cpu-clock:u:\n"
              "\t            9999 Outer.run (/tmp/run/jit/jitted-4242-1.so)\n")
    out, err = expect_rc(["fold", f], 0, stdin=script)
    expect(out.splitlines() == ["java;Outer.run 1", "java;start_thread;Outer.run;Mid.step;Leaf.get 1"],
           "folded:\n" + out)  # an ip past the ELF's code keeps perf's symbol
    expect("2 JIT frames" in err or "1 JIT frames" in err, err)


def scenario_node_fold(d):
    """Real `perf record -k mono -g node --perf-prof` output: perf names the JIT frames
    [unknown] (/tmp/perf-9679.map); fold names every one of them from the dump."""
    dump = os.path.join(FIXTURES, "node-v20-fib2.jitdump")
    script = open(os.path.join(FIXTURES, "node-v20-fib2.perf-script.txt")).read()
    jit_lines = sum(1 for line in script.splitlines() if line.endswith("(/tmp/perf-9679.map)"))
    expect(jit_lines == 627, f"fixture has 627 perf-map frames, found {jit_lines}")
    out, err = expect_rc(["fold", dump], 0, stdin=script)
    total = js = 0
    for line in out.splitlines():
        stack, count = line.rsplit(" ", 1)
        total += int(count)
        js += int(count) * sum(1 for frame in stack.split(";") if frame.startswith("JS:"))
        expect(stack.startswith("node;__libc_start_call_main;node::Start;"), "outermost frame first: " + stack[:80])
    expect(total == 40, f"40 samples folded, got {total}")
    expect(js == jit_lines, f"every perf-map frame named from the dump: {js} of {jit_lines}")
    expect("40 samples, 627 JIT frames, 0 expanded inline" in err, err)
    expect(";JS:^loop /tmp/nodefx/fib2.js:3:14;JS:*fib /tmp/nodefx/fib2.js:1:13;" in out, "loop calls fib")
    check, _ = expect_rc(["check", dump], 0)
    expect(check.rstrip().endswith("valid, 56 records, 0 errors, 8 warnings"), check[-200:])


REUSE_SCRIPT = """\
java  7/8 [000]     1.500000:          1 cpu-clock:u:
\t            5010 [unknown] (/tmp/perf-7.map)

java  7/8 [000]     2.500000000:          1 cpu-clock:u:
\t            5010 [unknown] (/tmp/perf-7.map)

java  7/8 [000]     0.250000:          1 cpu-clock:u:
\t            5010 [unknown] (/tmp/perf-7.map)

java 7/8
\t5020 [unknown] (/tmp/perf-7.map)
"""


def scenario_fold_time(d):
    """A sample maps to the code that was at its address at the sample's time."""
    out, err = expect_rc(["fold", os.path.join(d, "reuse.dump")], 0, stdin=REUSE_SCRIPT)
    # 1.5 s -> first; 2.5 s -> second; 0.25 s, before both loads -> the first load covering it
    # (code a late attach replays ran before its load); no time -> the final state (second)
    expect(out == "java;first 2\njava;second 2\n", "time-aware fold:\n" + out)
    expect("2 resolved to earlier code by sample time, 1 older than their code's load" in err, err)


CALLERS_SCRIPT = """\
java  4242/4243 [000]   100.000000:          1 cpu-clock:u:
\t           20010 [unknown] (/tmp/perf-4242.map)
\t           10080 [unknown] (/tmp/perf-4242.map)

java  4242/4243 [000]   100.100000:          1 cpu-clock:u:
\t           20010 [unknown] (/tmp/perf-4242.map)
\t           10060 [unknown] (/tmp/perf-4242.map)

java  4242/4243 [000]   100.200000:          1 cpu-clock:u:
\tffffffff81000010 do_page_fault ([kernel.kallsyms])
\t           10080 [unknown] (/tmp/perf-4242.map)
"""


def scenario_fold_callers(d):
    """A caller frame is a return address: its inline chain is the call instruction's, one byte
    before. In inline.dump Mid.step is inlined over [0x20,0x80) and Leaf.get over [0x40,0x60):
    a call ending at 0x80 is made by Mid.step, one ending at 0x60 by Leaf.get (looked up at the
    return address they would read Outer.run and Outer.run;Mid.step). The first user frame after
    kernel frames is where the thread was interrupted, not a return address: 0x80 is Outer.run's."""
    out, err = expect_rc(["fold", os.path.join(d, "inline.dump")], 0, stdin=CALLERS_SCRIPT)
    expected = ["java;Outer.run;Mid.step;Leaf.get;Plain.fn 1", "java;Outer.run;Mid.step;Plain.fn 1",
                "java;Outer.run;do_page_fault 1"]
    expect(out.splitlines() == expected, "callers at return address - 1:\n" + out + "\nexpected:\n" + "\n".join(expected))


FLAT_SCRIPT = """\
            java  4242/4243   100.000000000:          1 cpu-clock:u:            10048 [unknown] (/tmp/perf-4242.map)
            java  4242/4243   100.100000000:          1 cpu-clock:u:            20010 [unknown] (/tmp/perf-4242.map)
 C2 CompilerThre  4242/4250   100.200000000:          1 cpu-clock:u:     7f0000005678 memcpy (/usr/lib/x86_64-linux-gnu/libc.so.6)
"""


def scenario_fold_flat(d):
    """perf script's output of a recording without -g: one line per sample, the comm padded on the
    left, the time field, the ip and its symbol on the same line."""
    out, err = expect_rc(["fold", os.path.join(d, "inline.dump")], 0, stdin=FLAT_SCRIPT)
    expected = ["C2 CompilerThre;memcpy 1", "java;Outer.run;Mid.step;Leaf.get 1", "java;Plain.fn 1"]
    expect(out.splitlines() == expected, "flat output:\n" + out + "\nexpected:\n" + "\n".join(expected))
    expect("3 samples" in err, err)


def scenario_sidecar(d):
    """After `jitdump strip-inline` the inline records live in FILE.inline; addr2line and fold
    still expand inline chains from there."""
    f = os.path.join(d, "inline.dump")
    before_a2l, _ = expect_rc(["addr2line", f, "0x10048", "0x100a4"], 0)
    before_fold, _ = expect_rc(["fold", f], 0, stdin=PERF_SCRIPT)
    expect_rc(["strip-inline", f], 0)
    expect(os.path.exists(f + ".inline"), "strip-inline wrote the sidecar")
    info = json_of(["info", "--json", f])
    expect(info is not None and info["inline"]["records"] == 0, "the main dump has no inline records left")
    after_a2l, _ = expect_rc(["addr2line", f, "0x10048", "0x100a4"], 0)
    strip_offsets = lambda text: re.sub(r"load at offset \d+", "load at offset N", text)
    expect(strip_offsets(after_a2l) == strip_offsets(before_a2l), "addr2line via sidecar:\n" + after_a2l)
    after_fold, _ = expect_rc(["fold", f], 0, stdin=PERF_SCRIPT)
    expect(after_fold == before_fold, "fold via sidecar:\n" + after_fold)
    os.remove(f + ".inline")
    plain, _ = expect_rc(["addr2line", f, "0x10048"], 0)
    expect("Leaf.get" not in plain and "  #0 Outer.run Outer.java:25\n" in plain, "without sidecar: " + plain)


def scenario_records(d):
    f = os.path.join(d, "inline.dump")
    for name in ["inline.dump", "inline-be.dump"]:
        rec = json_of(["records", "--json", os.path.join(d, name)])
        if rec is None:
            continue
        kinds = [r["type"] for r in rec["records"]]
        expect(kinds == ["SAMPLY_DEBUG_INFO2", "DEBUG_INFO", "CODE_LOAD", "CODE_LOAD", "CODE_CLOSE"], f"{name}: {kinds}")
        expect(rec["cross_endian"] == (name == "inline-be.dump") and rec["header"]["version"] == 1, str(rec["header"]))
        load = rec["records"][2]["load"]
        expect(load["name"] == "Outer.run" and load["code_addr"] == 0x10000 and load["code_size"] == 256 and
               load["code_index"] == 1 and load["debug_info"] == 1 and load["inline_info"] == 0, str(load))
        expect(rec["records"][3]["load"]["debug_info"] is None, "Plain.fn has no DEBUG_INFO")
        entries = rec["records"][1]["debug_info"]["entries"]
        expect(entries and entries[0]["addr"] == 0x10000 and entries[0]["file"] == "Outer.java", str(entries[:2]))
        inline = rec["records"][0]["inline"]
        expect(inline["function_names"][inline["functions"][0]["name_index"]] == "Outer.run" and
               len(inline["calls"]) == 2 and inline["calls"][1]["depth"] == 1, str(inline))
        expect(rec["truncated"] is None and rec["unknown_records"] == 0, "no tail")
    # agreement with list --json on a real producer's file
    node = json_of(["records", "--json", node_fixture()])
    lst = json_of(["list", "--json", node_fixture()])
    if node is not None and lst is not None:
        loads = [r["load"] for r in node["records"] if r["type"] == "CODE_LOAD"]
        expect([(l["code_index"], l["code_addr"], l["name"]) for l in loads] ==
               [(x["index"], x["addr"], x["name"]) for x in lst], "records and list agree on node")
    trunc = json_of(["records", "--json", os.path.join(d, "truncated.dump")])
    expect(trunc is not None and trunc["truncated"] is not None, "truncated tail reported: " + str(trunc and trunc["truncated"]))
    expect_rc(["records", f], 2)  # --json is the only format


def scenario_perfdata_ids(d):
    """`jitdump perfdata --records --json`: process and thread ids as perf prints them (pid_t),
    so a sample the kernel took in an exiting task it could no longer name says tid -1."""
    out, _ = expect_rc(["perfdata", "--json", "--records", os.path.join(d, "exiting-task.data")], 0)
    records = [json.loads(line) for line in out.splitlines()]
    samples = [r for r in records if r.get("type") == "SAMPLE"]
    comms = [r for r in records if r.get("type") == "COMM"]
    expect(len(samples) == 1 and samples[0]["pid"] == 4366 and samples[0]["tid"] == -1, f"samples: {samples}")
    expect(len(comms) == 1 and comms[0]["tid"] == 4366 and comms[0]["sample_id"]["tid"] == 4366, f"comms: {comms}")


def scenario_methods(d):
    """`jitdump methods`: a method table read whole (from its path or from its dump's), JSON and
    text agree, a cut table gives what it holds and exit 1, a dump is no table."""
    table = json_of(["methods", "--json", os.path.join(d, "inline.dump")])
    if table is not None:
        expect(table["file"].endswith("inline.dump.methods"), "the dump's table: " + table["file"])
        expect(table["layout"]["method_slot"] == -3 and table["layout"]["bcp_slot"] == -8 and
               table["layout"]["bcp_register"] == 21 and table["layout"]["jvm_version"] == "17.0.21+2",
               str(table["layout"]))
        methods = table["methods"]
        expect([m["name"] for m in methods] == ["inner", "nano\x01Time"], str(methods))
        inner = methods[0]
        expect(inner["class"] == "probe.Chain" and inner["file"] == "probe/Chain.java" and
               inner["descriptor"] == "(I)V" and inner["code_size"] == 45 and inner["retired"] == 500 and
               inner["lines"] == [[0, 31], [7, 32], [38, 31]] and not inner["native"], str(inner))
        expect(methods[1]["native"] and methods[1]["timestamp"] == 700 and "retired" not in methods[1] and
               methods[1]["method"] == inner["method"], str(methods[1]))
        expect(table["ended"] and table["end"]["retired"] == 1 and table["problems"] == [], str(table))
    out, _ = expect_rc(["methods", os.path.join(d, "inline.dump.methods")], 0)
    expect("probe.Chain.inner(I)V" in out and " 0:31 7:32 38:31" in out and "@0..500" in out, out)
    expect("nano\\x01Time" in out and "\x01" not in out.replace("\\x01", ""), "control byte shown escaped: " + out)
    cut = json_of(["methods", "--json", os.path.join(d, "methods-cut.methods")], rc=1)
    if cut is not None:
        expect(len(cut["methods"]) == 1 and not cut["ended"], str(cut))
        expect(any("ends inside a record" in p["message"] for p in cut["problems"]), str(cut["problems"]))
    expect_rc(["methods", os.path.join(d, "truncated.dump")], 2)  # no truncated.dump.methods
    expect_rc(["methods", os.path.join(d, "methods-missing.methods")], 2)
    expect_rc(["methods", os.path.join(d, "inline.dump") + "x"], 2)


def scenario_copy(d):
    """`jitdump copy`: a following copy of a file written in pieces ends byte-identical apart
    from the stamped pid, and never holds a partial record while the writer is mid-record."""
    import threading
    import time
    src = open(node_fixture(), "rb").read()
    growing = os.path.join(d, "growing.dump")
    dest = os.path.join(d, "copy.dump")
    open(growing, "wb").close()
    proc = subprocess.Popen([TOOL, "copy", "--follow", "--interval-ms", "5", "--pid", "31337", growing, dest],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sizes = []
    with open(growing, "ab", buffering=0) as out:
        for at in range(0, len(src), 997):  # cuts land inside records
            out.write(src[at:at + 997])
            time.sleep(0.01)
            if os.path.exists(dest):
                sizes.append(os.path.getsize(dest))
    out_text, err_text = proc.communicate(timeout=30)
    expect(proc.returncode == 0, f"copy --follow: exit {proc.returncode}: {err_text!r}")
    expect(b"90 records" in out_text, f"copy --follow summary: {out_text!r}")
    rec = json_of(["records", "--json", dest])
    orig = json_of(["records", "--json", node_fixture()])
    if rec is not None and orig is not None:
        expect(rec["header"]["pid"] == 31337 and rec["size"] == orig["size"] and rec["truncated"] is None,
               f"copy: header {rec['header']}, size {rec['size']}")
        pids = {r["load"]["pid"] for r in rec["records"] if r["type"] == "CODE_LOAD"}
        expect(pids == {31337}, f"copy: load pids {pids}")
        strip = lambda j: [(r["type"], r["total_size"], r.get("load", {}).get("name")) for r in j["records"]]
        expect(strip(rec) == strip(orig), "copy: the same records in the same order")
    # Every size seen mid-copy is a record boundary of the source.
    boundaries = {40} | {r["offset"] + r["total_size"] for r in (orig or {"records": []})["records"]}
    expect(sizes and all(s == 0 or s in boundaries for s in sizes), f"copy: mid-copy sizes off a boundary: {sizes[:20]}")
    expect_rc(["copy", node_fixture(), dest], 2)  # DEST exists: never overwritten
    expect_rc(["copy", "--pid", "x", node_fixture(), os.path.join(d, "x.dump")], 2)
    not_dump = os.path.join(d, "not.dump")
    open(not_dump, "wb").write(b"\x7fELF" + b"\0" * 60)
    expect_rc(["copy", not_dump, os.path.join(d, "y.dump")], 1)


def agent_path(tool, env_lib=None):
    """`TOOL agent-path --json` with $JITDUMPAGENT_LIB set to env_lib (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "JITDUMPAGENT_LIB"}
    if env_lib is not None:
        env["JITDUMPAGENT_LIB"] = env_lib
    proc = subprocess.run([tool, "agent-path", "--json"], env=env, capture_output=True, text=True)
    return proc.returncode, (json.loads(proc.stdout) if proc.returncode == 0 else None), proc.stderr


def place(src, dest, mode):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(src, "rb") as i, open(dest, "wb") as o:
        o.write(i.read())
    os.chmod(dest, mode)
    return dest


def scenario_agent_path(d):
    """Where the tool finds its agent: $JITDUMPAGENT_LIB, else the installed layout beside it
    (meson's prefix, bindir and libdir), else the build tree's; nothing writable by others."""
    build = os.path.realpath(os.path.join(os.path.dirname(TOOL), "..", ".."))
    built_agent = os.path.join(build, "agent", "libjitdumpagent.so")
    rc, got, err = agent_path(TOOL, "/opt/elsewhere/libjitdumpagent.so")
    expect(rc == 0 and got == {"agent": "/opt/elsewhere/libjitdumpagent.so", "from": "JITDUMPAGENT_LIB"},
           f"$JITDUMPAGENT_LIB wins, taken as given: {got} {err}")
    rc, got, err = agent_path(TOOL)
    expect(rc == 0 and got == {"agent": built_agent, "from": "build"}, f"the build tree's agent: {got} {err}")
    out, _ = expect_rc(["agent-path"], 0)
    expect(out == (os.environ.get("JITDUMPAGENT_LIB") or built_agent) + "\n", f"text output is the path: {out!r}")

    # Copies of the tool in each layout, with a stand-in agent (any regular file will do: the
    # tool only locates it).
    options = {o["name"]: o["value"] for o in json.loads(subprocess.run(
        ["meson", "introspect", "--buildoptions", build], check=True, capture_output=True, text=True).stdout)}
    prefix = os.path.join(d, "layout")
    bindir = os.path.join(prefix, options["bindir"])
    installed_agent = os.path.join(prefix, options["libdir"], "libjitdumpagent", "libjitdumpagent.so")
    tool = place(TOOL, os.path.join(bindir, "jitdump"), 0o755)
    rc, got, err = agent_path(tool)
    expect(rc == 1 and "JITDUMPAGENT_LIB" in err and "installed layout" in err and "build layout" in err,
           f"a tool with no agent beside it says what it looked at: rc={rc} {err}")
    build_agent = os.path.join(bindir, "..", "..", "agent", "libjitdumpagent.so")  # bin/ stands for jitdump/tool/
    place(TOOL, build_agent, 0o644)
    rc, got, err = agent_path(tool)
    expect(rc == 0 and got == {"agent": os.path.realpath(build_agent), "from": "build"},
           f"a build-tree layout: {got} {err}")
    place(TOOL, installed_agent, 0o644)
    rc, got, err = agent_path(tool)
    expect(rc == 0 and got == {"agent": os.path.realpath(installed_agent), "from": "installed"},
           f"the installed layout comes first: {got} {err}")

    # Nothing another user can change is handed out (the tool may run as root for their JVM).
    os.chmod(installed_agent, 0o666)
    rc, got, err = agent_path(tool)
    expect(rc == 0 and got["from"] == "build", f"a world-writable agent is passed over: {got} {err}")
    os.chmod(installed_agent, 0o644)
    agent_dir = os.path.dirname(installed_agent)
    os.chmod(agent_dir, 0o777)
    rc, got, err = agent_path(tool)
    expect(rc == 0 and got["from"] == "build", f"an agent in a world-writable directory is passed over: {got} {err}")
    os.chmod(os.path.dirname(os.path.realpath(build_agent)), 0o777)
    rc, got, err = agent_path(tool)
    expect(rc == 1 and err.count("writable by other users") == 2, f"both refused, and said why: rc={rc} {err}")
    os.chmod(os.path.dirname(os.path.realpath(build_agent)), 0o755)
    os.chmod(agent_dir, 0o755)
    rc, got, err = agent_path(tool)
    expect(rc == 0 and got["from"] == "installed", f"restored: {got} {err}")


def main():
    global TOOL, FIXTURES
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    scenario, TOOL, gen, FIXTURES = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="jitdump-cli-") as d:
        subprocess.run([gen, d], check=True)
        globals()["scenario_" + scenario](d)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s) in scenario {scenario}")
        return 1
    print(f"scenario {scenario}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
