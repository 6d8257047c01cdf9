"""Disk full mid-run: the output directory is a 256 KiB tmpfs, far less than the run writes.

Expected: the JVM completes with correct output (exit 0); exactly one warning says the dump
cannot be written and why; the records that did not fit are counted in stats lost.write_error;
the dump is cut back to its last whole record, so `jitdump check` accepts it; every record the
stats count as written is in the file. Also with perfmap= on the same full disk, whose map must
end on a whole line (no torn last line).
"""
import re

from support.checks import check, log
from support.output import agent_lines, dumps_in, read_stats
from support.prereq import require_root
from support.procs import mount_tmpfs

ROUNDS = 20000


def test_disk_full(ctx, cleanup) -> None:
    require_root("tmpfs mounts")
    expected = ctx.expected_output(ROUNDS)
    for variant, extra in (("dump", ""), ("dump+perfmap", ",perfmap={mnt}")):
        mnt = ctx.work / f"full-{variant.replace('+', '-')}"
        mount_tmpfs(cleanup, mnt, "size=256k,mode=0755")
        stats_path = ctx.work / f"stats-{variant.replace('+', '-')}.json"
        gate = ctx.work / f"gate-{variant.replace('+', '-')}"
        gate.touch()  # no pause: phase 2 runs at once, so loads keep coming while the disk is full
        r = ctx.run_java(f"dir={mnt},stats={stats_path}" + extra.format(mnt=mnt), "Work", str(ROUNDS), "return",
                         str(gate))
        stderr = r.stderr.decode("utf-8", "replace")
        what = f"disk full ({variant})"
        check(r.returncode == 0, f"{what}: JVM exit {r.returncode}", stderr)
        check(r.stdout.decode().splitlines() == expected, f"{what}: program output changed", stderr)

        lines = agent_lines(r.stderr)
        failing = [line for line in lines if "cannot write" in line and "jit-" in line]
        check(len(failing) == 1, f"{what}: expected exactly one 'cannot write' warning, got {len(failing)}", stderr)
        check("No space left on device" in failing[0], f"{what}: the warning should name the cause", stderr)
        again = [line for line in lines if line.endswith(" works again")]
        check(len(again) <= 1, f"[works-again-repeats] {what}: {len(again)} 'works again' lines while the disk "
              f"stayed full ({len(lines)} agent lines in all)", stderr)
        others = [line for line in lines if line not in failing and line not in again]
        if "perfmap" in variant:
            # One warning for the perf map too, at most.
            check(len(others) <= 1 and all("perf-" in line for line in others),
                  f"{what}: unexpected agent lines {others}", stderr)
        else:
            check(others == [], f"{what}: unexpected agent lines {others}", stderr)

        stats = read_stats(stats_path)
        lost = stats["lost"]
        check(lost["write_error"] > 0, f"{what}: stats lost.write_error should be > 0: {lost}")
        check(lost["total"] == lost["write_error"] + lost["after_close"], f"{what}: only write errors expected: {lost}")

        dumps = dumps_in(mnt)
        check(len(dumps) == 1, f"{what}: expected one dump in {mnt}")
        d = ctx.assert_valid(dumps[0], what)
        written = stats["written"]
        check(len(d.loads) == written["code_loads"],
              f"{what}: dump has {len(d.loads)} CODE_LOAD, stats say {written['code_loads']} written")
        check(d.counts["DEBUG_INFO"] == written["debug_info"],
              f"{what}: dump has {d.counts['DEBUG_INFO']} DEBUG_INFO, stats say {written['debug_info']}")
        ev = stats["events"]
        produced = ev["compiled_method_load"] + ev["dynamic_code_generated"] - ev["duplicate_loads"]
        check(written["code_loads"] + lost["write_error"] <= produced,
              f"{what}: written + lost exceeds the events: {stats}")
        check(written["code_loads"] + lost["write_error"] >= ev["compiled_method_load"],
              f"{what}: some compiled methods are neither written nor counted lost: {stats}")
        if "perfmap" in variant:
            check_perf_map_whole(mnt, what)
        log(f"{what}: {len(d.loads)} loads written, {lost['write_error']} lost to ENOSPC, file {d.size} bytes, "
               f"closed={d.closed}")


def check_perf_map_whole(directory, what: str) -> None:
    """The perf map on the full disk ends on a whole line, and every line is `START SIZE NAME`
    (a torn last line, `7fc5b942e9c0 170 java.util.`, is what perf would read as a wrong symbol)."""
    maps = sorted(directory.glob("perf-*.map"))
    check(len(maps) == 1, f"{what}: expected one perf map in {directory}, found {maps}")
    text = maps[0].read_bytes()
    check(text == b"" or text.endswith(b"\n"),
          f"[perfmap-torn-line] {what}: the perf map ends in a torn line: {text[-120:]!r}")
    bad = [line for line in text.splitlines() if not re.fullmatch(rb"[0-9a-f]+ [0-9a-f]+ \S.*", line)]
    check(not bad, f"{what}: perf map lines that are not START SIZE NAME: {bad[:5]}")

