"""go tool pprof (Debian golang-go) reads what WritePprof writes.

Every expectation is derived from the Profile the fixture generator built (profile_model.py):
flat and cumulative samples per function and per source line, every stack with its inline
chain, and pprof's "(inline)" marks where a function was inlined.
"""
import os
import re
import shutil
import subprocess
import time

import pytest

ROW = re.compile(r"^\s*(\S+)\s+(\S+)%\s+(\S+)%\s+(\S+)\s+(\S+)%\s+(.*?)\s*$")


def figure(name, value):
    print(f"FIGURE {name} {value}", flush=True)


def pprof(profile, *args, tmp):
    go = shutil.which("go")
    if not go:
        pytest.fail("go not found: install Debian's golang-go (scripts/setup does); go tool pprof is the reader under test")
    # pprof keeps its state under $HOME/pprof or PPROF_TMPDIR: a private one per test.
    env = dict(os.environ, HOME=str(tmp), PPROF_TMPDIR=str(tmp), GOCACHE=str(tmp / "gocache"))
    proc = subprocess.run([go, "tool", "pprof", *args, str(profile)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, f"go tool pprof {' '.join(args)} failed:\n{proc.stderr}"
    # pprof prints nothing on stderr for a profile it fully understands (no symbolization
    # attempts, no "Main binary filename not available", no warnings).
    assert proc.stderr == "", f"go tool pprof {' '.join(args)} warned:\n{proc.stderr}"
    return proc.stdout


def top_table(output):
    """{name: (flat, cum)} from pprof -top output (values as printed)."""
    table = {}
    for line in output.splitlines():
        m = ROW.match(line)
        if m and m.group(1) != "flat":
            assert m.group(6) not in table, f"{m.group(6)} listed twice"
            table[m.group(6)] = (int(m.group(1)), int(m.group(4)))
    return table


def expected_top(model, with_lines):
    """What -top must list: flat and cum per function (or per function and line), each name
    followed by "(inline)" when all its frames were inlined, "(partial-inline)" when some were."""
    def key(f):
        if with_lines and f[1]:
            return f"{f[0]} {f[1]}:{f[2]}"
        return f[0]
    inlined = {}
    for s in model.samples():
        for f in model.frames(s):
            inlined.setdefault(key(f), set()).add(f[3])
    table = {}
    for name, (flat, cum) in model.flat_and_cum(key).items():
        mark = {frozenset([True]): " (inline)", frozenset([True, False]): " (partial-inline)"}.get(
            frozenset(inlined[name]), "")
        table[name + mark] = (flat, cum)
    return table


def test_top_lists_every_function_with_flat_and_cumulative_samples(inline_outputs, tmp_path):
    out, _, model = inline_outputs
    output = pprof(out / "profile.pb.gz", "-top", "-nodecount=1000", "-sample_index=samples", tmp=tmp_path)
    assert top_table(output) == expected_top(model, with_lines=False), output
    # The inlined callee and the inlined caller, by name, as pprof marks them.
    assert "demo.Inline.mix(long) (partial-inline)" in output  # inlined into digest, not checksum
    assert "demo.Inline.caller() (inline)" in output


def test_default_sample_type_is_cpu_time(inline_outputs, tmp_path):
    out, manifest, model = inline_outputs
    output = pprof(out / "profile.pb.gz", "-top", tmp=tmp_path)
    assert "Type: cpu" in output
    total_ms = model.total() * manifest["profile"]["period_ns"] / 1e6
    assert f"Total samples = {total_ms:g}ms" in output, output


def test_lines_list_the_inlined_callee_with_its_line(inline_outputs, tmp_path):
    out, _, model = inline_outputs
    output = pprof(out / "profile.pb.gz", "-top", "-lines", "-nodecount=1000", "-sample_index=samples", tmp=tmp_path)
    assert top_table(output) == expected_top(model, with_lines=True), output
    assert "demo.Inline.mix(long) demo/Inline.java:41 (partial-inline)" in output
    assert "demo.Inline.caller() demo/Inline.java:20 (inline)" in output


def parse_traces(output):
    """[(labels, value, frames)] per sample block of pprof -traces."""
    blocks = []
    for chunk in output.split("-----------+-------------------------------------------------------")[1:]:
        labels, value, frames = {}, None, []
        for line in chunk.splitlines():
            if not line.strip():
                continue
            label = re.match(r"^\s*(\w+):\s+(.*)$", line)
            if value is None and label:
                labels[label.group(1)] = label.group(2).strip()
                continue
            first = re.match(r"^\s*(\d+)\s{3}(.*)$", line)
            if value is None and first:
                value = int(first.group(1))
                frames.append(first.group(2).strip())
            else:
                frames.append(line.strip())
        if value is not None:
            blocks.append((labels, value, frames))
    return blocks


def test_traces_show_every_stack_with_its_inline_chain_and_lines(inline_outputs, tmp_path):
    out, manifest, model = inline_outputs
    output = pprof(out / "profile.pb.gz", "-traces", "-lines", "-sample_index=samples", tmp=tmp_path)
    pids = {i: p["pid"] for i, p in enumerate(manifest["profile"]["processes"])}
    expected = []
    for s in model.samples():
        frames = [name + (f" {file}:{line}" if file else "") + (" (inline)" if inlined else "")
                  for name, file, line, inlined, _ in model.frames(s)]
        expected.append(({"thread": s["thread"], "pid": str(pids[s["process"]])}, s["count"], frames))
    got = parse_traces(output)
    key = lambda block: repr(block)  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key), output
    # The first stack of the shape: leaf() called from caller() inlined into main().
    assert "demo.Inline.leaf(int) demo/Inline.java:12\n" \
           "             demo.Inline.caller() demo/Inline.java:20 (inline)\n" \
           "             demo.Inline.main(java.lang.String[]) demo/Inline.java:31" in output


def test_raw_shows_mappings_resolved_and_labels(inline_outputs, tmp_path):
    out, _, _ = inline_outputs
    output = pprof(out / "profile.pb.gz", "-raw", tmp=tmp_path)
    jit = next(line for line in output.splitlines() if "[jit] jit-4242.dump" in line)
    for flag in ("[FN]", "[FL]", "[LN]", "[IN]"):
        assert flag in jit, jit
    assert "thread:[main]" in output.replace(" ", "") or "thread:[main]" in output, output
    assert re.search(r"pid:\[4242\]", output), output


def test_million_samples(million_outputs, tmp_path):
    out, manifest = million_outputs
    profile = out / "profile.pb.gz"
    started = time.monotonic()
    output = pprof(profile, "-top", "-nodecount=20", "-sample_index=samples", tmp=tmp_path)
    elapsed = time.monotonic() - started
    assert f"Total samples = {manifest['samples']}" in output.replace(",", ""), output[:2000]
    assert re.search(r"Showing nodes accounting for \d+, 100% of \d+ total", output) or "of 1000000 total" in output
    figure("pprof_1m_bytes", os.path.getsize(profile))
    figure("pprof_1m_write_ms", round(manifest["write_pprof_ms"]))
    figure("pprof_1m_write_cpu_ms", round(manifest["write_pprof_cpu_ms"]))
    figure("pprof_1m_write_peak_rss_growth_kb", manifest["write_pprof_peak_rss_growth_kb"])
    figure("pprof_1m_go_tool_pprof_top_s", round(elapsed, 2))
