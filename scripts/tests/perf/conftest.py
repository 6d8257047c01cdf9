"""The perf suite's fixture: `ctx`, a PerfRun (runs.py) for the test, after making sure perf can
sample here."""
import pytest

from support import perf

from .runs import PerfRun


@pytest.fixture
def ctx(build, agent, tool, jdk, work, soft) -> PerfRun:
    perf.require_sampling()
    return PerfRun(build, agent, tool, jdk, work, soft)
