"""Two JVMs with the same pid writing into one directory (issue #13, item 4).

Two containers sharing a volume, each JVM pid 1 in its own pid namespace: here two
`unshare --pid --fork --mount-proc` JVMs, both pid 1, with dir=, perfmap= and stats= in one
shared directory. JVM A starts and writes jit-1.dump; JVM B starts while A runs. Before the fix
B took A's live jit-1.dump and perf-1.map for stale files of an earlier process, unlinked them,
and A went on writing into unlinked inodes; both stats claimed nothing lost.

Expected: A's files stay where they are (same inode, still linked) and hold all of A's code;
B writes the same names in the subdirectory jit-1-2/ (perf 6.1 accepts a dump only as
jit-<pid>.dump, in any directory) and says so in one warning naming both paths; the stats file
of the JVM that exits second goes to stats-1-2.json with a warning; each dump is valid, closed,
has header pid 1 and holds exactly the loads its own stats count as written, and each stats
accounts for every code blob with nothing lost. Both JVMs exit 0 with their output intact.

Then real perf reads a dump written under the distinct name: a JVM under `perf record -k 1`
finds its jit-<pid>.dump held (locked) by another process, writes jit-<pid>-2/jit-<pid>.dump,
and `perf inject --jit` finds that dump through the recording (it writes its jitted-*.so images
next to it) and `perf report` shows Java methods.
"""
import fcntl
import json
import os
import subprocess
import time

import pytest

from support import perf

from support.checks import check, log
from support.jvm import wait_line
from support.namespaces import require
from support.output import agent_lines

from .conftest import PHASE2_COMPILED

ROUNDS = 3000


@pytest.mark.meson(every_jdk=True)
def test_same_pid(ctx) -> None:
    require()
    expected = ctx.expected_output(ROUNDS)
    shared = ctx.work / "shared"
    shared.mkdir(mode=0o755)
    gate = ctx.work / "gate"
    options = f"dir={shared},perfmap={shared},stats={shared}/stats-%p.json"

    def start():
        return ctx.jvm.spawn(["unshare", "--pid", "--fork", "--mount-proc",
                              *ctx.java_cmd(options, "Work", ROUNDS, "return", gate,
                                           jvm_args=["-XX:-UsePerfData", *PHASE2_COMPILED])])  # hsperfdata collides too

    a = start()
    wait_line(a, "READY", timeout=120)
    first_dump, first_map = shared / "jit-1.dump", shared / "perf-1.map"
    check(first_dump.is_file() and first_map.is_file(), f"A wrote no jit-1.dump / perf-1.map: {os.listdir(shared)}",
          a.err_path.read_text(errors="replace"))
    inodes = {first_dump: first_dump.stat().st_ino}  # the map is renamed over by A's own compaction
    b = start()
    wait_line(b, "READY", timeout=120)
    gate.touch()
    for name, proc in (("A", a), ("B", b)):
        rc = proc.wait(timeout=180)
        check(rc == 0, f"JVM {name} exit {rc}", proc.err_path.read_text(errors="replace"))
        check(proc.out_path.read_text().splitlines() == expected, f"JVM {name}: program output changed")

    for p, ino in inodes.items():
        check(p.exists() and p.stat().st_ino == ino and p.stat().st_nlink == 1,
              f"A's live {p.name} was removed or replaced")
    check(first_map.is_file(), "A's perf-1.map was removed")
    second = shared / "jit-1-2"
    second_dump, second_map = second / "jit-1.dump", second / "perf-1.map"
    check(second_dump.is_file() and second_map.is_file(), f"B's files are not in {second}: "
          f"{sorted(str(p.relative_to(shared)) for p in shared.rglob('*'))}", b.err_path.read_text(errors="replace"))

    a_lines = agent_lines(a.err_path.read_text(errors="replace"))
    b_lines = agent_lines(b.err_path.read_text(errors="replace"))
    dump_warnings = [line for line in b_lines if "jit-1.dump is in use by another live process" in line]
    check(len(dump_warnings) == 1 and f"{second_dump}" in dump_warnings[0] and "warning" in dump_warnings[0],
          "B: expected one warning naming its dump's new path", "\n".join(b_lines))
    allowed = ("is in use by another live process", "was written by another live process")
    for name, lines in (("A", a_lines), ("B", b_lines)):
        check(all(any(a in line for a in allowed) for line in lines), f"{name}: unexpected agent lines",
              "\n".join(lines))

    stats_files = sorted(shared.glob("stats-1*.json"))
    check([p.name for p in stats_files] == ["stats-1-2.json", "stats-1.json"],
          f"expected stats-1.json and stats-1-2.json, found {[p.name for p in stats_files]}")
    by_dump = {}
    for p in stats_files:
        stats = json.loads(p.read_text())
        by_dump[os.path.realpath(stats["dump"])] = stats
    for dump in (first_dump, second_dump):
        stats = by_dump.get(os.path.realpath(dump))
        check(stats is not None, f"no stats file names {dump}: {list(by_dump)}")
        d = ctx.assert_valid(dump, str(dump.relative_to(shared)))
        check(d.closed, f"{dump}: not closed", d.describe())
        check(d.pid == 1, f"{dump}: header pid {d.pid}, want 1 (the namespace pid)")
        written, ev, lost = stats["written"], stats["events"], stats["lost"]
        check(len(d.loads) == written["code_loads"],
              f"{dump}: {len(d.loads)} CODE_LOAD, its stats say {written['code_loads']} written")
        offered = ev["compiled_method_load"] + ev["dynamic_code_generated"]
        accounted = written["code_loads"] + ev["duplicate_loads"] + ev["empty_blobs"] + lost["total"]
        check(offered == accounted and lost["total"] == 0, f"{dump}: offered {offered}, accounted {accounted}: {stats}")
        check(any("Work$P" in load.name for load in d.loads), f"{dump}: lacks the code compiled after the gate")
    check(first_map.read_text().count("\n") > 10 and second_map.read_text().count("\n") > 10,
          "a perf map is (nearly) empty")
    log(f"two JVMs with pid 1: A {first_dump.relative_to(shared)}, B {second_dump.relative_to(shared)}; "
        f"B said: {dump_warnings[0]}")

    perf_reads_the_distinct_name(ctx)


def perf_reads_the_distinct_name(ctx) -> None:
    perf.require_sampling()
    out = ctx.work / "perf"
    out.mkdir()
    perf_env = perf.env(ctx.work / "perf-home")
    pid_file, go = ctx.work / "perf-pid", ctx.work / "perf-go"
    data = out / "perf.data"
    java = " ".join(ctx.java_cmd(f"dir={out}", "Work", ROUNDS))
    # The shell writes its pid (java keeps it through exec) and waits until the held file exists.
    shell = f"echo $$ > {pid_file}; while [ ! -e {go} ]; do sleep 0.01; done; exec {java}"
    proc = ctx.jvm.spawn(["perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "-F", "999", "-o", str(data), "--",
                          "sh", "-c", shell], full_env=perf_env)
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.01)
    pid = int(pid_file.read_text())
    held = out / f"jit-{pid}.dump"
    with open(held, "wb") as holder:  # another live process's dump, as the agent marks its own
        holder.write(b"held by another live process\n")
        fcntl.flock(holder, fcntl.LOCK_SH)
        go.touch()
        rc = proc.wait(timeout=180)
    stderr = proc.err_path.read_text(errors="replace")
    check(rc == 0, f"perf record of the JVM: exit {rc}", stderr)
    check(held.read_bytes() == b"held by another live process\n", "the held dump was touched")
    moved = out / f"jit-{pid}-2" / f"jit-{pid}.dump"
    check(moved.is_file(), f"no dump at {moved}", stderr)
    d = ctx.assert_valid(moved, "the dump under the distinct name")
    r = subprocess.run(["perf", "inject", "--jit", "-i", str(data), "-o", str(out / "perf.jit.data")],
                       capture_output=True, text=True, timeout=300, cwd=out, env=perf_env)
    check(r.returncode == 0, f"perf inject --jit failed (exit {r.returncode})", r.stdout + r.stderr)
    jitted = list(moved.parent.glob(f"jitted-{pid}-*.so"))
    check(len(jitted) > 0, "perf inject wrote no jitted-*.so next to the moved dump: it did not find it", r.stderr)
    rep = subprocess.run(["perf", "report", "-i", str(out / "perf.jit.data"), "--stdio", "--sort", "sym", "-g",
                          "none"], capture_output=True, text=True, timeout=300, cwd=out, env=perf_env)
    java_syms = [line for line in rep.stdout.splitlines() if "Work" in line or "java." in line]
    check(rep.returncode == 0 and java_syms, "perf report shows no Java method", rep.stdout[-3000:] + rep.stderr)
    log(f"perf: {moved.relative_to(out)} ({len(d.loads)} loads) found by perf inject ({len(jitted)} images); "
        f"perf report: {java_syms[0].strip()}")
