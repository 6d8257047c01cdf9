"""KDAB Hotspot shows the demo's Java method names for a perf-java run opened with
scripts/bin/hotspot-view.

The GUI runs for real under xvfb-run. Hotspot starts its parser as $HOTSPOT_PERFPARSER when that
is set (its own switch); the test sets it to a wrapper that runs Debian's hotspot-perfparser with
the arguments Hotspot chose and keeps a copy of the stream it hands to the GUI. That stream is
what every view (summary, bottom-up, top-down, flame graph) is built from, so the checks read it
(perfparser_stream.py): the demo's methods must be named, with their share of the samples. The
window title says the GUI loaded the file; a screenshot is kept for people (work/.../hotspot/
screen.png), not checked by pixels.

test_hotspot_same_pid: a run whose dump is in jit/jit-PID-2/ (the agent's name when another JVM
with the same pid holds jit-PID.dump), prepared with hotspot-view --prepare and read by Hotspot's
parser; then with a second dump of that pid, which hotspot-view must name in a warning.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from perf.runs import PerfRun, run
from support import perf
from support.checks import check, figure, log
from support.jvm import clean_env
from support.prereq import require_command

from . import perfparser_stream

HERE = Path(__file__).resolve().parent
# The demo's methods that get their own compiled code and most of its time (Demo.java); each
# must be the leaf of at least this share of all samples in Hotspot's data.
DEMO_METHODS = ("demo.Demo.divideChain(long, int)", "demo.Demo.inlinedCaller(long, int)",
                "demo.Demo.countPrimes(int, int)")
MIN_SHARE = 0.03
ANON = "//anon"  # how Hotspot's parser names the JVM's anonymous code-cache mapping


def hotspot_parser() -> str:
    """Debian's hotspot-perfparser (not on PATH: Hotspot's private helper)."""
    require_command("hotspot", "hotspot", "the KDAB Hotspot GUI")
    files = subprocess.run(["dpkg", "-L", "hotspot"], capture_output=True, text=True).stdout.split()
    found = [f for f in files if f.endswith("/hotspot-perfparser") and os.access(f, os.X_OK)]
    if not found:
        pytest.fail("hotspot-perfparser is missing: reinstall Debian's hotspot (scripts/setup installs it)",
                    pytrace=False)
    return found[0]


def recording(build, agent, tool, jdk, work, soft) -> Path:
    perf.require_sampling()
    ctx = PerfRun(build, agent, tool, jdk, work, soft)
    return ctx.record_demo("run", seconds="3", freq="999")


def parse_directly(parser: str, data: Path, out: Path, tmpdir: Path, *extra) -> perfparser_stream.Stream:
    """Hotspot's parser run by hand, as Hotspot runs it, with TMPDIR=tmpdir."""
    tmpdir.mkdir(parents=True, exist_ok=True)
    run([parser, "--input", data, "--max-frames", "1024", *extra, "--output", out],
        env=clean_env(TMPDIR=str(tmpdir), LC_ALL="C"))
    return perfparser_stream.decode(out.read_bytes())


def test_hotspot(build, agent, tool, jdk, work, soft):
    parser = hotspot_parser()
    require_command("xvfb-run", "xvfb", "an X server for the GUI")
    require_command("xwininfo", "x11-utils", "to see Hotspot's window")
    require_command("import", "imagemagick", "the screenshot")
    run_dir = recording(build, agent, tool, jdk, work, soft)

    out = work / "hotspot"
    out.mkdir()
    wrapper = out / "perfparser-wrapper"
    wrapper.write_text("#!/bin/bash\n"
                       f"printf '%s\\n' \"$@\" > '{out}/perfparser.args'\n"
                       f"'{parser}' \"$@\" | tee '{out}/stream.bin'\n"
                       f"echo \"${{PIPESTATUS[0]}}\" > '{out}/perfparser.rc'\n")
    wrapper.chmod(0o755)
    home = work / "home"
    env = clean_env(HOME=str(home), XDG_RUNTIME_DIR=str(home), LC_ALL="C",
                    HOTSPOT_PERFPARSER=str(wrapper), JITDUMPAGENT_TOOL=str(tool.path))
    log("Hotspot under Xvfb: scripts/bin/hotspot-view " + str(run_dir))
    r = run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "python3", HERE / "hotspot_session.py",
             out, "perf.data - Hotspot", "180", "--", build.scripts / "bin" / "hotspot-view", run_dir],
            check_rc=False, env=env, timeout=400)
    windows = (out / "windows.txt").read_text() if (out / "windows.txt").exists() else ""
    gui_out = (out / "gui.out").read_text(errors="replace") if (out / "gui.out").exists() else ""
    check(r.returncode == 0, "Hotspot did not load the recording under Xvfb (no parser exit, or no window "
          "titled 'perf.data - Hotspot')", f"{r.stdout}\n{r.stderr}\n{windows[-3000:]}\n{gui_out[-3000:]}")
    check((out / "perfparser.rc").read_text().strip() == "0", "Hotspot's parser failed", gui_out[-3000:])
    args = (out / "perfparser.args").read_text().split("\n")
    check(str(run_dir / "perf.data") in args, "Hotspot did not parse the run's raw perf.data", "\n".join(args))
    check((out / "screen.png").stat().st_size > 0, "no screenshot")

    stream = perfparser_stream.decode((out / "stream.bin").read_bytes())
    anon, named = stream.leaf_path[ANON], stream.named_in[ANON]
    log(f"Hotspot's data: {stream.samples} samples; leaves in JIT code {anon}, named {named}; "
        f"top: {stream.leaf.most_common(6)}")
    figure("gui.hotspot.samples", stream.samples)
    figure("gui.hotspot.jit_samples", anon)
    figure("gui.hotspot.jit_named_percent", f"{100.0 * named / anon:.3f}" if anon else "0")
    soft(stream.samples >= 500, f"Hotspot has the recording's samples ({stream.samples}, want >= 500)")
    soft(anon >= 0.5 * stream.samples, f"most samples are in JIT code ({anon} of {stream.samples})")
    soft(named >= 0.99 * anon, f"Hotspot names >= 99% of the samples in JIT code ({named} of {anon})")
    for method in DEMO_METHODS:
        share = stream.leaf[method] / max(stream.samples, 1)
        soft(share >= MIN_SHARE, f"Hotspot shows {method} with {100 * share:.1f}% of the samples "
             f"(want >= {100 * MIN_SHARE:.0f}%)")

    # Controls: the same parser without the maps names none of the demo's code (so the checks above
    # can fail, and the maps are what names it), and on perf inject's ELFs Hotspot 1.3 shows `??`.
    bare = parse_directly(parser, run_dir / "perf.data", out / "bare.bin", out / "empty-tmp")
    soft(not any(m in bare.leaf for m in DEMO_METHODS),
         f"without the perf maps Hotspot's parser names none of the demo's methods "
         f"(named JIT leaves: {bare.named_in[ANON]})")
    if (run_dir / "perf.jit.data").exists():
        injected = parse_directly(parser, run_dir / "perf.jit.data", out / "injected.bin", out / "empty-tmp",
                                  "--extra", run_dir / "jit", "--debug", run_dir / "jit")
        jitted = sum(c for p, c in injected.leaf_path.items() if "/jitted-" in p)
        jitted_named = sum(c for p, c in injected.named_in.items() if "/jitted-" in p)
        log(f"note: on perf.jit.data Hotspot's parser names {jitted_named} of {jitted} samples in jitted-*.so "
            "(Hotspot 1.3 does not resolve perf inject's ELFs; hotspot-view uses the perf maps)")
        figure("gui.hotspot.injected_elf_named", f"{jitted_named}/{jitted}")


def test_hotspot_same_pid(build, agent, tool, jdk, work, soft):
    parser = hotspot_parser()
    run_dir = recording(build, agent, tool, jdk, work, soft)
    dumps = sorted((run_dir / "jit").glob("jit-*.dump"))
    check(len(dumps) == 1, f"one dump in the demo's run: {dumps}")
    pid = int(dumps[0].name[len("jit-"):-len(".dump")])
    moved = run_dir / "jit" / f"jit-{pid}-2" / f"jit-{pid}.dump"
    moved.parent.mkdir()
    dumps[0].rename(moved)
    env = clean_env(JITDUMPAGENT_TOOL=str(tool.path), LC_ALL="C")
    view = build.scripts / "bin" / "hotspot-view"

    # Only the subdirectory's dump: its perf map, and Hotspot's parser names the demo's methods.
    r = run([view, "--prepare", run_dir], check_rc=False, env=env)
    check(r.returncode == 0 and "warning" not in r.stderr, f"hotspot-view --prepare (exit {r.returncode})",
          r.stdout + r.stderr)
    perf_map = run_dir / "hotspot" / f"perf-{pid}.map"
    check(perf_map.is_file() and perf_map.stat().st_size > 0, f"hotspot-view wrote no {perf_map} from {moved}")
    stream = parse_directly(parser, run_dir / "perf.data", work / "same-pid.bin", run_dir / "hotspot")
    anon, named = stream.leaf_path[ANON], stream.named_in[ANON]
    log(f"dump in jit-{pid}-2/: {stream.samples} samples; leaves in JIT code {anon}, named {named}")
    soft(anon > 0 and named >= 0.99 * anon, f"Hotspot's parser names >= 99% of the samples in JIT code "
         f"({named} of {anon})")
    for method in DEMO_METHODS:
        share = stream.leaf[method] / max(stream.samples, 1)
        soft(share >= MIN_SHARE, f"{method}: {100 * share:.1f}% of the samples (want >= {100 * MIN_SHARE:.0f}%)")

    # Two dumps of one pid: one perf map, from the first (jit/jit-PID.dump), and one warning.
    first = run_dir / "jit" / f"jit-{pid}.dump"
    first.write_bytes((build.repo / "cpp-tests" / "fixtures" / "node-v20-fib.jitdump").read_bytes())
    r = run([view, "--prepare", run_dir], check_rc=False, env=env)
    warnings = [line for line in r.stderr.splitlines() if "warning" in line]
    log(f"two dumps of pid {pid}: {warnings}")
    first_real, moved_real = first.resolve(), moved.resolve()  # hotspot-view names the run by its real path
    soft(r.returncode == 0 and len(warnings) == 1 and str(first_real) in warnings[0] and
         str(moved_real) in warnings[0] and f"using {first_real}" in warnings[0],
         f"one warning naming both dumps and the one used ({first_real}): {r.stderr}")
    want = run([tool.path, "perfmap", first]).stdout
    soft(perf_map.read_text() == want, f"perf-{pid}.map is written from {first}")
    soft.verify()
