"""How tests say what they checked.

check(cond, message, detail): a hard assertion; the test stops at the first failure, and the
message carries the detail (a JVM's stderr, a dump's description).
SoftChecks: every check is printed as "ok" or "FAIL" and the test goes on, failing at the end
with the list; for the long perf tests, where one run feeds many checks.
figure(name, value): a measured figure, printed as "FIGURE name value" for the tables of docs/measurements.md
(grep FIGURE build/meson-logs/testlog.txt).
"""
from __future__ import annotations

import time


class CheckFailed(AssertionError):
    pass


def check(cond, message: str, detail: str = "") -> None:
    if not cond:
        raise CheckFailed(message + (("\n--- detail ---\n" + detail.rstrip()) if detail else ""))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def figure(name: str, value) -> None:
    print(f"FIGURE {name} {value}", flush=True)


class SoftChecks:
    def __init__(self):
        self.failures: list[str] = []

    def __call__(self, cond, what: str) -> bool:
        print(("ok    " if cond else "FAIL  ") + what, flush=True)
        if not cond:
            self.failures.append(what)
        return bool(cond)

    def verify(self) -> None:
        if self.failures:
            raise CheckFailed(f"{len(self.failures)} failed check(s):\n  " + "\n  ".join(self.failures))
