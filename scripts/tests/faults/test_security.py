"""Security: planted symlinks and foreign files, file and directory modes, confinement.

The JVM's pid is known before it starts: a shell plants the trap for its own pid ($$) and then
exec's java, which keeps the pid.

1. A symlink at the dump path in a shared (1777) directory, pointing at a victim file and at a
   path that does not exist: the agent refuses with one clear error, the JVM runs, the victim is
   untouched, and nothing is created at the link's target.
2. A symlink at /tmp/perf-<pid>.map (the default perf map place): one warning, the dump is
   still written, the victim untouched.
3. A regular file of another user (nobody) at the dump path and at the perf map path: left alone.
4. Our own stale file (a previous process with the same pid): replaced. A hard link to a victim
   at the dump path: only the name is replaced, the victim's content is untouched.
5. stats= at a symlink: refused (O_NOFOLLOW); at another user's file: must not be overwritten.
6. A symlink as the output directory itself, planted by another user in a shared directory.
7. Modes: dump, perf map (also after compaction) and stats file 0600 by default; mode=0640 and
   mode=0644 honoured (under umask 022); directories the agent creates 0755 less the umask; the
   default layout's java-jit-* directory 0700.
8. Confinement (with strace): every path the agent creates, writes, renames or
   removes is in its dir=, perfmap= or stats= location.
"""
import os
import re
import shlex
import stat
import subprocess
from pathlib import Path

from support.checks import check, log
from support.jvm import clean_env
from support.output import agent_lines, dumps_in
from support.prereq import require_command, require_root

ROUNDS = 3000
NOBODY = 65534


def test_security(ctx, cleanup) -> None:
    require_root("planting files as another user, chown")
    require_command("strace", "strace", "the confinement check")
    expected = ctx.expected_result(ROUNDS)
    os.umask(0o022)
    shared = ctx.work / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    victim = ctx.work / "passwd-victim"
    victim_text = "root:x:0:0:do not touch\n"

    def fresh_victim() -> tuple:
        victim.write_text(victim_text)
        os.chmod(victim, 0o644)
        os.utime(victim, (1_000_000_000, 1_000_000_000))
        return fingerprint(victim)

    def run_planted(plant: str, options: str, env=None) -> tuple:
        """Runs `plant` (a shell snippet; $$ is the JVM's pid) then exec's the JVM."""
        cmd = ctx.java_cmd(options, "Work", str(ROUNDS))
        script = plant + "\necho $$ > " + shlex.quote(str(ctx.work / "pid")) + "\nexec " + shlex.join(cmd)
        r = subprocess.run(["sh", "-c", script], capture_output=True, timeout=120, env=clean_env(**(env or {})),
                           cwd=ctx.work)
        pid = int((ctx.work / "pid").read_text())
        stderr = r.stderr.decode("utf-8", "replace")
        check(r.returncode == 0, f"{plant!r}: JVM exit {r.returncode}", stderr)
        check(r.stdout.decode().splitlines()[:1] == [expected], f"{plant!r}: program output changed", stderr)
        return pid, stderr, agent_lines(r.stderr)

    # 1. Symlink at the dump path: to a victim, and dangling.
    for target in (victim, ctx.work / "nonexistent-target"):
        before = fresh_victim()
        if target != victim:
            target.unlink(missing_ok=True)
        pid, stderr, lines = run_planted(f"ln -s {target} {shared}/jit-$$.dump", f"dir={shared}")
        link = shared / f"jit-{pid}.dump"
        check(len(lines) == 1 and "cannot create" in lines[0] and str(link) in lines[0] and
              "not ours" in lines[0], f"dump symlink -> {target.name}: expected one error naming the path", stderr)
        check(fingerprint(victim) == before, "dump symlink: the victim was touched")
        check(not (ctx.work / "nonexistent-target").exists(), "dump symlink: the dangling link's target was created")
        check(link.is_symlink() and os.readlink(link) == str(target), "dump symlink: the planted link was changed")
        log(f"symlink at dump path -> {target.name}: {lines[0]}")
        link.unlink()

    # 2. Symlink at /tmp/perf-<pid>.map (the default perfmap directory).
    before = fresh_victim()
    out = ctx.work / "out-perfmap-link"
    record = ctx.work / "planted-map"  # written by the shell, so the link is removed even if the JVM fails

    def remove_planted() -> None:
        if record.is_file():
            p = Path(record.read_text().strip())
            if p.is_symlink():
                p.unlink()
    cleanup.add(remove_planted)
    # -f: a stale map of an earlier process with this pid may be in the way
    plant = f"ln -sfn {victim} /tmp/perf-$$.map; echo /tmp/perf-$$.map > {record}"
    pid, stderr, lines = run_planted(plant, f"dir={out},perfmap=on")
    check(len(lines) == 1 and "cannot create perf map in /tmp" in lines[0] and "not ours" in lines[0],
          "perf map symlink: expected one warning", stderr)
    check(fingerprint(victim) == before, "perf map symlink: the victim was touched")
    check(os.path.islink(f"/tmp/perf-{pid}.map") and os.readlink(f"/tmp/perf-{pid}.map") == str(victim),
          "perf map symlink: the planted link was changed")
    ctx.assert_valid(dumps_in(out)[0], "perf map symlink: the dump")
    log(f"symlink at /tmp/perf-<pid>.map: {lines[0]}")

    # 3. Another user's regular file at the dump path and at the perf map path.
    out = ctx.work / "out-foreign"
    plant = (f"mkdir -p {shared}/pm && chmod 1777 {shared}/pm && "
             f"printf 'theirs\\n' > {shared}/jit-$$.dump && chown {NOBODY} {shared}/jit-$$.dump && "
             f"printf 'theirs\\n' > {shared}/pm/perf-$$.map && chown {NOBODY} {shared}/pm/perf-$$.map")
    pid, stderr, lines = run_planted(plant, f"dir={shared},perfmap={shared}/pm")
    check(len(lines) == 1 and "not ours" in lines[0] and f"jit-{pid}.dump" in lines[0],
          "foreign dump file: expected one error", stderr)
    for p in (shared / f"jit-{pid}.dump", shared / "pm" / f"perf-{pid}.map"):
        check(p.read_text() == "theirs\n" and p.stat().st_uid == NOBODY, f"foreign file {p} was touched")
    pid, stderr, lines = run_planted(
        f"printf 'theirs\\n' > {shared}/pm/perf-$$.map && chown {NOBODY} {shared}/pm/perf-$$.map",
        f"dir={out},perfmap={shared}/pm")
    check(len(lines) == 1 and "cannot create perf map" in lines[0] and "not ours" in lines[0],
          "foreign perf map file: expected one warning", stderr)
    check((shared / "pm" / f"perf-{pid}.map").read_text() == "theirs\n", "foreign perf map file was touched")

    # 4. Our own stale file is replaced; a hard link to a victim only loses its name.
    before = fresh_victim()
    out = ctx.work / "out-stale"
    out.mkdir()
    pid, stderr, lines = run_planted(f"printf 'stale\\n' > {out}/jit-$$.dump; ln {victim} {out}/perf-$$.map",
                                     f"dir={out},perfmap={out}")
    check(lines == [], "stale own file / hard link: no message expected", stderr)
    ctx.assert_valid(out / f"jit-{pid}.dump", "stale own file replaced")
    check(fingerprint(victim)[:3] == before[:3], "hard link at the perf map path: the victim's content changed")
    check((out / f"perf-{pid}.map").stat().st_ino != victim.stat().st_ino, "hard link: perf map still the victim")

    # 5. stats= through a symlink (refused) and over another user's file.
    before = fresh_victim()
    out = ctx.work / "out-stats"
    pid, stderr, lines = run_planted(f"ln -s {victim} {shared}/stats-$$.json",
                                     f"dir={out},stats={shared}/stats-%p.json")
    check(fingerprint(victim) == before, "stats symlink: the victim was touched")
    check(len(lines) == 1 and "cannot write stats" in lines[0], "stats symlink: expected one warning", stderr)
    pid, stderr, lines = run_planted(
        f"printf 'theirs\\n' > {shared}/stats-$$.json && chown {NOBODY} {shared}/stats-$$.json",
        f"dir={out},stats={shared}/stats-%p.json")
    theirs = shared / f"stats-{pid}.json"
    check(theirs.read_text() == "theirs\n" and theirs.stat().st_uid == NOBODY,
          f"[stats-overwrites-foreign-file] stats= truncated and rewrote another user's file {theirs}", stderr)

    # 6. The output directory is a symlink another user planted in a shared directory.
    elsewhere = ctx.work / "elsewhere"
    elsewhere.mkdir()
    link_dir = shared / "jitdumps"
    pid, stderr, lines = run_planted(f"ln -s {elsewhere} {link_dir} && chown -h {NOBODY} {link_dir}",
                                     f"dir={link_dir}")
    followed = dumps_in(elsewhere)
    check(not followed, f"[dir-symlink-followed] dir= followed a symlink owned by another user ({link_dir} -> "
          f"{elsewhere}) and wrote {[p.name for p in followed]} there", stderr)
    link_dir.unlink()

    # 7. Modes.
    modes(ctx)
    # 8. Confinement.
    confinement(ctx)


def fingerprint(p: Path) -> tuple:
    st = p.stat()
    return (p.read_bytes(), stat.S_IMODE(st.st_mode), st.st_uid, st.st_mtime_ns)


def mode_of(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def modes(ctx) -> None:
    for mode_opt, want in (("", 0o600), (",mode=0640", 0o640), (",mode=0644", 0o644)):
        out = ctx.work / f"modes{want:o}" / "sub"
        stats_path = ctx.work / f"modes{want:o}-stats.json"
        r = ctx.run_java(f"dir={out},perfmap={out},stats={stats_path}{mode_opt}", "Work", str(ROUNDS))
        check(r.returncode == 0, f"mode{mode_opt}: JVM failed", r.stderr.decode())
        dump = dumps_in(out)[0]
        perfmap = next(out.glob("perf-*.map"))
        for p in (dump, perfmap, stats_path):
            check(mode_of(p) == want, f"mode{mode_opt or ' (default)'}: {p.name} has {mode_of(p):o}, want {want:o}")
        check(mode_of(out) == 0o755 and mode_of(out.parent) == 0o755, "created directories should be 0755")
        check(not list(out.glob("perf-*.map.*")), "perf map compaction left a temporary file")
    # Under a stricter umask the umask wins for every file (the perf map is rewritten at exit,
    # with fchmod, which ignores the umask).
    old = os.umask(0o077)
    try:
        out = ctx.work / "modes-umask077"
        r = ctx.run_java(f"dir={out},perfmap={out},mode=0644", "Work", str(ROUNDS))
    finally:
        os.umask(old)
    check(r.returncode == 0, "umask 077: JVM failed", r.stderr.decode())
    dump_mode, map_mode = mode_of(dumps_in(out)[0]), mode_of(next(out.glob("perf-*.map")))
    check(dump_mode == 0o600, f"umask 077 + mode=0644: dump has {dump_mode:o}, want 600 (umask applies)")
    check(map_mode == dump_mode, f"[perfmap-mode-ignores-umask] umask 077 + mode=0644: the dump is {dump_mode:o} "
          f"but the compacted perf map is {map_mode:o}")
    # The default layout: $JITDUMPDIR/.debug/jit/java-jit-YYYYMMDD.XXXXXX, private.
    base = ctx.work / "jitdumpdir"
    r = ctx.run_java("log=info", "Work", str(ROUNDS), env={"JITDUMPDIR": str(base)})
    check(r.returncode == 0, "default layout: JVM failed", r.stderr.decode())
    dirs = list((base / ".debug" / "jit").glob("java-jit-*"))
    check(len(dirs) == 1, f"default layout: expected one java-jit-* directory, got {dirs}", r.stderr.decode())
    check(mode_of(dirs[0]) == 0o700, f"default layout: {dirs[0].name} has {mode_of(dirs[0]):o}, want 700")
    check(mode_of(base / ".debug" / "jit") == 0o755, "default layout: .debug/jit should be 0755")
    check(mode_of(dumps_in(dirs[0])[0]) == 0o600, "default layout: dump should be 0600")
    log("modes: dump/perf map/stats 0600 by default, mode= honoured, dirs 0755, java-jit-* 0700")


WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")
SYSCALL = re.compile(r'^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)')


def touched_paths(log: Path, reads: bool = False) -> set:
    """Paths successfully created / opened for writing / renamed / removed in an strace -f log
    (with `reads`: every path opened at all)."""
    paths = set()
    for line in log.read_text(errors="replace").splitlines():
        m = SYSCALL.match(line)
        if not m or int(m.group(4)) < 0:
            continue
        name, args = m.group(2), m.group(3)
        # strace -y shows a directory descriptor as N</its/path>: a name relative to it is
        # joined to that path (the agent creates, links, renames and removes through them).
        strings = [name_ if name_.startswith("/") or not base else f"{base}/{name_}"
                   for base, name_ in re.findall(r'(?:\d+<([^>]*)>,\s*)?"((?:[^"\\]|\\.)*)"', args)]
        if name in ("open", "openat", "creat") and strings and (reads or name == "creat" or
                                                                 any(f in args for f in WRITE_FLAGS)):
            paths.add(strings[0])
        elif name in ("mkdir", "mkdirat", "unlink", "unlinkat", "rmdir", "link", "linkat", "symlink",
                      "symlinkat", "rename", "renameat", "renameat2", "chmod", "fchmodat", "truncate"):
            paths.update(strings)
    return paths


def confinement(ctx) -> None:
    jvm = ["-XX:-UsePerfData"]
    base_log, agent_log = ctx.work / "strace-base.log", ctx.work / "strace-agent.log"
    out, maps, stats_dir = ctx.work / "conf-out", ctx.work / "conf-maps", ctx.work / "conf-stats"
    for trace, options in ((base_log, None), (agent_log, f"dir={out},perfmap={maps},stats={stats_dir}/s.json")):
        stats_dir.mkdir(exist_ok=True)
        cmd = ["strace", "-f", "-qq", "-y", "-o", str(trace), "-e",
               "trace=open,openat,creat,mkdir,mkdirat,unlink,unlinkat,rmdir,link,linkat,symlink,symlinkat,rename,"
               "renameat,renameat2,chmod,fchmodat,truncate"] + ctx.java_cmd(options, "Work", str(ROUNDS), jvm_args=jvm)
        r = subprocess.run(cmd, capture_output=True, timeout=300, cwd=ctx.work)
        check(r.returncode == 0, "confinement: JVM under strace failed", r.stderr.decode(errors="replace"))
    allowed = (str(out), str(maps), str(stats_dir))
    baseline = {re.sub(r"\d+", "N", p) for p in touched_paths(base_log)}
    extra = sorted(p for p in touched_paths(agent_log)
                   if re.sub(r"\d+", "N", p) not in baseline and not p.startswith(allowed)
                   and not any(a.startswith(p.rstrip("/") + "/") for a in allowed))  # mkdir -p of parents
    check(extra == [], f"confinement: the agent touched paths outside dir=, perfmap=, stats=: {extra}")
    # Reads: besides its own files, the agent may read /proc/self/exe (the ELF machine for the
    # header). The JVM opens the agent library itself. glibc's free() reads
    # /proc/sys/vm/overcommit_memory when it shrinks the heap of a non-main arena (the writer
    # thread's): that read is the C library's, made on some runs and not others.
    base_reads = {re.sub(r"\d+", "N", p) for p in touched_paths(base_log, reads=True)}
    read_extra = sorted(p for p in touched_paths(agent_log, reads=True)
                        if re.sub(r"\d+", "N", p) not in base_reads and not p.startswith(allowed)
                        and p not in ("/proc/self/exe", "/proc/sys/vm/overcommit_memory", str(ctx.agent)))
    check(read_extra == [], f"confinement: the agent opened paths outside its directories: {read_extra}")
    log("confinement: every path the agent opened is under dir=, perfmap= or stats= (or /proc/self/exe)")

