"""Live profilers on a running JVM through its perf map (perfmap=on): what docs/deploying.md's
"perf top / bpftrace on a live JVM" recipe promises."""
from __future__ import annotations

import collections
import re
import signal
import subprocess
import time

from support import perf
from support.checks import check, figure, log
from support.jvm import clean_env
from support.prereq import require_command, require_root

from .conftest import DEMO_METHODS

# perf top --stdio rows: "    22.95%  [JIT] tid 8450  [.] demo.Demo.divideChain(long, int)"
TOP_ROW = re.compile(r"^\s*([\d.]+)%\s+(.*?)\s+\[\.\]\s+(.*?)\s*$")
# bpftrace ustack(perf) frames: "\t7f4a80eec282 demo.Demo.countPrimes(int, int)+98 (/tmp/perf-9133.map)"
BT_FRAME = re.compile(r"^\s+([0-9a-f]+) (.*?)(?:\+\d+)? \((.*)\)\s*$")


def test_perf_top(demo_jvm, work):
    require_root("perf top samples another process")
    perf.require_sampling()
    # perf top --stdio reads its keyboard from stdin and quits at its end: keep a pipe open.
    top = subprocess.Popen(["perf", "top", "-p", str(demo_jvm.pid), "--stdio", "-d", "2", "-e", "cpu-clock"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=clean_env(LC_ALL="C"))
    time.sleep(9)
    top.send_signal(signal.SIGINT)
    try:
        out, err = top.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        top.kill()
        out, err = top.communicate()
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.decode(errors="replace"))
    (work / "perf-top.txt").write_text(text)
    rows = [m.groups() for m in map(TOP_ROW.match, text.splitlines()) if m]
    check(rows, "perf top printed no symbol rows", text[-3000:] + err.decode(errors="replace")[-2000:])
    best = collections.defaultdict(float)
    for share, dso, sym in rows:
        best[sym] = max(best[sym], float(share))
    log("perf top's hottest: " + ", ".join(f"{s} {p:.1f}%" for s, p in sorted(best.items(), key=lambda x: -x[1])[:6]))
    for method in DEMO_METHODS:
        dsos = {dso for _, dso, sym in rows if sym == method}
        check(best.get(method, 0) >= 1.0 and any("[JIT]" in d for d in dsos),
              f"perf top -p {demo_jvm.pid} shows {method} from the perf map ([JIT]) with >= 1% in a refresh",
              "\n".join(text.splitlines()[-60:]))
        figure(f"live.perf_top.{method.split('(')[0].rsplit('.', 1)[1]}_percent", f"{best[method]:.2f}")


def test_bpftrace(demo_jvm, work):
    require_root("bpftrace loads BPF programs")
    bpftrace = require_command("bpftrace", "bpftrace")
    program = (f"profile:hz:99 /pid == {demo_jvm.pid}/ {{ @[ustack(perf)] = count(); }} "
               "interval:s:5 { exit(); }")
    log(f"bpftrace -e '{program}'")
    r = subprocess.run([bpftrace, "-e", program], capture_output=True, timeout=300, env=clean_env(LC_ALL="C"))
    text, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    (work / "bpftrace.txt").write_text(text + "\n--- stderr ---\n" + err)
    check(r.returncode == 0, f"bpftrace failed (exit {r.returncode})", err[-3000:])
    # Each map entry: "@[\n<frames>\n]: COUNT"; weigh each stack's leaf by its count.
    leaves = collections.Counter()
    map_leaves = named_map_leaves = 0
    for stack, count in re.findall(r"@\[\n(.*?)\n\]: (\d+)", text, re.S):
        frames = [m.groups() for m in map(BT_FRAME.match, stack.splitlines()) if m]
        if not frames:
            continue
        _addr, sym, where = frames[0]
        leaves[sym] += int(count)
        if where == str(demo_jvm.perf_map):
            map_leaves += int(count)
            named_map_leaves += int(count) * (not sym.startswith("[unknown]"))
    total = sum(leaves.values())
    log(f"bpftrace: {total} samples; hottest leaves: {leaves.most_common(6)}")
    figure("live.bpftrace.samples", total)
    figure("live.bpftrace.perf_map_leaf_samples", map_leaves)
    # 5 s at 99 Hz is at most ~500 samples of the demo's one busy thread; a loaded machine gives it
    # less CPU (114 in one run at load 11), so the floor only asks for enough to judge names by.
    check(total >= 25, f"bpftrace sampled the JVM ({total} samples in 5 s at 99 Hz, want >= 25)", text[-3000:])
    for method in DEMO_METHODS:
        check(leaves[method] >= 1, f"bpftrace's ustack resolves {method} through {demo_jvm.perf_map}",
              text[-3000:])
    check(map_leaves >= 0.3 * total, f"bpftrace puts the JIT samples in the perf map ({map_leaves} of {total})",
          text[-3000:])
