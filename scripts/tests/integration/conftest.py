"""The integration suite attaches with jcmd and lists compiled code with it: every test needs the
JDK's jcmd (Debian's openjdk-17-jdk-headless has it)."""
import pytest

from support.prereq import require_file


@pytest.fixture(autouse=True)
def jcmd(jdk) -> str:
    require_file(jdk.jcmd, "openjdk-17-jdk-headless", "jcmd, for late attach and Compiler.codelist")
    return jdk.jcmd
