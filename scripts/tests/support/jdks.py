#!/usr/bin/env python3
"""The one JDK finder: which JDKs the tests run on.

The default JDK is Debian's OpenJDK 17 (else the JDK of the javac on PATH); its javac compiles
the test programs. Others come from meson's `extra_jdks` option: "auto" is every JDK under
/usr/lib/jvm (a directory with bin/java and bin/javac), deduplicated by realpath; otherwise a
colon-separated list of homes ("" for none).

As a command (java-tests/meson.build and scripts/tests/meson.build call it at configure
time), prints one "NAME<TAB>HOME" line per JDK, the default first, named by its feature version
("17"), the others by their directory name without the -jdk/-amd64 suffixes ("temurin-25"):
    jdks.py EXTRA_JDKS
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

JVM_DIR = Path("/usr/lib/jvm")
DEBIAN_DEFAULT = JVM_DIR / "java-17-openjdk-amd64"


@dataclass(frozen=True)
class Jdk:
    name: str
    home: Path

    @property
    def java(self) -> str:
        return str(self.home / "bin" / "java")

    @property
    def javac(self) -> str:
        return str(self.home / "bin" / "javac")

    @property
    def jcmd(self) -> str:
        return str(self.home / "bin" / "jcmd")

    @functools.cached_property
    def feature(self) -> int:
        """The feature release (17, 21, 25...), from the release file or from the JVM itself."""
        try:
            text = (self.home / "release").read_text()
            m = re.search(r'^JAVA_VERSION="?(\d+)', text, re.M)
            if m:
                return int(m.group(1))
        except OSError:
            pass
        r = subprocess.run([self.java, "-XshowSettings:properties", "-version"], capture_output=True, text=True,
                           env={"PATH": os.environ.get("PATH", "")})
        m = re.search(r"java\.specification\.version = (\d+)", r.stderr)
        return int(m.group(1)) if m else 0


def _real(home: Path) -> Path:
    return Path(os.path.realpath(home))


def _short_name(directory: str) -> str:
    for suffix in ("-amd64", "-arm64", "-jdk", "-openjdk"):
        directory = directory.removesuffix(suffix)
    return directory


def default() -> Jdk:
    """Debian's OpenJDK 17, else the JDK of the javac on PATH."""
    if (DEBIAN_DEFAULT / "bin" / "javac").is_file():
        home = _real(DEBIAN_DEFAULT)
    else:
        javac = shutil.which("javac")
        if javac is None:
            raise LookupError("no JDK: install Debian's openjdk-17-jdk-headless (scripts/setup does)")
        home = _real(Path(javac)).parent.parent
    jdk = Jdk("default", home)
    return Jdk(str(jdk.feature or "default"), home)


def at(home: str | Path) -> Jdk:
    """The JDK at `home` (an explicit choice: must have bin/java)."""
    home = Path(home)
    if not (home / "bin" / "java").is_file():
        raise LookupError(f"{home} has no bin/java")
    if _real(home) == default().home:
        return default()
    return Jdk(_short_name(home.name), _real(home))


def installed() -> list[Jdk]:
    """Every JDK under /usr/lib/jvm, the default first, each home once."""
    found = [default()]
    seen = {found[0].home}
    for home in sorted(JVM_DIR.glob("*")):
        if not ((home / "bin" / "java").is_file() and (home / "bin" / "javac").is_file()):
            continue
        if _real(home) in seen:
            continue
        seen.add(_real(home))
        found.append(Jdk(_short_name(home.name), _real(home)))
    return found


def select(extra: str) -> list[Jdk]:
    """The default JDK plus `extra` ("auto", "", or colon-separated homes)."""
    if extra == "auto":
        return installed()
    chosen = [default()]
    for home in filter(None, extra.split(":")):
        jdk = at(home)
        if jdk.home not in {j.home for j in chosen}:
            chosen.append(jdk)
    return chosen


def newest(min_feature: int) -> Jdk | None:
    """The newest installed JDK of at least `min_feature` that has jcmd, or None."""
    candidates = [j for j in installed() if j.feature >= min_feature and Path(j.jcmd).is_file()]
    return max(candidates, key=lambda j: j.feature, default=None)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        for jdk in select(argv[1]):
            print(f"{jdk.name}\t{jdk.home}")
    except LookupError as e:
        print(f"jdks.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
