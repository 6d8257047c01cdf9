"""Bad options: every option with a malformed, empty, out-of-range, duplicated or unknown value,
very long strings and non-UTF-8 bytes, from each option source (-agentpath, the environment
variable, a config file).

For each bad key the agent prints exactly one line naming the option and its accepted values,
then one line saying it is disabled; the JVM runs the workload to the end with its output
intact and exit code 0, and no output directory is created. With `strict` the JVM refuses to
start (non-zero exit) instead.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from support.checks import check, log
from support.output import agent_lines, dumps_in

ROUNDS = "3000"

BOOL = "on, off"
# key -> (bad values, words the message must contain besides the key)
MATRIX = {
    "dir": ([b"", b"x" * 5000], "a directory path"),
    "lines": ([b"", b"maybe", b"ON", b"2"], BOOL),
    "code": ([b"", b"nope"], BOOL),
    "inline": ([b"", b"-1"], BOOL),
    "backdate": ([b"", b"y"], BOOL),
    "strict": ([b"", b"perhaps"], BOOL),
    "names": ([b"", b"cpp", b"JAVA"], "java, jvm, simple"),
    "budget": ([b"", b"1K", b"63K", b"255K", b"5G", b"12X", b"-1", b"1.5M", b"99999999999999999999999", b"M"],
               "a size from 256K to 4G"),
    "overflow": ([b"", b"block"], "drop, wait"),
    "wait_ms": ([b"", b"10001", b"-1", b"abc", b"1e3"], "milliseconds from 0 to 10000"),
    "stats": ([b""], "stderr or a file path"),
    "log": ([b"", b"verbose", b"WARN"], "error, warn, info, debug"),
    "perfmap": ([b"", b"relative/dir", b"maybe"], "on, off, or an absolute directory path"),
    "mode": ([b"", b"0400", b"999", b"0x1ff", b"07777", b"01600", b"rw"], "octal file mode with owner read/write"),
    "flush_ms": ([b"", b"0", b"1001"], "milliseconds from 1 to 1000"),
    "cache": ([b"", b"1048577", b"x", b"-5"], "a number of methods from 0 (off) to 1048576"),
    "config": ([b""], "a file path"),
}
UNKNOWN = [b"colour=red", b"DIR=/tmp", b"=x", b"dir_=1", b"\xff\xfe=1", b"k" * 70000 + b"=1"]
NON_UTF8_VALUES = {"names": b"\xc3\x28", "dir": b"\xff/\xfe", "budget": b"64\xe2\x82\xacM"}



def printable(raw: bytes, limit: int = 80) -> str:
    """What the agent prints for `raw` (options.cc Printable)."""
    out = "".join(chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}" for b in raw[:limit])
    return out + ("..." if len(raw) > limit else "")


class Runner:
    def __init__(self, ctx):
        self.ctx = ctx
        self.n = 0
        self.expected = ctx.expected_result(int(ROUNDS))
        # Two JVMs at a time: each run is short and mostly start-up.
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.futures = []
        self.lock = threading.Lock()

    def disabled(self, name: str, cmdline: bytes, bad_lines: list, env: dict | None = None,
                 config: bytes | None = None) -> None:
        """Runs the JVM with `cmdline` (a valid dir= is appended first); expects one message per entry of
        `bad_lines` (each a list of substrings that line must contain), the 'disabled' line, and a JVM that
        finished normally with the agent off. Runs in the pool; wait() collects the verdicts."""
        with self.lock:
            self.n += 1
            n = self.n
        self.futures.append(self.pool.submit(self._disabled, n, name, cmdline, bad_lines, env, config))

    def wait(self) -> None:
        for future in self.futures:
            future.result()  # re-raises the first failure
        self.futures = []

    def _disabled(self, n: int, name: str, cmdline: bytes, bad_lines: list, env: dict | None,
                  config: bytes | None) -> None:
        out_dir = self.ctx.work / f"case{n}"
        options = b"dir=" + os.fsencode(out_dir) + (b"," + cmdline if cmdline else b"")
        run_env = dict(env or {})
        if config is not None:
            cfg = self.ctx.work / f"case{n}.conf"
            cfg.write_bytes(config)
            options += b",config=" + os.fsencode(cfg)
        r = self.ctx.run_java(options, "Work", ROUNDS, env={k: v for k, v in run_env.items()})
        stderr = r.stderr.decode("utf-8", "replace")
        lines = agent_lines(r.stderr)
        what = f"[{name}] options {cmdline[:120]!r}"
        check(r.returncode == 0, f"{what}: JVM exit {r.returncode}, expected 0 (agent disabled, JVM runs)", stderr)
        check(r.stdout.decode().splitlines()[:1] == [self.expected],
              f"{what}: program output changed: {r.stdout[:200]!r}", stderr)
        check(len(stderr.splitlines()) == len(lines),
              f"{what}: stderr has lines that are not agent messages (a message broken over lines?)", stderr)
        check(len(lines) == len(bad_lines) + 1,
              f"{what}: expected {len(bad_lines)} error line(s) + 1 'disabled' line, got {len(lines)}", stderr)
        for want, line in zip(bad_lines, lines):
            for piece in want:
                check(piece in line, f"{what}: message lacks {piece!r}: {line!r}", stderr)
        check("the agent is disabled; the JVM runs on" in lines[-1], f"{what}: no 'disabled' line", stderr)
        check(not out_dir.exists(), f"{what}: the disabled agent created {out_dir}")
        check(len(r.stderr) < 4096, f"{what}: {len(r.stderr)} bytes of stderr for one bad option", stderr[:4000])


def test_bad_options(ctx) -> None:
    run = Runner(ctx)

    # 1. Every key, every bad value, on the command line.
    cases = 0
    for key, (values, accepted) in MATRIX.items():
        for value in values:
            run.disabled(f"{key}={value[:20]!r}", key.encode() + b"=" + value,
                         [[f"for {key}", "accepted: " + accepted, f"'{printable(value)}'"]])
            cases += 1

    # 2. Unknown keys (including empty, case variants, non-UTF-8, 70000 bytes, a space inside).
    for item in UNKNOWN:
        key = item.split(b"=")[0].strip()
        run.disabled(f"unknown {item[:20]!r}", item, [[f"unknown option '{printable(key)}'", "known: dir, lines"]])
    # 3. Non-UTF-8 values and a very long value.
    for key, value in NON_UTF8_VALUES.items():
        want = [f"for {key}", "accepted"]
        if key != "dir":
            want.append(printable(value))
        if key == "dir":
            continue  # any bytes are a valid path; covered by the long-path case below
        run.disabled(f"non-utf8 {key}", key.encode() + b"=" + value, [want])
    run.disabled("space inside", b" names = jvm x=y ", [["bad value 'jvm x=y' for names"]])
    run.disabled("long value", b"names=" + b"j" * 100000, [["for names", "'" + "j" * 80 + "...'"]])

    # 4. Several bad keys at once: one line each, in order, valid keys in between still fine.
    run.disabled("several", b"names=x,lines=on,budget=1,zzz=1,mode=0",
                 [["for names"], ["for budget"], ["unknown option 'zzz'"], ["for mode"]])

    # 5. Duplicated keys: later wins; a bad duplicate is still reported even after a good one.
    run.disabled("duplicate bad after good", b"names=jvm,names=bogus", [["'bogus' for names"]])
    run.disabled("duplicate bad before good", b"names=bogus,names=jvm", [["'bogus' for names"]])
    a, b = ctx.work / "dup-a", ctx.work / "dup-b"
    r = ctx.run_java(f"dir={a},log=error,dir={b},log=info", "Work", ROUNDS)
    check(r.returncode == 0 and not a.exists() and len(dumps_in(b)) == 1,
          "duplicated dir=: the last one should win", r.stderr.decode())
    check(any("writing" in line for line in agent_lines(r.stderr)),
          "duplicated log=: the last one (info) should win", r.stderr.decode())

    # 6. The other sources: the environment variable and a config file, each message says where.
    run.disabled("env", b"", [["JITDUMPAGENT_OPTIONS: ", "for names", "java, jvm, simple"]],
                 env={"JITDUMPAGENT_OPTIONS": "names=nope"})
    run.disabled("env non-utf8", b"", [["JITDUMPAGENT_OPTIONS: ", "unknown option '\\xff'"]],
                 env={"JITDUMPAGENT_OPTIONS": os.fsdecode(b"\xff=1")})
    run.disabled("config file", b"", [["in ", ".conf: ", "for budget"], ["in ", ".conf: ", "unknown option 'what'"]],
                 config=b"# comment\nbudget = 1\n\nlines=on # fine\nwhat=ever\n")
    run.disabled("config file binary", b"", [["in ", ".conf: "]], config=b"\x00\xff\xfe\x01" * 4)
    run.disabled("config missing", b"config=/nonexistent/faults.conf",
                 [["cannot read config file '/nonexistent/faults.conf'"]])
    run.disabled("config-path-with-newline", b"config=/nonexistent/a\nb", [["cannot read config file"]])
    # A valid config file whose values the command line overrides: no message at all.
    cfg = ctx.work / "good.conf"
    cfg.write_text("names=bogus\n")
    r = ctx.run_java(f"dir={ctx.work / 'good'},config={cfg}", "Work", ROUNDS,
                     env={"JITDUMPAGENT_OPTIONS": "names=jvm"})
    lines = agent_lines(r.stderr)
    check(len(lines) == 2 and "in " + str(cfg) in lines[0] and "disabled" in lines[1],
          "a bad config value is reported even when a later source overrides it", r.stderr.decode())

    # 7. help: prints the help text, the JVM runs, nothing is written.
    out = ctx.work / "help"
    r = ctx.run_java(f"help,dir={out}", "Work", ROUNDS)
    check(r.returncode == 0 and b"Usage: java -agentpath:" in r.stderr and not out.exists(),
          "help: expected the usage text and no output", r.stderr.decode())
    check(r.stdout.decode().splitlines()[:1] == [run.expected], "help: program output changed")

    # 8. strict: a bad option (or an output directory that cannot be made) stops the JVM.
    r = ctx.run_java(f"strict,names=x,dir={ctx.work / 'strict'}", "Work", ROUNDS)
    stderr = r.stderr.decode()
    check(r.returncode != 0, "strict + bad option: the JVM should refuse to start", stderr)
    check("'x' for names" in stderr and "strict: refusing to start" in stderr and b"RESULT" not in r.stdout,
          "strict + bad option: expected the reason and no program output", stderr)
    blocker = ctx.work / "not-a-dir"
    blocker.write_text("a file where the directory should be\n")
    r = ctx.run_java(f"strict,dir={blocker}/sub", "Work", ROUNDS)
    check(r.returncode != 0 and b"RESULT" not in r.stdout and "cannot create output directory" in r.stderr.decode(),
          "strict + unusable dir: the JVM should refuse to start", r.stderr.decode())
    r = ctx.run_java(f"strict,dir={ctx.work / 'strict-ok'}", "Work", ROUNDS)
    check(r.returncode == 0 and len(dumps_in(ctx.work / "strict-ok")) == 1,
          "strict with good options: the JVM runs and the dump is written", r.stderr.decode())
    r = ctx.run_java(f"strict=off,names=x,dir={ctx.work / 'strict-off'}", "Work", ROUNDS)
    check(r.returncode == 0, "strict=off + bad option: the JVM runs", r.stderr.decode())

    run.wait()
    log(f"{cases} bad values and {run.n - cases} other bad option sets rejected with one line per bad key")
    log(f"{run.n} disabled-agent runs")
