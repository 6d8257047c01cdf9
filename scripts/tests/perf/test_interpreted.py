"""Interpreted frames named (perf-java --interp): perf copies each sample's user registers and
stack (--call-graph dwarf), the agent writes its method table (interp=on), and `jitdump report`
walks HotSpot's frames in the copy, naming every interpreted frame by method and line.

test_interpreted_chains (and its per-JDK variants): InterpChains runs interpreted (-Xint), each of
three threads in one known call chain whose hot loop sits on a marked line, so the thread a sample
comes from says which method, which line and which callers it was in. Recorded with JFR in the
same JVM (jdk.ExecutionSample, the JVM's own stack walker: the independent reference for which
methods run interpreted and in what proportions). Of the samples whose pc is in the interpreter:
>= 99 % get the right method, >= 95 % the right line, >= 99 % the whole chain of interpreted
callers in order; per thread, the hot method's share agrees with JFR's within 3 points, JFR
calls those frames Interpreted and puts them on the same lines. perf inject --jit reads the
recording without a word about the table beside the dump. Every output shows them by name with
their kind: folded stacks (_[0]), the per-line table (File.java:N ... [interpreted]), pprof
(go tool pprof -top), the profile the flame graph is drawn from (kind "interpreted").

test_interpreted_service and test_interpreted_javac_startup: a service under load (the JDK's own
HTTP server, scripts/bench/java/HttpLoad.java) and javac's start-up, in mixed mode: the share of
interpreted frames named, of all and of those whose method slot the stack copy covered (what the
walk could read at all), is in summary.json; no interpreted frame the copy covers stays anonymous
but frames HotSpot is in the middle of building (deoptimization unpacking frames, a handful in a
hundred thousand), which the test allows and counts.
"""
from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

from support.checks import check, figure, log
from support.jvm import compile_java
from support.prereq import require_command

from .report_runs import Model
from .runs import fresh, run

JAVA = Path(__file__).resolve().parent / "java"
SECONDS = "4"
# The three threads of InterpChains: the hot method, the mark of its hot line, and the chain of
# interpreted frames from the hot method outwards.
CHAINS = {
    "chain-a": ("InterpChains.hotA", "hot-a", ["InterpChains.hotA", "InterpChains.a2", "InterpChains.a1",
                                                "InterpChains.chainA"]),
    "chain-b": ("InterpChains.hotB", "hot-b", ["InterpChains.hotB", "InterpChains.b1", "InterpChains.chainB"]),
    "chain-c": ("InterpChains.hotC", "hot-c", ["InterpChains.hotC", "InterpChains.chainC"]),
}


def marks() -> dict:
    """{'hot-a': N, 'call-a2': N, ...}: the lines InterpChains.java marks."""
    out = {}
    for n, line in enumerate((JAVA / "InterpChains.java").read_text().splitlines(), 1):
        m = re.search(r"// ((?:hot|call)-[\w-]+)$", line)
        if m:
            out[m.group(1)] = n
    return out


def leaf_and_java(model: Model, sample: dict) -> tuple:
    """(the innermost frame that is not the kernel's, [the Java frames' names, innermost first])."""
    frames = [f for loc in sample["locations"] for f in model.chain(loc)]
    user = [f for f in frames if f[1] != "kernel"]
    java = [f[0] for f in user if f[1] in ("interpreted", "compiled", "inlined")]
    return (user[0] if user else None), java


def jfr_samples(jdk, recording: Path) -> dict:
    """thread -> Counter of (method, line, type) of JFR's top frames (jdk.ExecutionSample)."""
    jfr = Path(jdk.home) / "bin" / "jfr"
    check(jfr.is_file(), f"{jfr} missing: JFR's command-line tool comes with the JDK")
    p = run([jfr, "print", "--json", "--events", "jdk.ExecutionSample", recording], timeout=300)
    out = collections.defaultdict(collections.Counter)
    for event in json.loads(p.stdout)["recording"]["events"]:
        values = event["values"]
        thread = (values.get("sampledThread") or {}).get("javaName")
        frames = (values.get("stackTrace") or {}).get("frames") or []
        if thread in CHAINS and frames:
            top = frames[0]
            klass = top["method"]["type"]["name"].replace("/", ".")
            out[thread][(klass + "." + top["method"]["name"], top["lineNumber"], top["type"])] += 1
    return out


def check_chains(ctx, jdk) -> None:
    require_command("go", "golang-go")
    classes = compile_java(jdk, [JAVA / "InterpChains.java"], ctx.build.tests / "classes" / f"interp-{jdk.name}",
                           options=["-g"])
    run_dir = fresh(ctx.work / f"chains-{jdk.name}")
    recording = ctx.work / f"chains-{jdk.name}.jfr"
    ctx.perf_java("-q", "--interp", "-o", run_dir, "--", jdk.java, "-Xint",
                  f"-XX:StartFlightRecording=filename={recording},settings=profile", "-cp", classes, "InterpChains",
                  SECONDS)
    lines = marks()
    summary = json.loads((run_dir / "summary.json").read_text())
    walked = summary["interpreted_frames"]
    log(f"JDK {jdk.feature}: {summary['samples']} samples, interpreted frames {walked}")
    check(walked["jvms_with_method_table"] == 1 and walked["walks"] > 0, f"nothing was walked: {walked}")

    # The method table beside the dump does not disturb perf: perf inject --jit reads the dump and
    # says nothing.
    injected = ctx.perf("inject", "--jit", "-i", run_dir / "perf.data", "-o", ctx.work / f"inject-{jdk.name}.data")
    check(not injected.stderr.strip(), f"perf inject --jit warned beside the method table: {injected.stderr[:2000]}")

    # Ours, per sample: the right method, line and chain for the thread it came from.
    model_path = ctx.work / f"profile-{jdk.name}.json"
    run([ctx.tool.path, "report", run_dir / "perf.data", "-q", "--profile-json", model_path], env=ctx.env, timeout=900)
    model = Model(model_path)
    counts = collections.Counter()
    ours_hot = collections.Counter()
    ours_total = collections.Counter()
    wrong = collections.Counter()
    for sample in model.samples:
        thread = sample["thread"]
        if thread not in CHAINS:
            continue
        leaf, java = leaf_and_java(model, sample)
        if leaf is None or leaf[1] != "interpreted":
            continue  # the pc is not in the interpreter
        n = sample["count"]
        hot, mark, chain = CHAINS[thread]
        counts["interpreted"] += n
        ours_total[thread] += n
        if leaf[0] == hot:
            counts["method"] += n
            ours_hot[thread] += n
        if leaf[0] == hot and leaf[2] == lines[mark]:
            counts["line"] += n
        if java[:len(chain)] == chain:
            counts["chain"] += n
        else:
            wrong[(thread, tuple(java[:5]))] += n
    total = counts["interpreted"]
    check(total > 1000, f"only {total} samples of the three threads in the interpreter")
    shares = {k: counts[k] / total for k in ("method", "line", "chain")}
    log(f"of {total} samples in the interpreter: right method {100 * shares['method']:.2f} %, right line "
        f"{100 * shares['line']:.2f} %, whole chain {100 * shares['chain']:.2f} %; other chains {wrong.most_common(4)}")
    figure(f"interp_chains_jdk{jdk.feature}_method_percent", round(100 * shares["method"], 2))
    figure(f"interp_chains_jdk{jdk.feature}_line_percent", round(100 * shares["line"], 2))
    figure(f"interp_chains_jdk{jdk.feature}_chain_percent", round(100 * shares["chain"], 2))
    check(shares["method"] >= 0.99, f"right method for {100 * shares['method']:.2f} % (< 99 %)")
    check(shares["line"] >= 0.95, f"right line for {100 * shares['line']:.2f} % (< 95 %)")
    check(shares["chain"] >= 0.99, f"whole chain for {100 * shares['chain']:.2f} % (< 99 %): {wrong.most_common(4)}")
    check(walked["covered_named_share"] == 1.0, f"covered interpreted frames left anonymous: {walked}")

    # JFR's samples of the same run: the same methods interpreted, on the same lines, in the same
    # proportions.
    reference = jfr_samples(jdk, recording)
    for thread, (hot, mark, _) in CHAINS.items():
        theirs = reference[thread]
        n = sum(theirs.values())
        check(n >= 50, f"JFR sampled {thread} only {n} times")
        interpreted = sum(c for (_, _, kind), c in theirs.items() if kind == "Interpreted")
        jfr_hot = sum(c for (method, _, _), c in theirs.items() if method == hot)
        jfr_line = sum(c for (method, line, _), c in theirs.items() if method == hot and line == lines[mark])
        ours_share = ours_hot[thread] / max(ours_total[thread], 1)
        log(f"{thread}: JFR {n} samples, {interpreted} interpreted, {hot} {100 * jfr_hot / n:.1f} % "
            f"(at line {lines[mark]}: {jfr_line}); ours {100 * ours_share:.1f} % of {ours_total[thread]}")
        check(interpreted >= 0.99 * n, f"JFR says {thread} ran compiled code under -Xint: {theirs.most_common(5)}")
        check(jfr_line >= 0.95 * jfr_hot, f"JFR puts {hot} elsewhere than line {lines[mark]}: {theirs.most_common(5)}")
        check(abs(ours_share - jfr_hot / n) <= 0.03,
              f"{thread}: {hot} has {100 * ours_share:.1f} % of our samples, {100 * jfr_hot / n:.1f} % of JFR's")

    # Every output names them with their kind.
    text = run([ctx.perf_java_path, "folded", "--annotate", "-o", run_dir], env=ctx.env).stdout
    stacks = [(s.split(";"), c) for s, c in (l.rsplit(" ", 1) for l in text.splitlines())]
    for hot, _, chain in CHAINS.values():
        annotated = [f + "_[0]" for f in reversed(chain)]
        check(any(frames[-len(chain):] == annotated for frames, _ in stacks),
              f"no folded stack ends {';'.join(annotated)}")
    srcline = (run_dir / "srcline.txt").read_text()
    for hot, mark, _ in CHAINS.values():
        check(re.search(rf"InterpChains\.java:{lines[mark]}\s+{re.escape(hot)} \[interpreted\]", srcline),
              f"srcline.txt has no row InterpChains.java:{lines[mark]} {hot} [interpreted]:\n{srcline[:1500]}")
    top = run(["go", "tool", "pprof", "-top", run_dir / "profile.pb.gz"], env=ctx.env).stdout
    for hot, _, _ in CHAINS.values():
        check(f"{hot} [interpreted]" in top, f"go tool pprof -top does not show {hot} [interpreted]:\n{top[:1500]}")
    kinds = {(f["name"], f["kind"], f["file"]) for f in model.functions}
    for hot, _, _ in CHAINS.values():
        check((hot, "interpreted", "InterpChains.java") in kinds, f"the flame graph's profile has no interpreted {hot}")


@pytest.mark.meson(timeout=900, every_jdk=True)
def test_interpreted_chains(ctx):
    check_chains(ctx, ctx.jdk)


def check_mixed(ctx, name: str, command: list) -> None:
    """A mixed-mode JVM under perf-java --interp: what the walks named, in summary.json."""
    run_dir = fresh(ctx.work / name)
    ctx.perf_java("-q", "--interp", "-o", run_dir, "--", *command)
    walked = json.loads((run_dir / "summary.json").read_text())["interpreted_frames"]
    anonymous = walked["covered"] - walked["named"]
    log(f"{name}: {walked}")
    for key in ("named_share", "covered_named_share", "walks_complete_share"):
        figure(f"interp_{name}_{key}", round(walked[key], 6))
    check(walked["frames"] > 1000, f"{name}: only {walked['frames']} interpreted frames walked")
    check(walked["named_share"] >= 0.99, f"{name}: {walked['named_share']:.4f} of interpreted frames named")
    # Frames HotSpot is still building (a deoptimized frame being unpacked) hold no method yet.
    check(anonymous <= max(2, walked["covered"] // 5000),
          f"{name}: {anonymous} interpreted frames the stack copy covers stay anonymous: {walked}")


@pytest.mark.meson(timeout=900)
def test_interpreted_service(ctx):
    """The JDK's HTTP server under load (a thread pool's workers, entered interpreted once)."""
    classes = compile_java(ctx.jdk, [ctx.build.repo / "scripts" / "bench" / "java" / "HttpLoad.java"],
                           ctx.build.tests / "classes" / f"httpload-{ctx.jdk.name}", options=["-g"])
    check_mixed(ctx, "service", [ctx.jdk.java, "-cp", classes, "HttpLoad", "6", "2"])


@pytest.mark.meson(timeout=900)
def test_interpreted_javac_startup(ctx):
    """javac's start-up: its first seconds, compiling a handful of sources."""
    root, listing = ctx.javac_sources()
    few = ctx.work / "few.txt"
    few.write_text("\n".join(listing.read_text().split()[:20]) + "\n")
    out = fresh(ctx.work / "javac-out")
    check_mixed(ctx, "javac_startup", [ctx.jdk.javac, "--patch-module", f"java.base={root / 'java.base'}", "-d", out,
                                       "-nowarn", "-proc:none", "-Xlint:none", "@" + str(few)])
