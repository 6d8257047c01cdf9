"""The real readers of `jitdump report`'s outputs, for the tests on real recordings: `go tool pprof`
(Debian golang-go) on profile.pb.gz and headless Chromium (Debian chromium) on flamegraph.html.

The Chromium DevTools-pipe driver is the report outputs' own (cpp-tests/report/cdp.py), imported
from there rather than copied. A missing reader fails the test naming its Debian package."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from support.prereq import require_command

REPORT_TESTS = Path(__file__).resolve().parents[3] / "cpp-tests" / "report"
SEPARATOR = "-----------+-------------------------------------------------------"


def pprof(profile: Path, tmp: Path, *args) -> str:
    """`go tool pprof ARGS PROFILE`'s output; pprof's state kept under `tmp`."""
    go = require_command("go", "golang-go", "go tool pprof reads the pprof output")
    tmp.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(tmp), PPROF_TMPDIR=str(tmp), GOCACHE=str(tmp / "gocache"))
    p = subprocess.run([go, "tool", "pprof", *args, str(profile)], capture_output=True, text=True, env=env,
                       timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"go tool pprof {' '.join(args)} failed:\n{p.stderr}")
    return p.stdout


def pprof_traces(profile: Path, tmp: Path) -> list:
    """[(count, frames)] from `go tool pprof -traces -lines -sample_index=samples`, each frame
    "NAME FILE:LINE[ (inline)]", innermost first."""
    blocks = []
    for chunk in pprof(profile, tmp, "-traces", "-lines", "-sample_index=samples").split(SEPARATOR)[1:]:
        count, frames = None, []
        for line in chunk.splitlines():
            if not line.strip() or (count is None and re.match(r"^\s*\w+:\s", line)):
                continue  # blank, or a label line (pid:, thread:)
            first = re.match(r"^\s*(\d+)\s{3}(.*)$", line)
            if count is None and first:
                count = int(first.group(1))
                frames.append(first.group(2).strip())
            else:
                frames.append(line.strip())
        if count is not None:
            blocks.append((count, frames))
    return blocks


def pprof_top(profile: Path, tmp: Path) -> dict:
    """{"NAME FILE:LINE": flat samples} from `go tool pprof -top -lines -sample_index=samples` (as printed,
    with pprof's "(inline)" / "(partial-inline)" marks)."""
    table = {}
    for line in pprof(profile, tmp, "-top", "-lines", "-nodefraction=0", "-sample_index=samples").splitlines():
        m = re.match(r"^\s*(\d+)\s+\S+%\s+\S+%\s+\d+\s+\S+%\s+(.*?)\s*$", line)
        if m:
            table[m.group(2)] = int(m.group(1))
    return table


class FlameGraphPage:
    """flamegraph.html opened from its file in headless Chromium: what the page drew
    (window.flameGraph) and every request it made."""

    def __init__(self, page: Path, tmp: Path):
        require_command("chromium", "chromium", "the HTML flame graph is checked in a real browser")
        if str(REPORT_TESTS) not in sys.path:
            sys.path.insert(0, str(REPORT_TESTS))
        import cdp  # noqa: E402 (cpp-tests/report/cdp.py)
        self.url = "file://" + str(page)
        self.browser = cdp.Browser(str(tmp / "chromium"))
        self.browser.navigate(self.url, timeout=300)
        errors = self.browser.exceptions()
        if errors:
            raise AssertionError(f"the page's scripts failed: {errors}")
        if self.browser.evaluate("document.documentElement.dataset.ready") != "true":
            raise AssertionError("the flame graph page did not finish rendering")

    def nodes(self, name: str) -> list:
        """[{kind, total, path (root 'all' first), drawn}] of every node of frame `name`."""
        quoted = "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return self.browser.evaluate(
            f"window.flameGraph.nodes({quoted}).map(n => ({{kind: n.kind, total: n.total, "
            "path: window.flameGraph.path(n.index), drawn: !!window.flameGraph.rect(n.index)}))")

    def total(self) -> int:
        return self.browser.evaluate("window.flameGraph.total")

    def requests(self) -> list:
        time.sleep(0.5)  # late requests (none expected) show up
        self.browser.evaluate("1")  # drains the events that arrived meanwhile
        return self.browser.requests()

    def close(self):
        self.browser.close()
