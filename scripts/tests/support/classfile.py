"""What a class file says about its methods, read straight from the bytes (JVMS chapter 4): each
method's name, descriptor, bytecode length and line number table. The tests' reference for what
the agent's method table (and `jitdump report`'s interpreted frames) must say, independent of
JVMTI and of the agent."""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ClassMethod:
    name: str
    descriptor: str
    code_length: int = 0                               # 0: no Code attribute (native, abstract)
    lines: list = field(default_factory=list)         # [(start_pc, line)], sorted by start_pc

    def line_at(self, bci: int) -> int:
        """The line of `bci`: the entry with the largest start_pc <= bci (0 when none)."""
        line = 0
        for start, number in self.lines:
            if start <= bci:
                line = number
        return line


@dataclass
class ClassFile:
    name: str                 # "InterpTable$Victim"
    source_file: str = ""
    methods: list = field(default_factory=list)

    def method(self, name: str, descriptor: str | None = None) -> ClassMethod:
        found = [m for m in self.methods if m.name == name and (descriptor is None or m.descriptor == descriptor)]
        if len(found) != 1:
            raise LookupError(f"{self.name}: {len(found)} methods named {name} {descriptor or ''}")
        return found[0]


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def u(self, fmt: str):
        value = struct.unpack_from(">" + fmt, self.data, self.pos)
        self.pos += struct.calcsize(">" + fmt)
        return value[0] if len(value) == 1 else value

    def bytes(self, n: int) -> bytes:
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def read(path: Path) -> ClassFile:
    r = _Reader(Path(path).read_bytes())
    if r.u("I") != 0xCAFEBABE:
        raise ValueError(f"{path}: not a class file")
    r.u("HH")  # minor, major
    count = r.u("H")
    pool: list = [None] * count
    i = 1
    while i < count:
        tag = r.u("B")
        if tag == 1:  # Utf8 (modified UTF-8; the names here are ASCII)
            pool[i] = r.bytes(r.u("H")).decode("utf-8", "replace")
        elif tag in (3, 4):
            r.u("I")
        elif tag in (5, 6):
            r.u("Q")
            i += 1  # long and double take two entries
        elif tag == 7 or tag == 8 or tag == 16 or tag == 19 or tag == 20:
            pool[i] = ("ref", r.u("H"))
        elif tag in (9, 10, 11, 12, 17, 18):
            r.u("HH")
        elif tag == 15:
            r.u("BH")
        else:
            raise ValueError(f"{path}: constant pool tag {tag}")
        i += 1
    r.u("H")  # access flags
    this_class = pool[pool[r.u("H")][1]]
    r.u("H")  # super
    r.bytes(2 * r.u("H"))  # interfaces
    for _ in range(r.u("H")):  # fields
        r.u("HHH")
        for _ in range(r.u("H")):
            r.u("H")
            r.bytes(r.u("I"))
    out = ClassFile(this_class.replace("/", "."))
    for _ in range(r.u("H")):
        _, name_index, descriptor_index = r.u("HHH")
        method = ClassMethod(pool[name_index], pool[descriptor_index])
        for _ in range(r.u("H")):
            attribute, length = pool[r.u("H")], r.u("I")
            end = r.pos + length
            if attribute == "Code":
                r.u("HH")  # max_stack, max_locals
                method.code_length = r.u("I")
                r.bytes(method.code_length)
                r.bytes(8 * r.u("H"))  # exception table
                for _ in range(r.u("H")):
                    inner, inner_length = pool[r.u("H")], r.u("I")
                    inner_end = r.pos + inner_length
                    if inner == "LineNumberTable":
                        method.lines += [r.u("HH") for _ in range(r.u("H"))]
                    r.pos = inner_end
                method.lines.sort()
            r.pos = end
        out.methods.append(method)
    for _ in range(r.u("H")):
        attribute, length = pool[r.u("H")], r.u("I")
        if attribute == "SourceFile":
            out.source_file = pool[r.u("H")]
        else:
            r.bytes(length)
    return out
