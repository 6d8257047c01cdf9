"""Root profiles another user's service: nothing that user controls reaches root's files,
terminal or environment (issue 22).

Each test creates a real unprivileged user (`jdtest-v-<pid>`, removed afterwards) whose JVM,
home directory, JDK, /tmp entries and dumps are hostile, and has root do what an SRE does:
`perf-java -p PID`, `jitdump-attach`, `jitdump report`. Each finding of the issue is one test:

1. `root-visit-chown`: the user makes /tmp/perf-java-<pid> first, with `jit` a symlink to a
   root-only directory; root's `perf-java -p PID -o /tmp/perf-java-<pid>` must not hand that
   directory to the user (it refuses a run directory that exists).
2. `root-visit-report-links`: links at folded.txt, summary.txt and command in a run directory
   the user made first, and in a directory root's `jitdump report -o` writes into: root's files
   behind them unchanged (the run directory is refused; report outputs replace the links, and
   still write to a device such as /dev/null as it is).
3. `root-visit-inject`: the user's watcher plants jitted-<pid>-0..3000.so links to a root file in
   RUN/jit (the user's, by design) before root's `perf-java -p --inject`: the root file is
   unchanged, perf inject wrote its images into a RUN/jit of root's, the links are left alone.
4. `root-visit-attach`: a JVM started from a JDK copied into the user's home, whose `jcmd` is
   the user's program (it logs its environment and pushes a command into its terminal with
   TIOCSTI); root runs `perf-java -p` from a terminal with a secret in its environment and no JDK
   on PATH: the user's program never runs, nothing reaches the terminal, the profile names Java.
5. `root-visit-report-fifo`: the user replaces her dump by a FIFO, then by a link to a root
   secret: root's `jitdump report` neither hangs nor prints a byte of the secret.
6. `root-visit-report-shrink`: the user cuts her 200 MB dump while root's report reads it: no
   SIGBUS; and a report with a 64 MiB dump budget stays within it (peak RSS), saying so.
7. `root-visit-markers`: 2,000 and 8,000 exec+marker pairs of one pid: the report's time grows
   about linearly (8,000 take less than 8x the time of 2,000, plus a second).
8. `root-visit-stale-socket`: root's attach socket at the user's JVM's pid, as a root JVM killed
   with an earlier turn of that pid leaves it (the user's JVM cannot remove it from the sticky
   /tmp): `jitdump-attach` fails naming the socket, its owner and the command that removes it;
   once removed, the attach works.
"""
from __future__ import annotations

import fcntl
import os
import pty
import pwd
import shutil
import signal
import socket
import stat
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest

from support import perf
from support.checks import check, log
from support.jvm import wait_line
from support.prereq import require_command, require_root

MAGIC = 0x4A695444


class User:
    """A real unprivileged user made for one test, with a home directory in /tmp."""

    def __init__(self, name: str, home: Path):
        self.name = name
        entry = pwd.getpwnam(name)
        self.uid, self.gid, self.home = entry.pw_uid, entry.pw_gid, home

    def prefix(self) -> list:
        return ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", "--"]

    def env(self) -> dict:
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LC_ALL": "C"}

    def run(self, *command, check_rc: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(self.prefix() + [str(c) for c in command], capture_output=True, text=True,
                           env=self.env(), cwd=self.home, timeout=120)
        if check_rc:
            check(r.returncode == 0, f"as {self.name}: {command} failed: {r.stdout}{r.stderr}")
        return r

    def sh(self, script: str) -> subprocess.CompletedProcess:
        return self.run("sh", "-c", script)

    def spawn(self, command: list, out: Path) -> subprocess.Popen:
        with open(out, "wb") as f:
            return subprocess.Popen(self.prefix() + [str(c) for c in command], stdout=f, stderr=subprocess.STDOUT,
                                    env=self.env(), cwd=self.home)


@pytest.fixture
def alice(cleanup):
    require_root("creating a user, profiling its JVM as root")
    require_command("useradd", "passwd")
    require_command("setpriv", "util-linux")
    name = f"jdtest-v-{os.getpid()}"
    home = Path(f"/tmp/{name}-home")
    subprocess.run(["userdel", name], capture_output=True)
    shutil.rmtree(home, ignore_errors=True)
    for attempt in range(20):  # other tests may hold /etc/passwd's lock for a moment
        r = subprocess.run(["useradd", "-M", "-d", str(home), "-s", "/bin/sh", name], capture_output=True, text=True)
        if r.returncode == 0 or "lock" not in r.stderr:
            break
        time.sleep(0.5)
    check(r.returncode == 0, f"useradd {name}: {r.stderr}")
    def remove_user():
        for attempt in range(20):
            if subprocess.run(["userdel", name], capture_output=True).returncode not in (1, 10):  # 1, 10: files locked
                return
            time.sleep(0.5)
    cleanup.add(remove_user)
    cleanup.remove(Path(f"/tmp/hsperfdata_{name}"))
    home.mkdir(mode=0o755)
    user = User(name, home)
    os.chown(home, user.uid, user.gid)
    cleanup.remove(home)
    return user


def start_spin(ctx, user: User, cleanup, seconds: int = 120, java: str | None = None, agent: str | None = None):
    """The Spin service as `user` (classes from the build, readable by all); returns once it is warm."""
    command = [java or ctx.jvm.java]
    if agent is not None:
        command.append(f"-agentpath:{ctx.agent}={agent}")
    command += ["-XX:-UsePerfData", "-cp", ctx.jvm.classes, "Spin", str(seconds)]
    out = user.home / f"spin-{len(list(user.home.glob('spin-*.out')))}.out"
    proc = user.spawn(command, out)
    cleanup.kill(proc)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "READY" not in out.read_text(errors="replace"):
        check(proc.poll() is None, f"the service died: {out.read_text(errors='replace')[-1500:]}")
        time.sleep(0.05)
    check("READY" in out.read_text(errors="replace"), "the service did not get warm")
    return proc


def perf_java(ctx, *args, env=None, timeout=300, **kwargs) -> subprocess.CompletedProcess:
    command = [str(ctx.scripts / "bin" / "perf-java"), *[str(a) for a in args]]
    r = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                       env=env or perf.env(ctx.work / "home"), **kwargs)
    log(f"$ perf-java {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}{r.stderr}".rstrip())
    return r


def fingerprint(p: Path) -> tuple:
    st = os.lstat(p)
    return (p.read_bytes() if p.is_file() else None, st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns)


def root_file(path: Path, text: str) -> tuple:
    path.write_text(text)
    os.chmod(path, 0o600)
    return fingerprint(path)


def dump_bytes(pid: int, loads, debug_file: bytes = b"") -> bytes:
    """A jitdump (header pid `pid`) with a CODE_LOAD per (addr, size, name), each with a DEBUG_INFO
    of four rows in `debug_file` when given."""
    out = bytearray(struct.pack("<IIIIIIQQ", MAGIC, 1, 40, 62, 0, pid, 1, 0))
    for index, (addr, size, name) in enumerate(loads):
        if debug_file:
            body = struct.pack("<QQ", addr, 4)
            for k in range(4):
                body += struct.pack("<Qii", addr + k, 10 + k, 0) + debug_file + b"\0"
            out += struct.pack("<IIQ", 2, 16 + len(body), 2) + body
        body = struct.pack("<IIQQQQ", pid, pid, addr, addr, size, index) + name + b"\0" + b"\xc3" * size
        out += struct.pack("<IIQ", 0, 16 + len(body), 2) + body
    return bytes(out)


def marker_script(pid: int, dump: Path, pairs: int, addr: int = 0x7F0000001000) -> str:
    """perf script text: `pairs` times an exec of `pid`, its agent mapping `dump`, and one sample
    at `addr` (what a program that re-execs itself, mapping its dump each time, records)."""
    lines = []
    t = 1.0
    for _ in range(pairs):
        lines.append(f"svc {pid}/{pid} {t:.9f}: PERF_RECORD_COMM exec: svc:{pid}/{pid}")
        lines.append(f"svc {pid}/{pid} {t + 0.0001:.9f}: PERF_RECORD_MMAP2 {pid}/{pid}: "
                     f"[0x7f00aaaa0000(0x1000) @ 0 00:00 0 0]: r-xp {dump}")
        lines.append(f"svc {pid}/{pid} {t + 0.0002:.9f}: 1000000 cpu-clock:")
        lines.append(f"\t{addr:x} [unknown] (//anon)")
        t += 0.001
    return "\n".join(lines) + "\n"


def report(ctx, *args, timeout=120, wrapper=()) -> subprocess.CompletedProcess:
    return subprocess.run([*wrapper, str(ctx.tool.path), "report", *[str(a) for a in args]], capture_output=True,
                          text=True, errors="replace", timeout=timeout)


def jit_named(run_dir: Path, pid: int) -> float:
    import json
    summary = json.loads((run_dir / "summary.json").read_text())
    jvms = [p for p in summary["processes"] if p["jvm"] and p["pid"] == pid]
    check(len(jvms) == 1, f"summary.json has JVM {pid}: {summary['processes']}")
    return jvms[0]["jit_named_percent"]


def test_root_visit_chown(ctx, alice, cleanup):
    perf.require_sampling()
    victim = ctx.work / "root-only"
    victim.mkdir(mode=0o700)
    os.chmod(victim, 0o700)
    before = fingerprint(victim)
    jvm = start_spin(ctx, alice, cleanup)
    run_dir = Path(f"/tmp/perf-java-{jvm.pid}")  # the name perf-java used to suggest
    shutil.rmtree(run_dir, ignore_errors=True)
    cleanup.remove(run_dir)
    alice.sh(f"mkdir {run_dir} && ln -s {victim} {run_dir}/jit")
    r = perf_java(ctx, "-q", "-p", jvm.pid, "-o", run_dir, "-d", "1")
    check(fingerprint(victim) == before, f"[chown-followed] root's 0700 directory {victim} changed hands or mode: "
          f"{os.stat(victim)}", r.stderr)
    check(r.returncode != 0 and "already exists" in r.stderr, "perf-java should refuse a run directory that exists",
          r.stderr)
    check(not (run_dir / "perf.data").exists(), "something was recorded into the user's directory")
    log(f"refused: {r.stderr.strip().splitlines()[-1]}")


def test_root_visit_report_links(ctx, alice, cleanup):
    perf.require_sampling()
    victims = {name: ctx.work / f"victim-{name}" for name in ("folded.txt", "summary.txt", "command")}
    before = {name: root_file(path, f"root's own {name}\n") for name, path in victims.items()}
    jvm = start_spin(ctx, alice, cleanup)
    run_dir = Path(f"/tmp/perf-java-{jvm.pid}-links")
    shutil.rmtree(run_dir, ignore_errors=True)
    cleanup.remove(run_dir)
    alice.sh(f"mkdir {run_dir} && " + " && ".join(f"ln -s {path} {run_dir}/{name}" for name, path in victims.items()))
    r = perf_java(ctx, "-q", "-p", jvm.pid, "-o", run_dir, "-d", "1")
    for name, path in victims.items():
        check(fingerprint(path) == before[name], f"[report-through-link] root's {path.name} was written through the "
              f"user's link {run_dir / name}: {path.read_text()[:200]!r}", r.stderr)
    check(r.returncode != 0, "perf-java should refuse the user's run directory", r.stderr)
    # jitdump report itself, told to write into a directory the user can write: links replaced, not followed.
    out = alice.home / "out"
    alice.sh(f"mkdir {out} && " + " && ".join(f"ln -s {victims[n]} {out}/{n}" for n in ("folded.txt",)) +
             f" && ln -s {victims['summary.txt']} {out}/summary.json && ln -s {victims['command']} {out}/srcline.txt")
    script = ctx.work / "script.txt"
    script.write_text("sleep 7/7 1.000000000: 1000000 cpu-clock:\n\tffffffff81000000 do_idle ([kernel.kallsyms])\n")
    r = report(ctx, "--script", script, "-q", "-o", out)
    for name, path in victims.items():
        check(fingerprint(path) == before[name], f"[report-output-through-link] jitdump report -o wrote root's "
              f"{path.name} through a link", r.stderr)
    check(r.returncode == 0 and not (out / "folded.txt").is_symlink() and (out / "folded.txt").is_file(),
          "jitdump report -o should replace the links with its outputs", r.stderr)
    # What is not replaced: a device (and whatever a link of root's leads to).
    r = report(ctx, "--script", script, "-q", "--folded", "/dev/null", "--srcline", "/dev/stdout")
    check(r.returncode == 0 and os.path.exists("/dev/null") and stat.S_ISCHR(os.stat("/dev/null").st_mode)
          and "samples" in r.stdout, "--folded /dev/null --srcline /dev/stdout write to the device", r.stderr)


def test_root_visit_inject(ctx, alice, cleanup):
    perf.require_sampling()
    victim = ctx.work / "root-file"
    before = root_file(victim, "root's file, not an ELF image\n")
    base = Path(f"/tmp/jdtest-inject-{os.getpid()}")
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(mode=0o755)
    cleanup.remove(base)
    run_dir = base / "run"
    jvm = start_spin(ctx, alice, cleanup)
    # The user's watcher: as soon as RUN/jit appears (hers, where her JVM writes), links at every
    # name perf inject will write.
    plant = (f"import os, time\n"
             f"while not os.access('{run_dir}/jit', os.W_OK): time.sleep(0.01)\n"
             f"for i in range(3001): os.symlink('{victim}', '{run_dir}/jit/jitted-{jvm.pid}-%d.so' % i)\n"
             f"print('planted')\n")
    watcher = alice.spawn(["python3", "-c", plant], alice.home / "watcher.out")
    cleanup.kill(watcher)
    r = perf_java(ctx, "-q", "-p", jvm.pid, "-o", run_dir, "-d", "2", "--inject")
    watcher.wait(timeout=60)
    check("planted" in (alice.home / "watcher.out").read_text(), "the watcher did not plant its links")
    check(fingerprint(victim) == before, f"[inject-through-link] perf inject wrote root's {victim.name} through the "
          f"user's jitted-*.so links: {victim.read_bytes()[:16]!r}", r.stderr)
    check(r.returncode == 0, f"perf-java -p --inject: exit {r.returncode}", r.stderr)
    images = [p for p in (run_dir / "jit").glob(f"jitted-{jvm.pid}-*.so") if not p.is_symlink()]
    check(images and all(p.stat().st_uid == 0 for p in images), "perf inject wrote no images into root's RUN/jit")
    check((run_dir / "jit").stat().st_uid == 0, "RUN/jit should be root's copy for perf inject")
    moved = run_dir / f"jit-uid{alice.uid}"
    links = list(moved.glob("jitted-*.so"))
    check(len(links) == 3001 and all(p.is_symlink() for p in links), "the user's links should be left where they were")
    check((run_dir / "report.txt").read_text().count("Spin.") > 0, "perf report of the injected data names Spin")
    log(f"perf inject wrote {len(images)} images into root's {run_dir}/jit; the user's 3001 links untouched")


def jdk_copy(jdk_home: Path, user: User) -> Path:
    """The JDK under test as a user who unpacked her own: a tree of links to it in her home,
    with a real copy of bin/java (so the JVM's executable is hers) and her own bin/jcmd."""
    home = user.home / "jdk"
    home.mkdir()
    for entry in jdk_home.iterdir():
        if entry.name != "bin":
            (home / entry.name).symlink_to(entry.resolve())
    (home / "bin").mkdir()
    for tool in (jdk_home / "bin").iterdir():
        if tool.name not in ("java", "jcmd"):
            (home / "bin" / tool.name).symlink_to(tool.resolve())
    shutil.copy2((jdk_home / "bin" / "java").resolve(), home / "bin" / "java")
    log_file = user.home / "jcmd-ran.env"
    (home / "bin" / "jcmd").write_text(
        "#!/bin/sh\n"
        f"env > {log_file}\n"
        # Push a command into the caller's terminal: what a hostile jcmd does with root's tty.
        "python3 -c 'import fcntl, termios\n"
        "for c in b\"touch /tmp/jdtest-pwned\\n\": fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))' "
        f"2> {user.home}/jcmd-tiocsti.err\n"
        "exit 1\n")
    os.chmod(home / "bin" / "jcmd", 0o755)
    subprocess.run(["chown", "-R", "-h", f"{user.uid}:{user.gid}", str(home)], check=True)
    return home


def no_jdk_path(work: Path) -> str:
    """A PATH with everything of /usr/bin but the JDK's commands."""
    bin_dir = work / "no-jdk-bin"
    bin_dir.mkdir()
    for entry in os.listdir("/usr/bin"):
        target = os.path.realpath(f"/usr/bin/{entry}")
        if not target.startswith("/usr/lib/jvm/"):
            (bin_dir / entry).symlink_to(f"/usr/bin/{entry}")
    return f"{bin_dir}:/usr/sbin:/sbin"


@pytest.mark.meson(every_jdk=True)
def test_root_visit_attach(ctx, alice, cleanup):
    perf.require_sampling()
    require_command("python3", "python3")
    jdk = jdk_copy(Path(ctx.jvm.jdk.home), alice)
    jvm = start_spin(ctx, alice, cleanup, java=str(jdk / "bin" / "java"))
    check(os.readlink(f"/proc/{jvm.pid}/exe") == str(jdk / "bin" / "java"), "the JVM does not run the user's java")
    run_dir = Path(f"/tmp/jdtest-attach-{os.getpid()}")
    shutil.rmtree(run_dir, ignore_errors=True)
    cleanup.remove(run_dir)
    Path("/tmp/jdtest-pwned").unlink(missing_ok=True)
    env = perf.env(ctx.work / "home", PATH=no_jdk_path(ctx.work), JDTEST_ROOT_SECRET="s3cr3t-of-root")
    env.pop("JAVA_HOME", None)
    check(shutil.which("jcmd", path=env["PATH"]) is None and shutil.which("java", path=env["PATH"]) is None,
          "the PATH still has a JDK")
    master, slave = pty.openpty()

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    try:
        p = subprocess.Popen([str(ctx.scripts / "bin" / "perf-java"), "-q", "-p", str(jvm.pid), "-o", str(run_dir), "-d", "2"],
                             stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                             preexec_fn=controlling_terminal)
        cleanup.kill(p)
        out, err = p.communicate(timeout=300)
        os.set_blocking(master, False)
        try:
            typed = os.read(master, 65536)
        except BlockingIOError:
            typed = b""
    finally:
        os.close(master)
        os.close(slave)
    log(f"perf-java -p (JDK in the user's home, no JDK on PATH): exit {p.returncode}\n{out}{err}")
    ran = alice.home / "jcmd-ran.env"
    check(not ran.exists(), "[user-jcmd-run] root's attach ran the user's jcmd"
          + (f" with root's environment (it saw JDTEST_ROOT_SECRET)" if ran.exists() and
             "s3cr3t-of-root" in ran.read_text() else ""), err)
    check(b"touch /tmp/jdtest-pwned" not in typed and not Path("/tmp/jdtest-pwned").exists(),
          "[tiocsti] the user's program pushed input into root's terminal", typed.decode(errors="replace"))
    check(p.returncode == 0, f"perf-java -p with no JDK on PATH: exit {p.returncode}", err)
    named = jit_named(run_dir, jvm.pid)
    check(named >= 95.0, f"{named}% of the JIT samples named")
    log(f"JDK {ctx.jvm.jdk.feature} from the user's home, no jcmd anywhere: {named}% of JIT samples named")


def test_root_visit_report_fifo(ctx, alice, cleanup):
    perf.require_sampling()
    jit = alice.home / "jit"
    alice.run("mkdir", jit)
    jvm = start_spin(ctx, alice, cleanup, seconds=4, agent=f"dir={jit}")
    data = ctx.work / "perf.data"
    rec = subprocess.run(["perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "-o", data, "-p", str(jvm.pid), "--",
                          "sleep", "1"], capture_output=True, text=True, env=perf.env(ctx.work / "home"), timeout=120)
    check(rec.returncode == 0, f"perf record: {rec.stderr}")
    jvm.wait(timeout=60)
    dump = jit / f"jit-{jvm.pid}.dump"
    check(dump.is_file(), "the service's agent wrote no dump")
    r = report(ctx, data, "-q", "--srcline", ctx.work / "first.txt", timeout=120)
    check(r.returncode == 0 and "Spin." in (ctx.work / "first.txt").read_text(), "the report of the real dump", r.stderr)

    alice.sh(f"mv {dump} {jit}/moved && mkfifo {dump}")
    try:
        r = report(ctx, data, "-q", "--srcline", ctx.work / "fifo.txt", timeout=60)
    except subprocess.TimeoutExpired:
        check(False, "[fifo-hangs] jitdump report hung on the FIFO the user put at her dump path")
    check(r.returncode == 0 and "a FIFO, not a regular file" in r.stderr,
          "the FIFO should be named and left unread", r.stderr)

    secret = ctx.work / "shadow"
    secret.write_text("root:$6$SECRET-HASH-OF-ROOT:19000:0:99999:7:::\n")
    os.chmod(secret, 0o600)
    alice.sh(f"rm {dump} && ln -s {secret} {dump}")
    r = report(ctx, data, "-o", ctx.work / "link-report", timeout=60)
    written = "".join(p.read_text(errors="replace") for p in (ctx.work / "link-report").iterdir() if p.is_file()
                      and p.suffix in (".txt", ".json"))
    for leak in ("746f6f72", "SECRET-HASH", "root:$6"):
        check(leak not in r.stderr and leak not in written,
              f"[link-bytes-in-message] a byte of root's file reached the report ({leak!r})", r.stderr)
    check(r.returncode == 0 and "a symbolic link, not followed" in r.stderr, "the link should be named, not read",
          r.stderr)


def write_big_dump(path: Path, pid: int, megabytes: int) -> None:
    block = dump_bytes(pid, [(0x7F0000001000 + 64 * i, 48, b"demo.Service.handle(java.lang.String)")
                             for i in range(4096)], debug_file=b"demo/service/Service.java")
    header, body = block[:40], block[40:]
    with open(path, "wb") as f:
        f.write(header)
        for _ in range(max(1, megabytes * (1 << 20) // len(body))):
            f.write(body)


def test_root_visit_report_shrink(ctx, alice, cleanup):
    require_command("truncate", "coreutils")
    require_command("/usr/bin/time", "time")
    pid = 4000000  # no live process: only the dump's owner and the script speak for it
    jit = alice.home / "jit"
    alice.run("mkdir", jit)
    dump = jit / f"jit-{pid}.dump"
    write_big_dump(dump, pid, 200)
    os.chown(dump, alice.uid, alice.gid)
    script = ctx.work / "script.txt"
    script.write_text(marker_script(pid, dump, 1))
    size = dump.stat().st_size

    # The user cuts the dump as soon as root's report has it open or mapped.
    p = subprocess.Popen([str(ctx.tool.path), "report", "--script", str(script), "-q", "--srcline",
                          str(ctx.work / "shrink.txt")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cleanup.kill(p)
    cut = False
    deadline = time.monotonic() + 60
    while p.poll() is None and time.monotonic() < deadline and not cut:
        try:
            maps = Path(f"/proc/{p.pid}/maps").read_text()
            fds = [os.readlink(f"/proc/{p.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{p.pid}/fd")]
        except OSError:
            continue
        if str(dump) in maps or str(dump) in fds:
            alice.run("truncate", "-s", "4096", dump)
            cut = True
    out, err = p.communicate(timeout=120)
    log(f"report while the dump was cut from {size} to 4096 bytes: exit {p.returncode}\n{err}")
    check(cut, "the report finished before the user could cut the dump (make it larger)")
    check(p.returncode >= 0 and p.returncode != 135, f"[sigbus] jitdump report died of signal {-p.returncode} "
          f"(rc {p.returncode}) when the dump shrank under it", err)
    check(p.returncode == 0, f"the report should finish: exit {p.returncode}", err)

    # Memory: the dump again whole; a 64 MiB budget for decoded dumps.
    write_big_dump(dump, pid, 200)
    r = report(ctx, "--script", script, "-q", "--srcline", ctx.work / "budget.txt", "--dump-memory", "64",
               wrapper=["/usr/bin/time", "-f", "MAXRSS %M"])
    rss_kb = int(r.stderr.strip().splitlines()[-1].split()[-1]) if "MAXRSS" in r.stderr else -1
    log(f"FIGURE report of a {dump.stat().st_size >> 20} MiB dump with --dump-memory 64: peak RSS {rss_kb >> 10} MiB")
    check(r.returncode == 0 and "memory budget" in r.stderr, "the dump over the budget should be left out, saying so",
          r.stderr)
    check(0 < rss_kb < (64 + 160) * 1024, f"[memory-unbounded] peak RSS {rss_kb >> 10} MiB over a 64 MiB budget",
          r.stderr)


def test_root_visit_markers(ctx, alice):
    pid = 4000001
    jit = alice.home / "jit"
    alice.run("mkdir", jit)
    dump = jit / f"jit-{pid}.dump"
    dump.write_bytes(dump_bytes(pid, [(0x7F0000001000, 64, b"svc.Main.loop()")]))
    os.chown(dump, alice.uid, alice.gid)
    seconds = {}
    for pairs in (2000, 8000):
        script = ctx.work / f"markers-{pairs}.txt"
        script.write_text(marker_script(pid, dump, pairs))
        t0 = time.monotonic()
        r = report(ctx, "--script", script, "-q", "--folded", ctx.work / f"markers-{pairs}.out", timeout=300)
        seconds[pairs] = time.monotonic() - t0
        check(r.returncode == 0, f"{pairs} markers: exit {r.returncode}", r.stderr)
        check("svc.Main.loop" in (ctx.work / f"markers-{pairs}.out").read_text(), f"{pairs} markers: JIT frames named")
    log(f"FIGURE report time by exec+marker pairs of one pid: 2,000: {seconds[2000]:.2f} s, "
        f"8,000: {seconds[8000]:.2f} s (load {os.getloadavg()[0]:.1f})")
    check(seconds[8000] < 8 * seconds[2000] + 1.0,
          f"[markers-superlinear] 4x the markers took {seconds[8000] / max(seconds[2000], 1e-3):.1f}x the time")



def test_root_visit_stale_socket(ctx, alice, cleanup):
    jvm = start_spin(ctx, alice, cleanup)
    stale = Path(f"/tmp/.java_pid{jvm.pid}")
    check(not stale.exists(), f"{stale} exists before the first attach")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:  # root's, mode 0600: as HotSpot leaves it
        s.bind(str(stale))
    os.chmod(stale, 0o600)
    cleanup.remove(stale)
    jit = alice.home / "jit"
    alice.run("mkdir", jit)

    def attach() -> subprocess.CompletedProcess:
        r = subprocess.run([str(ctx.scripts / "bin" / "attach"), "--agent", str(ctx.agent), "--timeout", "30",
                            str(jvm.pid), f"dir={jit}"], capture_output=True, text=True, timeout=120)
        log(f"$ jitdump-attach {jvm.pid} dir={jit}: exit {r.returncode}\n{r.stdout}{r.stderr}".rstrip())
        return r

    r = attach()
    check(r.returncode != 0 and f"/tmp/.java_pid{jvm.pid} (in the JVM's mount namespace) belongs to uid 0" in r.stderr
          and f"rm /proc/{jvm.pid}/root/tmp/.java_pid{jvm.pid}" in r.stderr,
          "[stale-socket] the attach should fail naming the stale socket, its owner and how to remove it", r.stderr)
    stale.unlink()
    r = attach()
    check(r.returncode == 0 and (jit / f"jit-{jvm.pid}.dump").exists(),
          "the attach after the stale socket was removed should start the agent", r.stdout + r.stderr)
