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
"""
import json
import os

from support.checks import check, log
from support.jvm import wait_line
from support.namespaces import require
from support.output import agent_lines

ROUNDS = 3000


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
                                           jvm_args=["-XX:-UsePerfData"])])  # hsperfdata collides too

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
