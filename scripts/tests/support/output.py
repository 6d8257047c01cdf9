"""What the agent leaves behind besides the dump's records: its stderr lines, its stats file,
the files in its output directory."""
from __future__ import annotations

import json
from pathlib import Path

from .checks import check


# The one line any run may end with, whatever a test does: HotSpot can post a compiled load after
# VMDeath has returned, when JVMTI names nothing any more, and a method compiled for the first time
# then cannot be named. The agent writes it as [unknown Java method], counts it
# (unnamed_loads.after_vm_death) and says so at exit. Whether it happens depends on the JVM's
# compile timing at exit (a few runs in a hundred of a short JVM); lifecycle_test covers the line.
EXIT_RACE = "posted after VM death written as [unknown Java method]"


def agent_lines(stderr: bytes | str, *, exit_race: bool = False) -> list[str]:
    """The agent's lines in `stderr`, without the exit-race line unless `exit_race`."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    return [line for line in text.splitlines()
            if line.startswith("jitdumpagent:") and (exit_race or EXIT_RACE not in line)]


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
