"""Shared helpers of the Python test tree: prerequisites, JDKs, the agent and the jitdump tool,
JVMs with the agent, perf, mounts. The fixtures in ../conftest.py hand them to the tests."""
