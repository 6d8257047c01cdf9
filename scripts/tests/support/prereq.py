"""Missing prerequisites: a required one fails the test with a message naming the Debian package
that provides it; an optional one (listed in docs/testing.md's "What the tests need") skips with
the reason, which meson reports as SKIP (exit 77), never as a pass."""
from __future__ import annotations

import os
import shutil

import pytest

# Every skip must say it is one of the optional tests; conftest.py turns any other skip into a
# failure, so a stray pytest.skip() can never hide a test.
OPTIONAL_PREFIX = "optional test skipped: "


def require_command(name: str, package: str, why: str = "") -> str:
    """The path of `name` on PATH, or fails naming `package`."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed{f' ({why})' if why else ''}: install Debian's {package} "
                    "(scripts/setup does)", pytrace=False)
    return path


def require_file(path, package: str, what: str = "") -> None:
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing{f' ({what})' if what else ''}: install Debian's {package} "
                    "(scripts/setup does)", pytrace=False)


def require_root(why: str) -> None:
    if os.geteuid() != 0:
        pytest.fail(f"this test needs root ({why}): run the suites as root, e.g. `sudo scripts/test`",
                    pytrace=False)


def optional(reason: str) -> None:
    """Skips an optional test (docs/testing.md's "What the tests need" lists which
    and why)."""
    pytest.skip(OPTIONAL_PREFIX + reason)
