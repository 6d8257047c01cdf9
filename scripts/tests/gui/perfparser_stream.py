"""Reads the stream hotspot-perfparser hands to the Hotspot GUI: what the GUI shows, as data.

Hotspot runs its parser (`hotspot-perfparser --input perf.data ...`) and reads its standard
output: the magic "QPERFSTREAM\\0", a little-endian qint32 QDataStream version, then messages,
each a little-endian qint32 length and a big-endian QDataStream payload whose first byte is the
event type. Hotspot 1.3's parser (Debian 12) writes, among others:
  StringDefinition (5):   qint32 id, QByteArray text
  LocationDefinition (3): qint32 id, quint64 address, qint32 file, quint32 pid, qint32 line,
                          qint32 column, qint32 parent location
  SymbolDefinition (4):   qint32 location id, qint32 name, qint32 binary, qint32 path, bool kernel
  Sample (13):            qint32 pid, qint32 tid, quint64 time, quint32 cpu,
                          QVector<qint32> frames (location ids, leaf first), ...
A location's symbol is the one defined for it or for the nearest parent location that has one
(the parser defines it once per function entry). Only these fields are read.
"""
from __future__ import annotations

import collections
import struct
from dataclasses import dataclass, field

MAGIC = b"QPERFSTREAM\0"
LOCATION, SYMBOL, STRING, SAMPLE = 3, 4, 5, 13


@dataclass
class Stream:
    samples: int = 0
    leaf: collections.Counter = field(default_factory=collections.Counter)       # symbol name -> self samples
    inclusive: collections.Counter = field(default_factory=collections.Counter)  # name -> samples under it
    leaf_path: collections.Counter = field(default_factory=collections.Counter)  # binary path -> self samples
    named_in: collections.Counter = field(default_factory=collections.Counter)   # path -> leaves with a name


def decode(data: bytes) -> Stream:
    if not data.startswith(MAGIC):
        raise ValueError(f"not a perfparser stream (starts {data[:16]!r})")
    strings: dict[int, str] = {}
    parent: dict[int, int] = {}
    symbol: dict[int, tuple[int, int]] = {}  # location id -> (name, path) string ids
    sample_frames: list[tuple[int, ...]] = []
    pos = len(MAGIC) + 4
    while pos + 4 <= len(data):
        (size,) = struct.unpack_from("<i", data, pos)
        msg = data[pos + 4:pos + 4 + size]
        pos += 4 + size
        if len(msg) != size:
            raise ValueError(f"truncated message at offset {pos - 4 - size}")
        kind = msg[0]
        if kind == STRING:
            sid, length = struct.unpack_from(">iI", msg, 1)
            strings[sid] = "" if length == 0xFFFFFFFF else msg[9:9 + length].decode("utf-8", "replace")
        elif kind == LOCATION:
            lid, _addr, _file, _pid, _line, _col, up = struct.unpack_from(">iQiIiii", msg, 1)
            parent[lid] = up
        elif kind == SYMBOL:
            lid, name, _binary, path = struct.unpack_from(">iiii", msg, 1)
            symbol[lid] = (name, path)
        elif kind == SAMPLE:
            (count,) = struct.unpack_from(">I", msg, 21)
            sample_frames.append(struct.unpack_from(f">{count}i", msg, 25))

    def resolve(lid: int) -> tuple[str, str]:
        seen = 0
        while lid >= 0 and lid not in symbol and seen < 64:
            lid, seen = parent.get(lid, -1), seen + 1
        name, path = symbol.get(lid, (-1, -1))
        return strings.get(name, "") or "??", strings.get(path, "")

    out = Stream(samples=len(sample_frames))
    for frames in sample_frames:
        if not frames:
            continue
        name, path = resolve(frames[0])
        out.leaf[name] += 1
        out.leaf_path[path] += 1
        if name != "??":
            out.named_in[path] += 1
        for n in {resolve(f)[0] for f in frames}:
            out.inclusive[n] += 1
    return out
