"""Processes and clean-up: what a test started or changed is undone when it ends, whatever
happened (the `cleanup` fixture runs the registered undo steps, last first)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


class Cleanup:
    def __init__(self):
        self._steps: list = []

    def add(self, fn) -> None:
        self._steps.append(fn)

    def kill(self, proc: subprocess.Popen) -> subprocess.Popen:
        self.add(lambda: kill(proc))
        return proc

    def remove(self, path) -> None:
        """Removes `path` (file, link or directory) at the end of the test."""
        self.add(lambda: remove(Path(path)))

    def run(self) -> None:
        while self._steps:
            step = self._steps.pop()
            try:
                step()
            except Exception as e:  # an undo step must never hide the test's verdict
                print(f"cleanup: {e}", file=sys.stderr, flush=True)


def kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            proc.kill()
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


def remove(path: Path) -> None:
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
    except OSError:
        pass


def wait_for(predicate, timeout: float, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def run(command, **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run capturing text output."""
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    return subprocess.run([str(c) for c in command], **kwargs)


def umount(target: Path) -> None:
    for _ in range(50):
        if subprocess.run(["mountpoint", "-q", str(target)]).returncode != 0:
            return
        if subprocess.run(["umount", str(target)], stderr=subprocess.DEVNULL).returncode == 0:
            return
        time.sleep(0.1)
    subprocess.run(["umount", "-l", str(target)])


def fresh_directory(path: Path) -> Path:
    """Empties `path` (unmounting what an earlier, crashed run left mounted below it first, so
    nothing is deleted through a mount) and creates it, mode 0755."""
    r = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True)
    for target in sorted(r.stdout.split(), reverse=True):
        if target == str(path) or target.startswith(str(path) + "/"):
            umount(Path(target))
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    os.chmod(path, 0o755)
    return path


def mount_tmpfs(cleanup: Cleanup, target: Path, options: str) -> None:
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "testtmpfs", str(target)], check=True)
    cleanup.add(lambda: umount(target))
