#!/usr/bin/env python3
"""Prints NAME<TAB>JAVA_HOME for every JDK under /usr/lib/jvm other than the default `java`
(deduplicated by realpath), for the per-JDK fault tests. Prints nothing when there is none."""
import os
import shutil
from pathlib import Path

default = shutil.which("java")
seen = {str(Path(os.path.realpath(default)).parent.parent)} if default else set()
for home in sorted(Path("/usr/lib/jvm").glob("*")):
    java = home / "bin" / "java"
    if not (java.is_file() and (home / "bin" / "javac").is_file()):
        continue
    real = str(Path(os.path.realpath(java)).parent.parent)
    if real in seen:
        continue
    seen.add(real)
    print(f"{home.name}\t{home}")
