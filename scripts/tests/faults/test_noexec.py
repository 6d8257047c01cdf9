#!/usr/bin/env python3
"""The marker mmap is refused: the output directory is on a noexec mount, so mmap(PROT_EXEC) of
the dump fails with EPERM.

Expected: exactly one warning that names the dump, the cause and the likely reason (noexec),
the JVM completes with correct output, and the dump is still written, complete (CLOSE record)
and valid; the stats count every load as written and nothing lost.
"""
import faultlib as fl
from faultlib import check

ROUNDS = 20000


def body(ctx: fl.Context) -> None:
    fl.need_root()
    expected = ctx.expected_result(ROUNDS)
    mnt = ctx.work / "noexec"
    fl.mount_tmpfs(mnt, "size=64m,noexec,mode=0755")
    stats_path = ctx.work / "stats.json"
    r = ctx.run_java(f"dir={mnt},stats={stats_path}", "Work", str(ROUNDS))
    stderr = r.stderr.decode("utf-8", "replace")
    check(r.returncode == 0, f"noexec: JVM exit {r.returncode}", stderr)
    check(r.stdout.decode().splitlines()[:1] == [expected], "noexec: program output changed", stderr)
    lines = fl.agent_lines(r.stderr)
    check(len(lines) == 1, f"noexec: expected exactly one agent line, got {len(lines)}", stderr)
    for piece in ("warning", "cannot map", "jit-", "Operation not permitted", "noexec"):
        check(piece in lines[0], f"noexec: the warning should contain {piece!r}: {lines[0]}", stderr)
    fl.log(f"noexec: {lines[0]}")
    dumps = fl.dumps_in(mnt)
    check(len(dumps) == 1, "noexec: the dump should still be written")
    d = ctx.assert_valid(dumps[0], "noexec")
    check(d.closed, "noexec: the dump should end with its CLOSE record", d.describe())
    stats = fl.read_stats(stats_path)
    check(stats["lost"]["total"] == 0 and d.loads == stats["written"]["code_loads"],
          f"noexec: nothing should be lost: dump {d.loads} loads, stats {stats['written']} {stats['lost']}")


if __name__ == "__main__":
    fl.main(body)
