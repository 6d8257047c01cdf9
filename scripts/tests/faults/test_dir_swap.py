"""The output directory swapped for a symlink while the JVM runs (issue #13, item 2).

A root JVM writes into OUT = PARENT/jitdumps (root's, 0755) with dir=, perfmap= and stats= all
there. PARENT belongs to an unprivileged user (nobody), who, once the JVM has written its first
code, renames jitdumps away and puts a symlink to VICTIM (root's directory holding root's own
stats.json, perf-<pid>.map and jit-<pid>.dump) in its place. Then the JVM compiles new code and
exits, which compacts the perf map (temporary file + rename), writes the stats (O_TMPFILE + link)
and would remove "stale" files of its own. Before the fix all of that went through the path
again: root's files in VICTIM were replaced.

Expected: nothing in VICTIM changes (same entries, same contents, inodes and times); the dump,
the perf map and the stats land in the original directory (now at its new name): the dump valid
and closed, holding the code compiled after the swap (Work$P, $Q, $R); the perf map compacted
there; the stats there, counting what the dump holds. The JVM exits 0 with its output intact.

Also: a directory the agent must refuse (issue #13 item 2's second half): one owned by nobody,
one writable by everyone without the sticky bit: one error naming the owner, the mode and the
fix (a directory of our own or root's; chmod +t), nothing created in it, the JVM runs on. A sticky world-writable one (like /tmp) is used.
"""
import os
import subprocess

import pytest

from support.checks import check, log
from support.jvm import wait_line
from support.output import agent_lines, read_stats
from support.prereq import require_command, require_root

from .conftest import PHASE2_COMPILED

ROUNDS = 3000
NOBODY = 65534


def snapshot(directory) -> dict:
    """name -> (inode, size, mtime_ns, contents) of every entry."""
    out = {}
    for entry in sorted(os.listdir(directory)):
        p = os.path.join(directory, entry)
        st = os.lstat(p)
        out[entry] = (st.st_ino, st.st_size, st.st_mtime_ns, open(p, "rb").read() if os.path.isfile(p) else None)
    return out


def as_nobody(command: str) -> None:
    subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "sh", "-c", command],
                   check=True, timeout=30)


@pytest.mark.meson(every_jdk=True)
def test_dir_swap(ctx) -> None:
    require_root("a root JVM and files planted as another user")
    require_command("setpriv", "util-linux")
    expected = ctx.expected_output(ROUNDS)
    parent = ctx.work / "parent"
    parent.mkdir()
    os.chown(parent, NOBODY, NOBODY)  # the attacker's directory
    out = parent / "jitdumps"
    out.mkdir(mode=0o755)  # root's, inside it
    victim = ctx.work / "victim"
    victim.mkdir(mode=0o700)

    gate = ctx.work / "gate"
    proc = ctx.start_java(f"dir={out},perfmap={out},stats={out}/stats.json", "Work", ROUNDS, "return", gate,
                         jvm_args=PHASE2_COMPILED)
    pid = proc.pid
    for name in ("stats.json", f"perf-{pid}.map", f"jit-{pid}.dump"):
        (victim / name).write_text(f"root's own {name}\n")
        os.chmod(victim / name, 0o600)
    before = snapshot(victim)

    wait_line(proc, "READY", timeout=120)
    moved = parent / "jitdumps.moved"
    as_nobody(f"mv {out} {moved} && ln -s {victim} {out}")
    check(out.is_symlink() and moved.is_dir(), "the swap did not happen")
    gate.touch()
    rc = proc.wait(timeout=180)
    stderr = proc.err_path.read_text(errors="replace")
    check(rc == 0, f"JVM exit {rc}", stderr)
    check(proc.out_path.read_text().splitlines() == expected, "program output changed", stderr)
    check(agent_lines(stderr) == [], "no agent message expected", stderr)

    after = snapshot(victim)
    check(after == before, f"files in the symlink's target changed: before {sorted(before)}, after {sorted(after)}")
    dump = moved / f"jit-{pid}.dump"
    check(dump.is_file(), f"the dump is not in the original directory: {sorted(os.listdir(moved))}")
    d = ctx.assert_valid(dump, "dump after the swap")
    check(d.closed, "the dump should end with CLOSE", d.describe())
    late = [load.name for load in d.loads if "Work$P" in load.name or "Work$Q" in load.name or "Work$R" in load.name]
    check(late, "the code compiled after the swap is not in the original directory's dump", d.describe())
    stats = read_stats(moved / "stats.json")
    check(stats["written"]["code_loads"] == len(d.loads),
          f"stats say {stats['written']['code_loads']} loads written, the dump holds {len(d.loads)}")
    pmap = (moved / f"perf-{pid}.map").read_text()
    check(pmap.endswith("\n") and len(pmap.splitlines()) > 10 and "Work$P" in pmap,
          "the perf map in the original directory lacks the code compiled after the swap")
    check(stats["written"]["perfmap_compactions"] >= 1, "the perf map was not compacted at exit", str(stats))
    leftovers = [n for n in os.listdir(moved) if n.startswith(f"perf-{pid}.map.")]
    check(leftovers == [], f"temporary perf map files left behind: {leftovers}")
    log(f"swap: {len(d.loads)} loads ({len(late)} after the swap) in the original directory; the target untouched")

    refused_directories(ctx, expected)


def refused_directories(ctx, expected) -> None:
    cases = []
    theirs = ctx.work / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, NOBODY, NOBODY)
    cases.append(("owned by nobody", theirs, f"owner uid {NOBODY}", "owned by this user or root"))
    open_dir = ctx.work / "world-writable"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    cases.append(("world-writable, not sticky", open_dir, "mode 0777", "chmod +t"))
    for what, directory, detail, fix in cases:
        r = ctx.run_java(f"dir={directory}", "Work", ROUNDS)
        stderr = r.stderr.decode(errors="replace")
        check(r.returncode == 0, f"{what}: JVM exit {r.returncode}", stderr)
        check(r.stdout.decode().splitlines()[:1] == expected[:1], f"{what}: program output changed", stderr)
        lines = agent_lines(stderr)
        check(len(lines) == 1 and "error" in lines[0] and "refusing output directory" in lines[0] and
              str(directory) in lines[0] and detail in lines[0] and fix in lines[0],
              f"{what}: expected one error naming the directory, {detail} and the fix", stderr)
        check(os.listdir(directory) == [], f"{what}: files were created in a refused directory")
    sticky = ctx.work / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    r = ctx.run_java(f"dir={sticky}", "Work", ROUNDS)
    stderr = r.stderr.decode(errors="replace")
    check(r.returncode == 0 and agent_lines(stderr) == [], "a sticky world-writable directory (like /tmp) is used",
          stderr)
    check(len(list(sticky.glob("jit-*.dump"))) == 1, "sticky directory: no dump written")
    log("refused: a directory owned by another user and a world-writable one; used: a sticky one")
