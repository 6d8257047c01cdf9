"""A minimal, independent reader of perf jitdump files, for the perf test suite.

Written from perf 6.1's tools/perf/util/jitdump.[ch] (see shared/reference/perf-consumer-and-agent.md
section 2), not from the agent's code: the tests check the agent's output against what perf reads.
"""
import struct
from dataclasses import dataclass, field

MAGIC = 0x4A695444
HEADER = struct.Struct("<IIIIIIQQ")  # magic version total_size elf_mach pad1 pid timestamp flags
PREFIX = struct.Struct("<IIQ")       # id total_size timestamp
LOAD = struct.Struct("<IIQQQQ")      # pid tid vma code_addr code_size code_index
CODE_LOAD, CODE_MOVE, DEBUG_INFO, CLOSE, UNWINDING_INFO = range(5)


@dataclass
class Record:
    id: int
    offset: int
    size: int
    timestamp: int
    # CODE_LOAD
    pid: int = 0
    tid: int = 0
    vma: int = 0
    code_addr: int = 0
    code_size: int = 0
    code_index: int = 0
    name: str = ""
    code_bytes_at_end: bool = False
    # DEBUG_INFO: (addr, line, discrim, file)
    entries: list = field(default_factory=list)


@dataclass
class Dump:
    path: str
    size: int
    magic: int
    version: int
    header_size: int
    elf_mach: int
    pid: int
    timestamp: int
    flags: int
    records: list
    tail_bytes: int  # bytes after the last whole record (a truncated record)

    def loads(self):
        return [r for r in self.records if r.id == CODE_LOAD]


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HEADER.size:
        raise ValueError(f"{path}: {len(data)} bytes, shorter than the 40-byte header")
    magic, version, hsize, mach, _pad, pid, ts, flags = HEADER.unpack_from(data, 0)
    records, off = [], hsize
    # The same stop rule as perf's jit_get_next_entry: a prefix with total_size < 16, or a body
    # that cannot be read whole, ends the file silently.
    while off + PREFIX.size <= len(data):
        rid, size, rts = PREFIX.unpack_from(data, off)
        if size < PREFIX.size or off + size > len(data):
            break
        r = Record(rid, off, size, rts)
        body = off + PREFIX.size
        if rid == CODE_LOAD:
            r.pid, r.tid, r.vma, r.code_addr, r.code_size, r.code_index = LOAD.unpack_from(data, body)
            name_at = body + LOAD.size
            end = data.index(b"\0", name_at, off + size)
            r.name = data[name_at:end].decode("utf-8", "replace")
            r.code_bytes_at_end = (end + 1 + r.code_size == off + size)
        elif rid == DEBUG_INFO:
            r.code_addr, nr = struct.unpack_from("<QQ", data, body)
            p = body + 16
            for _ in range(nr):
                a, line, disc = struct.unpack_from("<Qii", data, p)
                end = data.index(b"\0", p + 16, off + size)
                r.entries.append((a, line, disc, data[p + 16:end]))
                p = end + 1
        records.append(r)
        off += size
    return Dump(path, len(data), magic, version, hsize, mach, pid, ts, flags, records, len(data) - off)
