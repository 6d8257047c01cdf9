"""Output directory missing or unwritable at start.

- missing (several levels): created with mode 0755 (less the umask), the dump is written;
- a regular file where the directory (or one of its parents) should be;
- a read-only mount (root ignores mode bits, so chmod alone would prove nothing): the
  directory itself, and a directory to be created inside it;
- the default layout ($JITDUMPDIR/.debug/jit/...) on a read-only mount;
- stats= pointing into a read-only mount.
In every unusable case: exactly one agent line naming the path and the cause, the JVM runs the
workload to the end (exit 0, output intact), and nothing is created.
"""
import os
import stat
import subprocess

from support.checks import check, log
from support.output import agent_lines, dumps_in
from support.prereq import require_root
from support.procs import mount_tmpfs

ROUNDS = 3000


def test_output_dir(ctx, cleanup) -> None:
    require_root("tmpfs and read-only mounts")
    expected = ctx.expected_result(ROUNDS)

    def run(options: str, env=None):
        r = ctx.run_java(options, "Work", str(ROUNDS), env=env)
        stderr = r.stderr.decode("utf-8", "replace")
        check(r.returncode == 0, f"{options}: JVM exit {r.returncode}", stderr)
        check(r.stdout.decode().splitlines()[:1] == [expected], f"{options}: program output changed", stderr)
        return r, stderr, agent_lines(r.stderr)

    # Missing, three levels deep: created.
    deep = ctx.work / "a" / "b" / "c"
    old = os.umask(0o022)
    try:
        r, stderr, lines = run(f"dir={deep}")
    finally:
        os.umask(old)
    check(lines == [], "missing dir: no message expected", stderr)
    dumps = dumps_in(deep)
    check(len(dumps) == 1, f"missing dir: expected one dump in {deep}", stderr)
    for d in (ctx.work / "a", ctx.work / "a" / "b", deep):
        mode = stat.S_IMODE(d.stat().st_mode)
        check(mode == 0o755, f"created directory {d} has mode {mode:o}, documented 0755 (less umask)")
    ctx.assert_valid(dumps[0], "missing dir")

    def refused(case: str, options: str, path_in_message: str, cause: str, env=None) -> None:
        r, stderr, lines = run(options, env)
        check(len(lines) == 1, f"{case}: expected exactly one agent line, got {len(lines)}", stderr)
        check(path_in_message in lines[0] and cause in lines[0],
              f"{case}: the message should name {path_in_message!r} and the cause {cause!r}", stderr)
        check("error" in lines[0], f"{case}: should be an error line", stderr)
        log(f"{case}: {lines[0]}")

    # A file in place of the directory, and in place of a parent.
    blocker = ctx.work / "blocker"
    blocker.write_text("not a directory\n")
    refused("file as dir", f"dir={blocker}", str(blocker), "not a directory")
    refused("file as parent", f"dir={blocker}/sub/dir", str(blocker), "Not a directory")
    check(blocker.read_text() == "not a directory\n", "the file in the way was modified")

    # Read-only mounts.
    ro = ctx.work / "ro"
    # 0755: a directory others may write to without the sticky bit is refused for that alone.
    mount_tmpfs(cleanup, ro, "size=1m,mode=0755")
    (ro / "existing").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
    refused("read-only dir", f"dir={ro / 'existing'}", str(ro / "existing"), "Read-only file system")
    refused("read-only parent", f"dir={ro}/new/sub", str(ro), "Read-only file system")
    check(sorted(p.name for p in ro.iterdir()) == ["existing"] and not any((ro / "existing").iterdir()),
          "something was created on the read-only mount")

    # The default layout under $JITDUMPDIR on a read-only mount.
    refused("default layout", "log=warn", str(ro) + "/.debug/jit", "Read-only file system",
            env={"JITDUMPDIR": str(ro), "HOME": str(ro)})

    # A disk already full at start: the header cannot be written.
    full = ctx.work / "full-at-start"
    mount_tmpfs(cleanup, full, "size=64k,mode=0755")
    fd = os.open(full / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    refused("full at start", f"dir={full}", str(full), "No space left on device")
    left = dumps_in(full)
    check(left == [], f"[empty-dump-left-behind] disk full at start: the agent gave up but left "
          f"{[(p.name, p.stat().st_size) for p in left]} behind, which `jitdump check` rejects")

    # A FIFO as config=: reading it would block the JVM's start-up until someone writes to it.
    fifo = ctx.work / "config.fifo"
    os.mkfifo(fifo)
    try:
        r = ctx.run_java(f"dir={ctx.work / 'fifo-out'},config={fifo}", "Work", str(ROUNDS), timeout=10)
        hung = False
    except subprocess.TimeoutExpired:
        hung = True
    check(not hung, f"[config-fifo-blocks] config={fifo} (a FIFO): the JVM hangs at start-up")

    # stats= into a read-only mount: the dump is still written, one warning about the stats.
    out = ctx.work / "stats-case"
    r, stderr, lines = run(f"dir={out},stats={ro}/stats.json")
    check(len(lines) == 1 and "cannot write stats" in lines[0] and str(ro) in lines[0],
          "stats on a read-only mount: expected one warning naming the path", stderr)
    ctx.assert_valid(dumps_in(out)[0], "stats on read-only mount")

