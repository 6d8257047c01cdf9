"""What the integration tests share: the Workload program, attaching to it, what the JVM itself
says it compiled (jcmd Compiler.codelist), and reading the agent's dumps and perf maps."""
from __future__ import annotations

import os
import re
from pathlib import Path

from support.checks import check, log
from support.jitdump import MAGIC, Tool
from support.jvm import Jvm, clean_env, wait_line
from support.procs import run

# Java-style method names ("pkg.Class.method(args)"), as opposed to stub names ("Interpreter").
METHOD_NAME = re.compile(r"^[\w$./]+\.[\w$<>]+\(")
MAP_LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (\S.*)$")
CODELIST_LINE = re.compile(r"^\d+ -?\d+ \d+ (\S+) \[0x([0-9a-f]+), 0x([0-9a-f]+) - 0x([0-9a-f]+)\]")


def simple_method(name: str) -> str:
    """'Workload.mix(int)' or 'Workload.mix(I)I' -> 'Workload.mix'."""
    return name.split("(", 1)[0]


def start_workload(jvm: Jvm, work: Path, jvm_args=(), env=None, umask=None):
    """Starts `Workload 20000 STOP` and waits until it is warm: (process, pid, stop file)."""
    stop = work / "stop"
    p = jvm.start("Workload", "20000", stop, jvm_args=jvm_args, env=env, umask=umask)
    pid = int(wait_line(p, "ready").split()[1])
    return p, pid, stop


def attach(scripts: Path, agent: Path, pid: int, options: str, force=False, env=None):
    """scripts/bin/attach [--force] --agent AGENT PID OPTIONS."""
    command = [scripts / "bin" / "attach", "--agent", agent, *(["--force"] if force else []), pid, options]
    r = run(command, env=env or clean_env(), timeout=120)
    log(f"$ {' '.join(map(str, command))}\n{r.stdout}{r.stderr}".rstrip())
    return r


def codelist(jcmd: str, pid: int) -> dict:
    """{code_begin: name} of every nmethod in the code cache, from jcmd Compiler.codelist."""
    r = run([jcmd, pid, "Compiler.codelist"], env=clean_env(), timeout=60)
    check(r.returncode == 0, f"jcmd Compiler.codelist failed: {r.stdout}{r.stderr}")
    result = {}
    for line in r.stdout.splitlines():
        m = CODELIST_LINE.match(line)
        if m:
            result[int(m.group(3), 16)] = m.group(1)
    check(result, f"no nmethods parsed from: {r.stdout[:500]}")
    return result


def read_dump(tool: Tool, path: Path):
    """The dump through `jitdump records --json`, which must be whole: our header, no torn tail."""
    dump = tool.records(path)
    check(dump.header.magic == MAGIC and not dump.cross_endian, f"{path}: bad magic {dump.header.magic:#x}")
    check(dump.header.version == 1 and dump.header.total_size == 40,
          f"{path}: version {dump.header.version}, header size {dump.header.total_size}")
    check(dump.truncated is None, f"{path}: torn record at the end: {dump.truncated}")
    return dump


def exact_duplicates(loads) -> int:
    seen = set()
    dups = 0
    for load in loads:
        key = (load.code_addr, load.code_size, load.name)
        dups += key in seen
        seen.add(key)
    return dups


def read_map(path) -> list:
    """[(start, size, name)] of a perf map; every line must be well formed and terminated."""
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        text = f.read()
    check(text == "" or text.endswith("\n"), f"{path}: last line is not terminated")
    entries = []
    for number, line in enumerate(text.splitlines(), 1):
        m = MAP_LINE.match(line)
        check(m is not None, f"{path}:{number}: malformed line {line!r}")
        entries.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return entries


def check_map_file(path, mode: int) -> list:
    """A perf map as perf wants it: a regular file of ours with `mode`, no empty, overlapping or
    0x-prefixed entries, no ';' in names. Returns its entries."""
    st = os.lstat(path)
    check(os.path.isfile(path) and not os.path.islink(path), f"{path} is not a regular file")
    check(st.st_uid == os.geteuid(), f"{path} is owned by uid {st.st_uid}, not {os.geteuid()}")
    check((st.st_mode & 0o777) == mode, f"{path} has mode {st.st_mode & 0o777:o}, expected {mode:o}")
    entries = read_map(path)
    for start, size, name in entries:
        check(size > 0, f"{path}: empty range for {name}")
        check(";" not in name, f"{path}: ';' in name {name!r}")
        check(not name.startswith("0x"), f"{path}: bad name {name!r}")
    with open(path) as f:
        check("0x" not in "".join(l.split(" ", 2)[0] + l.split(" ", 2)[1] for l in f), f"{path}: 0x prefix")
    ordered = sorted(entries)
    for (a, asz, an), (b, _, bn) in zip(ordered, ordered[1:]):
        check(a + asz <= b, f"{path}: overlapping entries {an} [{a:x}+{asz:x}] and {bn} [{b:x}]")
    return entries
