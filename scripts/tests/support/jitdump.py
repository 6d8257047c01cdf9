"""Reading dumps: the one way the tests see what is inside a jitdump is the `jitdump` tool
(`jitdump records --json FILE`, `jitdump check FILE`), never a parser of their own. The C++ and
Java cross-check readers (cpp-tests/test_dump_reader.*, java-tests' JitDump.java) are the
deliberate exceptions.

    from support.jitdump import Tool
    dump = Tool(path).records(Path("jit-1234.dump"))
    [l.name for l in dump.loads], dump.counts["DEBUG_INFO"], dump.closed, dump.truncated_bytes
"""
from __future__ import annotations

import collections
import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

MAGIC = 0x4A695444
CODE_LOAD, CODE_MOVE, DEBUG_INFO, CODE_CLOSE, UNWINDING_INFO = ("CODE_LOAD", "CODE_MOVE", "DEBUG_INFO", "CODE_CLOSE",
                                                                "UNWINDING_INFO")


class ToolError(AssertionError):
    """The tool could not read the file at all (not a jitdump, unreadable header...)."""


class Dump:
    """What `jitdump records --json` says about one file.

    records: every record in file order, each a namespace with the JSON's fields (offset, type,
    id, total_size, timestamp, valid) and its body (load, debug_info, inline, move, unwinding).
    loads: the CODE_LOAD records flattened: a load's fields (pid, tid, code_addr, code_size,
    code_index, name, code_offset, debug_info...) next to its record's offset, total_size and
    timestamp.
    """

    def __init__(self, path: Path, data: dict):
        self.path = Path(path)
        self.json = data
        self.size = data["size"]
        self.cross_endian = data["cross_endian"]
        self.header = SimpleNamespace(**data["header"])
        self.pid = self.header.pid
        self.records = [SimpleNamespace(**r) for r in data["records"]]
        self.truncated = data["truncated"]
        self.truncated_bytes = self.truncated["bytes"] if self.truncated else 0
        self.unknown_records = data["unknown_records"]
        self.counts = collections.Counter(r.type for r in self.records)
        self.ids = collections.Counter(r.id for r in self.records)
        self.loads = [SimpleNamespace(offset=r.offset, total_size=r.total_size, timestamp=r.timestamp, **r.load)
                      for r in self.records if r.type == CODE_LOAD and getattr(r, "load", None)]

    @property
    def header_ok(self) -> bool:
        """A header perf 6.1 accepts: our magic, version 1, exactly 40 bytes, no unknown flags."""
        h = self.header
        return h.magic == MAGIC and h.version == 1 and h.total_size == 40 and h.flags in (0, 1)

    @property
    def closed(self) -> bool:
        """Ends with its CODE_CLOSE record and nothing after it."""
        return bool(self.records) and self.records[-1].type == CODE_CLOSE and self.truncated_bytes == 0

    def debug_rows(self, load) -> list:
        """The DEBUG_INFO entries [{addr, line, discrim, file}] that apply to `load` ([] if none)."""
        if load.debug_info is None:
            return []
        return self.records[load.debug_info].debug_info["entries"]

    def describe(self) -> str:
        return (f"{self.path}: size {self.size} header {vars(self.header)} records {len(self.records)} "
                f"counts {dict(self.counts)} truncated {self.truncated} "
                f"last {self.records[-1].type if self.records else None}")


class Tool:
    """The built `jitdump` command-line tool."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def run(self, *args, timeout: float = 300) -> subprocess.CompletedProcess:
        if not (self.path.is_file() and os.access(self.path, os.X_OK)):
            raise AssertionError(f"the jitdump tool is missing at {self.path}: build it "
                                 "(ninja -C BUILD jitdump/tool/jitdump)")
        return subprocess.run([str(self.path), *map(str, args)], capture_output=True, text=True, timeout=timeout,
                              errors="replace")

    def records(self, path: str | os.PathLike) -> Dump:
        r = self.run("records", "--json", path)
        if r.returncode != 0:
            raise ToolError(f"`jitdump records --json {path}` exit {r.returncode}: {r.stderr.strip()[-2000:]}")
        return Dump(Path(path), json.loads(r.stdout))

    def methods(self, path: str | os.PathLike, rc: int = 0) -> dict:
        """`jitdump methods --json FILE` (a method table, or a dump's): the JSON, exit status `rc`."""
        r = self.run("methods", "--json", path)
        if r.returncode != rc:
            raise ToolError(f"`jitdump methods --json {path}` exit {r.returncode}: {r.stderr.strip()[-2000:]}")
        return json.loads(r.stdout)

    def check(self, path: str | os.PathLike) -> subprocess.CompletedProcess:
        """`jitdump check FILE`: exit 0 valid, 1 not; problems one per line on stdout."""
        return self.run("check", path)
