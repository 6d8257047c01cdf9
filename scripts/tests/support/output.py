"""What the agent leaves behind besides the dump's records: its stderr lines, its stats file,
the files in its output directory."""
from __future__ import annotations

import json
from pathlib import Path

from .checks import check


def agent_lines(stderr: bytes | str) -> list[str]:
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    return [line for line in text.splitlines() if line.startswith("jitdumpagent:")]


def read_stats(path: Path) -> dict:
    check(Path(path).is_file(), f"stats file {path} was not written")
    return json.loads(Path(path).read_text())


def dumps_in(directory: Path) -> list[Path]:
    directory = Path(directory)
    return sorted(directory.glob("jit-*.dump")) if directory.is_dir() else []


def one_dump(directory: Path) -> Path:
    dumps = dumps_in(directory)
    check(len(dumps) == 1, f"expected one dump in {directory}, found {dumps}")
    return dumps[0]
