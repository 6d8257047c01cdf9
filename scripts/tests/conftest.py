"""Fixtures every suite shares (see README.md beside this file for the list) and the tree's rules:

- a skip is allowed only through support.prereq.optional() (the optional tests docs/testing.md's
  "What the tests need" lists); any other skip is reported as a failure, so no missing
  prerequisite can pass silently;
- a run in which every test skipped exits 77, which meson reports as SKIP, not OK;
- with --registered (meson's tests-registered test), every collected test must be registered
  with meson and the other way round, so a test cannot silently stop running.
"""
from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from support import jdks  # noqa: E402
from support.checks import SoftChecks, log  # noqa: E402
from support.jitdump import Tool  # noqa: E402
from support.jvm import Jvm, compile_java  # noqa: E402
from support.prereq import OPTIONAL_PREFIX  # noqa: E402
from support.procs import Cleanup, fresh_directory  # noqa: E402

REPO = HERE.parents[1]
SKIP_EXIT = 77


def pytest_addoption(parser):
    group = parser.getgroup("libjitdumpagent")
    group.addoption("--build", default=os.environ.get("JITDUMP_BUILD", str(REPO / "build")),
                    help="meson build directory with the agent and the jitdump tool (default: $JITDUMP_BUILD, "
                         "else build/ in the checkout)")
    group.addoption("--agent", default="", help="the agent to test (default: BUILD/agent/libjitdumpagent.so)")
    group.addoption("--tool", default="", help="the jitdump tool (default: BUILD/jitdump/tool/jitdump)")
    group.addoption("--jdk", default="", help="JDK home to run the JVMs on (default: Debian's OpenJDK 17)")
    group.addoption("--long", action="store_true", help="the long variants (more iterations; not in CI)")
    group.addoption("--seed", type=int, default=int(os.environ.get("FAULT_SEED", "0")) or int(time.time()),
                    help="seed of the random tests (default: $FAULT_SEED, else the time)")
    group.addoption("--registered", action="append", default=None, metavar="NODEID",
                    help="with --collect-only: fail unless exactly these tests are collected")


def pytest_configure(config):
    # support/registry.py reads this marker to register the test with meson.
    config.addinivalue_line("markers", "meson(timeout=SECONDS, every_jdk=False): how meson runs this test "
                            "(its timeout; every_jdk: also on each JDK of meson's extra_jdks option)")
    # meson stops a test that runs out of time with SIGTERM: unwind, so fixtures undo mounts and
    # kill the JVMs they started.
    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def pytest_sessionstart(session):
    reap_stale_attach_sockets()


def reap_stale_attach_sockets() -> None:
    """Removes HotSpot attach sockets (/tmp/.java_pid<N>) whose process is gone. The suite kills
    JVMs with SIGKILL (crash and cleanup paths), which leaves them behind; with pid_max at 32768
    pids come round, and a stale socket of another user at a new JVM's pid blocks every attach to
    it (the JVM cannot remove it from the sticky /tmp): the root-visit tests failed that way."""
    for path in Path("/tmp").glob(".java_pid*"):
        pid = path.name[len(".java_pid"):]
        try:
            if pid.isdigit() and path.is_socket() and not Path(f"/proc/{pid}").exists():
                path.unlink()
        except OSError:
            pass


def pytest_collection_finish(session):
    registered = session.config.getoption("registered")
    if registered is None:
        return
    collected = {item.nodeid for item in session.items}
    unregistered = sorted(collected - set(registered))
    gone = sorted(set(registered) - collected)
    if unregistered or gone:
        pytest.exit("the tests meson runs and the tests in scripts/tests differ:\n"
                    + "".join(f"  not registered with meson (reconfigure: meson setup --reconfigure BUILD): {n}\n" for n in unregistered)
                    + "".join(f"  registered but not found: {n}\n" for n in gone), returncode=1)
    print(f"all {len(collected)} tests are registered with meson")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    if report.skipped and call.when != "teardown" and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2]
        if OPTIONAL_PREFIX not in reason:
            report.outcome = "failed"
            report.longrepr = (f"{item.nodeid} skipped ({reason}), but only the optional tests docs/testing.md's "
                               "\"What the tests need\" lists may skip: a missing prerequisite must fail")
    soft = item.funcargs.get("soft") if call.when == "call" else None
    if report.passed and soft is not None and soft.failures:
        report.outcome = "failed"
        report.longrepr = f"{len(soft.failures)} failed check(s):\n  " + "\n  ".join(soft.failures)


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter else {}
    if exitstatus == 0 and stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = SKIP_EXIT


# ------------------------------------------------------------------------------- fixtures

class Build:
    """Where things are: the checkout, the build directory, what the tests build there."""

    def __init__(self, build: str, agent: str = "", tool: str = ""):
        self.repo = REPO
        self.scripts = REPO / "scripts"
        self.dir = Path(build).resolve()
        self.agent = Path(agent).resolve() if agent else self.dir / "agent" / "libjitdumpagent.so"
        self.tool = Path(tool).resolve() if tool else self.dir / "jitdump" / "tool" / "jitdump"
        self.tests = self.dir / "scripts" / "tests"


@pytest.fixture(scope="session")
def build(pytestconfig) -> Build:
    return Build(pytestconfig.getoption("build"), pytestconfig.getoption("agent"), pytestconfig.getoption("tool"))


@pytest.fixture(scope="session")
def agent(build) -> Path:
    """The built libjitdumpagent.so."""
    if not build.agent.is_file():
        pytest.fail(f"the agent is not built at {build.agent}: ninja -C {build.dir}", pytrace=False)
    return build.agent


@pytest.fixture(scope="session")
def tool(build) -> Tool:
    """The built `jitdump` tool: records(path) -> Dump, check(path), run(*args)."""
    if not build.tool.is_file():
        pytest.fail(f"the jitdump tool is not built at {build.tool}: ninja -C {build.dir}", pytrace=False)
    return Tool(build.tool)


@pytest.fixture(scope="session")
def jdk(pytestconfig) -> jdks.Jdk:
    """The JDK under test: --jdk HOME, else Debian's OpenJDK 17."""
    try:
        return jdks.at(pytestconfig.getoption("jdk")) if pytestconfig.getoption("jdk") else jdks.default()
    except LookupError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="session")
def default_jdk() -> jdks.Jdk:
    """Debian's OpenJDK 17 (it compiles the test programs)."""
    try:
        return jdks.default()
    except LookupError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture
def work(request, build, jdk, default_jdk) -> Path:
    """An empty directory for this test, kept afterwards for inspection:
    BUILD/scripts/tests/work/SUITE/TEST[-JDK]."""
    suite = request.node.path.parent.name
    name = request.node.name + ("" if jdk.home == default_jdk.home else f"-{jdk.name}")
    path = fresh_directory(build.tests / "work" / suite / name)
    log(f"work directory {path}")
    return path


@pytest.fixture
def cleanup():
    """Undo steps (kill a process, unmount, remove a path) run when the test ends, last first."""
    steps = Cleanup()
    yield steps
    steps.run()


@pytest.fixture
def soft():
    """Checks that do not stop the test: soft(cond, what) prints ok/FAIL; any FAIL fails it."""
    return SoftChecks()


@pytest.fixture
def rng(pytestconfig) -> random.Random:
    seed = pytestconfig.getoption("seed")
    log(f"seed {seed} (rerun with --seed {seed} or FAULT_SEED={seed})")
    generator = random.Random(seed)
    generator.seed_value = seed
    return generator


@pytest.fixture
def long_run(pytestconfig) -> bool:
    """--long: the long variants."""
    return pytestconfig.getoption("long")


@pytest.fixture
def jvm(request, build, agent, jdk, work, cleanup) -> Jvm:
    """JVMs of the JDK under test running the suite's Java programs (SUITE/java/*.java, compiled
    once per JDK into BUILD/scripts/tests/classes/SUITE-JDK) with or without the agent."""
    suite_dir = request.node.path.parent
    sources = sorted((suite_dir / "java").glob("*.java"))
    classes = build.tests / "classes" / f"{suite_dir.name}-{jdk.name}"
    if sources:
        compile_java(jdk, sources, classes, options=["-nowarn"])
    return Jvm(jdk, agent, classes, work, cleanup)
