"""The marker mmap is refused: the output directory is on a noexec mount, so mmap(PROT_EXEC) of
the dump fails with EPERM.

Expected: exactly one warning that names the dump, the cause and the likely reason (noexec),
the JVM completes with correct output, and the dump is still written, complete (CLOSE record)
and valid; the stats count every load as written and nothing lost.
"""
from support.checks import check, log
from support.output import agent_lines, dumps_in, read_stats
from support.prereq import require_root
from support.procs import mount_tmpfs

ROUNDS = 20000


def test_noexec(ctx, cleanup) -> None:
    require_root("a noexec tmpfs mount")
    expected = ctx.expected_result(ROUNDS)
    mnt = ctx.work / "noexec"
    mount_tmpfs(cleanup, mnt, "size=64m,noexec,mode=0755")
    stats_path = ctx.work / "stats.json"
    r = ctx.run_java(f"dir={mnt},stats={stats_path}", "Work", str(ROUNDS))
    stderr = r.stderr.decode("utf-8", "replace")
    check(r.returncode == 0, f"noexec: JVM exit {r.returncode}", stderr)
    check(r.stdout.decode().splitlines()[:1] == [expected], "noexec: program output changed", stderr)
    lines = agent_lines(r.stderr)
    check(len(lines) == 1, f"noexec: expected exactly one agent line, got {len(lines)}", stderr)
    for piece in ("warning", "cannot map", "jit-", "Operation not permitted", "noexec"):
        check(piece in lines[0], f"noexec: the warning should contain {piece!r}: {lines[0]}", stderr)
    log(f"noexec: {lines[0]}")
    dumps = dumps_in(mnt)
    check(len(dumps) == 1, "noexec: the dump should still be written")
    d = ctx.assert_valid(dumps[0], "noexec")
    check(d.closed, "noexec: the dump should end with its CLOSE record", d.describe())
    stats = read_stats(stats_path)
    check(stats["lost"]["total"] == 0 and len(d.loads) == stats["written"]["code_loads"],
          f"noexec: nothing should be lost: dump {len(d.loads)} loads, stats {stats['written']} {stats['lost']}")

