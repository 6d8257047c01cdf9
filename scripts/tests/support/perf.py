"""Running the real perf: whether it can sample here, and an environment that keeps its side
effects (the build-id cache under $HOME/.debug) inside the test's work directory."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .jvm import clean_env
from .prereq import require_command


def env(home: Path, **extra) -> dict:
    """The environment for perf and the JVMs it starts: $HOME in the work directory (perf's
    ~/.debug goes there), C locale (parsable output), no agent options inherited."""
    home.mkdir(parents=True, exist_ok=True)
    return clean_env(HOME=str(home), LC_ALL="C", **extra)


def require_sampling(system_wide: bool = False) -> None:
    """Fails (never skips) when perf is missing or cannot sample on this machine, with perf's
    own words and the perf_event_paranoid setting."""
    require_command("perf", "linux-perf")
    command = ["perf", "record", "-q", "-k", "1", "-e", "cpu-clock", *(["-a"] if system_wide else []),
               "-o", "/dev/null", "--", "true"]
    r = subprocess.run(command, capture_output=True, text=True, env=clean_env())
    if r.returncode != 0:
        try:
            paranoid = Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
        except OSError:
            paranoid = "unknown"
        pytest.fail(f"perf cannot sample here ({' '.join(command)} exit {r.returncode}; "
                    f"kernel.perf_event_paranoid = {paranoid}; run as root or set it to 1 or less):\n"
                    f"{r.stderr.strip()[-1500:]}", pytrace=False)
