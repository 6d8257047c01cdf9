"""Fixtures of the report-output consumer tests: the writers' outputs for the test profiles.

meson passes REPORT_FIXTURE_GEN (the program that builds a test Profile and writes its pprof and
flame graph); the tests then read those files with the real consumers.
"""
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from profile_model import ProfileModel  # noqa: E402


def generate(tmp_path_factory, *args):
    gen = os.environ.get("REPORT_FIXTURE_GEN")
    if not gen:
        pytest.fail("REPORT_FIXTURE_GEN is not set: run these tests with `meson test --suite report`")
    out = tmp_path_factory.mktemp(args[0])
    subprocess.run([gen, args[0], str(out), *args[1:]], check=True)
    with open(out / "manifest.json") as f:
        return out, json.load(f)


@pytest.fixture(scope="session")
def inline_outputs(tmp_path_factory):
    """(directory, manifest, ProfileModel) for the known-inlining profile."""
    out, manifest = generate(tmp_path_factory, "inline")
    return out, manifest, ProfileModel(manifest["profile"])


@pytest.fixture(scope="session")
def million_outputs(tmp_path_factory):
    """(directory, manifest) for the 1M-sample service-shaped synthetic profile."""
    return generate(tmp_path_factory, "synthetic", "1000000")



@pytest.fixture(scope="session")
def scattered_outputs(tmp_path_factory):
    """(directory, manifest) for 1M samples in the scattered (size worst case) shape."""
    return generate(tmp_path_factory, "synthetic", "1000000", "scattered")
