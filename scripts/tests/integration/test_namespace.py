"""A JVM as pid 1 of its own pid+mount namespaces with a private /tmp (as in a container),
profiled by perf on the host: what perf 6.1 resolves by itself while the JVM lives, what it
cannot after the JVM exits, and how scripts/bin/collect (watch, inject) closes that gap; and
scripts/bin/attach into such a JVM."""
import os
import re
import signal
import subprocess
import time

import pytest

from support import namespaces, perf
from support.checks import check, log
from support.jvm import finish, wait_line
from support.namespaces import NS_AGENT, NS_CLASSES, ns_pid_of, private_tmp, start_in_namespace, unshare
from support.output import agent_lines
from support.procs import run

from perf.report_runs import same_profiles

from .workload import METHOD_NAME, attach, check_map_file, read_dump, read_map, simple_method

PERF_SCRIPT_LINE = re.compile(r"^\s*(\d+)\s+([0-9a-f]+)\s+(.*)\s+\((.*)\)\s*$")
WORKLOAD_METHODS = ("Workload.sumMixed", "Workload.mix", "Workload.mapWork")


@pytest.fixture
def in_namespaces():
    namespaces.require()


@pytest.fixture
def perf_env(in_namespaces, work):
    """perf record -a must work here; perf's build-id cache goes to the test's directory."""
    perf.require_sampling(system_wide=True)
    return perf.env(work / "home")


def perf_samples(perf_env, perf_data, pid):
    """[(symbol, dso)] of pid's user-space samples."""
    r = run(["perf", "script", "-i", perf_data, "--pid", str(pid), "-F", "pid,ip,sym,dso"], timeout=300, env=perf_env)
    check(r.returncode == 0, f"perf script failed: {r.stderr}")
    samples = []
    for line in r.stdout.splitlines():
        m = PERF_SCRIPT_LINE.match(line)
        if m:
            samples.append((m.group(3).strip(), m.group(4)))
    return samples


def is_jit_dso(dso, hostpid):
    return dso in ("[unknown]", "//anon") or dso.endswith(f"perf-{hostpid}.map") or "/jitted-" in dso


def jit_summary(samples, hostpid):
    jit = [(s, d) for s, d in samples if is_jit_dso(d, hostpid)]
    resolved = [(s, d) for s, d in jit if s != "[unknown]"]
    java = [(s, d) for s, d in resolved if METHOD_NAME.match(s)]
    return jit, resolved, java


def start_perf_record(perf_env, cleanup, output):
    record = subprocess.Popen(["perf", "record", "-k", "1", "-e", "cpu-clock", "-F", "999", "-a", "-o", str(output)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=perf_env)
    cleanup.kill(record)
    time.sleep(1.0)
    check(record.poll() is None, "perf record died")
    return record


def stop_perf_record(record):
    record.send_signal(signal.SIGINT)
    _, err = record.communicate(timeout=120)
    # perf record exits with the status of the SIGINT it got; what counts is that it wrote the data.
    check("Captured and wrote" in err, f"perf record failed ({record.returncode}): {err}")


def test_namespace_perf(jvm, build, tool, work, cleanup, perf_env):
    """JVM in its own pid+mount namespace, perf on the host, reports after the JVM exited."""
    collect = build.scripts / "bin" / "collect"
    perf_data = work / "perf.data"
    dump_dir = work / "collected"
    record = start_perf_record(perf_env, cleanup, perf_data)
    p, hostpid = start_in_namespace(jvm, "Workload 60000 /tmp/stop", "dir=/tmp/jit,perfmap=on")
    nspids = ns_pid_of(hostpid)
    log(f"JVM host pid {hostpid}, NStgid {nspids}")
    check(len(nspids) == 2 and nspids[1] == 1, "the JVM is not pid 1 of its own namespace")
    host_map = f"/tmp/perf-{hostpid}.map"
    cleanup.remove(host_map)
    collector = subprocess.Popen([collect, "watch", "--dump-dir", dump_dir, "--interval", "0.1", str(hostpid)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cleanup.kill(collector)
    # collect watches JVMs while they live: the JVM stops (through its own /tmp) only once collect
    # has picked up its dump, however long a loaded machine takes to start collect.
    wait_line(p, "ready")
    picked_up = dump_dir / f"jit-{hostpid}.dump"
    deadline = time.monotonic() + 120
    while not picked_up.exists() and collector.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    check(picked_up.exists(), f"collect watch did not start copying the live JVM's dump into {picked_up}")
    time.sleep(2.0)  # the JVM runs on, watched
    open(f"/proc/{hostpid}/root/tmp/stop", "w").close()
    rc, out, err = finish(p)
    check(rc == 0 and "done" in out, f"JVM in namespace: exit {rc}: {err}")
    check(not os.path.exists(f"/proc/{hostpid}"), "the JVM still exists")
    collected, _ = collector.communicate(timeout=60)
    log(collected.rstrip())
    check(collector.returncode == 0, "collect watch failed")
    stop_perf_record(record)
    check(os.path.isfile(host_map), f"collect did not write {host_map}")
    copied = read_dump(tool, dump_dir / f"jit-{hostpid}.dump")
    check(copied.pid == hostpid and all(l.pid == hostpid for l in copied.loads),
          "the host copy still carries namespace pids")
    check(copied.counts["CODE_CLOSE"] == 1, "the host copy lacks the close record (copied before the end?)")
    map_entries = check_map_file(host_map, 0o644)
    check(any(simple_method(e[2]) == "Workload.sumMixed" for e in map_entries),
          "the copied map lacks Workload.sumMixed")

    perf_version = run(["perf", "version"]).stdout.strip()
    # 1) perf report straight from perf.data, the JVM gone: resolves through the copied map.
    samples = perf_samples(perf_env, perf_data, hostpid)
    jit, resolved, java = jit_summary(samples, hostpid)
    log(f"[{perf_version}] perf report, JVM exited, map copied to the host name: {len(samples)} samples, "
        f"{len(jit)} JIT, {len(resolved)} resolved, {len(java)} Java-named")
    check(len(jit) >= 50, "too few JIT samples to judge (is the machine overloaded?)")
    check(len(resolved) >= 0.95 * len(jit), "JIT samples unresolved with the host map copy")
    check(any(simple_method(s) in WORKLOAD_METHODS for s, _ in java), "no Workload method among the samples")

    # 2) Control: without the host copy, the same report cannot resolve anything (perf looks at
    # /tmp/perf-<hostpid>.map only, the container's /tmp is gone).
    aside = host_map + ".aside"
    os.rename(host_map, aside)
    cleanup.remove(aside)
    try:
        _, resolved_without, _ = jit_summary(perf_samples(perf_env, perf_data, hostpid), hostpid)
    finally:
        os.rename(aside, host_map)
    log(f"control, no host map: {len(resolved_without)} of {len(jit)} JIT samples resolved")
    check(len(resolved_without) <= 0.05 * len(jit), "the control resolved samples without the copy?")

    # 3) Plain perf inject: perf 6.1 ignores the marker of an exited namespaced JVM.
    # perf record -a also saw other JVMs' markers (other test runs); perf inject aborts on any
    # unreadable dump, so hide those first, changing nothing else.
    filtered = work / "perf.filtered.data"
    r = run([collect, "fix-perf-data", "--only-pid", str(hostpid), "--no-host-copies", perf_data, filtered],
            timeout=300)
    check(r.returncode == 0, f"collect fix-perf-data failed: {r.stderr}")
    plain = work / "perf.plain.data"
    r = run(["perf", "inject", "--jit", "-i", filtered, "-o", plain], timeout=300, env=perf_env)
    check(r.returncode == 0, f"perf inject failed: {r.stderr}")
    plain_jitted = [d for s, d in perf_samples(perf_env, plain, hostpid) if "/jitted-" in d]
    log(f"plain perf inject --jit: {len(plain_jitted)} samples in jitted-*.so")
    if perf_version.startswith("perf version 6.1."):
        check(not plain_jitted, "perf 6.1 was expected to ignore the marker of an exited namespaced JVM")

    # 5) jitdump report straight from perf.data with the collected dump: the perf.data reader's
    # profile of the whole system-wide recording is the one read from perf script's text.
    total, equal, diffs = same_profiles(tool.path, perf_env, perf_data, work / "differential", "container", "--dumps",
                                        dump_dir)
    check(total > 0 and equal == total, f"container: the perf.data reader's profile equals perf script's "
                                        f"({equal} of {total} samples)", "\n".join(diffs))

    # 4) collect inject: marker rewritten to the host copy, perf inject accepts it.
    injected = work / "perf.jit.data"
    r = run([collect, "inject", "--dump-dir", dump_dir, "--only-pid", str(hostpid), "-i", perf_data, "-o", injected],
            timeout=300, env=perf_env)
    log(r.stdout + r.stderr)
    check(r.returncode == 0, "collect inject failed")
    samples = perf_samples(perf_env, injected, hostpid)
    jit, resolved, java = jit_summary(samples, hostpid)
    in_jitted = [(s, d) for s, d in resolved if "/jitted-" in d and d.startswith(str(dump_dir))]
    log(f"collect inject: {len(jit)} JIT samples, {len(resolved)} resolved, {len(in_jitted)} in "
        f"{dump_dir}/jitted-{hostpid}-*.so")
    check(len(resolved) >= 0.95 * len(jit), "JIT samples unresolved after collect inject")
    check(len(in_jitted) >= 0.8 * len(jit), "the jitdump was not used")
    check(any(simple_method(s) in WORKLOAD_METHODS for s, _ in in_jitted),
          "no Workload method resolved through the jitdump")
    check(all(f"/jitted-{hostpid}-" in d for _, d in in_jitted), "jitted DSOs named with the wrong pid")


def test_namespace_perf_alive(jvm, build, work, cleanup, perf_env):
    """Same setup, but perf inject and report run while the JVM still lives: perf 6.1 needs no help."""
    perf_data = work / "perf.data"
    record = start_perf_record(perf_env, cleanup, perf_data)
    p, hostpid = start_in_namespace(jvm, "Workload 60000 /tmp/stop", "dir=/tmp/jit,perfmap=on")
    log(f"JVM host pid {hostpid}, NStgid {ns_pid_of(hostpid)}")
    wait_line(p, "ready")
    time.sleep(1.5)
    stop_perf_record(record)
    check(not os.path.exists(f"/tmp/perf-{hostpid}.map"), "a host map exists; this test needs none")
    try:
        samples = perf_samples(perf_env, perf_data, hostpid)
        jit, resolved, java = jit_summary(samples, hostpid)
        log(f"perf report, JVM alive, no host files: {len(jit)} JIT samples, {len(resolved)} resolved "
            f"(through /proc/{hostpid}/root/tmp/perf-1.map)")
        check(len(jit) >= 50 and len(resolved) >= 0.95 * len(jit), "live container map not used")
        injected = work / "perf.jit.data"
        # Nothing is redirected (the JVM lives); --only-pid only hides other processes' markers.
        r = run([build.scripts / "bin" / "collect", "inject", "--only-pid", str(hostpid), "-i", perf_data, "-o", injected],
                timeout=300, env=perf_env)
        check(r.returncode == 0, f"perf inject failed: {r.stdout}{r.stderr}")
        # The ELF files land in the container's dump directory (perf enters its mount namespace).
        samples = perf_samples(perf_env, injected, hostpid)
        jit, resolved, java = jit_summary(samples, hostpid)
        in_jitted = [(s, d) for s, d in resolved if "/jitted-" in d]
        log(f"plain perf inject, JVM alive: {len(jit)} JIT samples, {len(in_jitted)} in jitted-*.so "
            f"(e.g. {in_jitted[0][1] if in_jitted else '-'})")
        check(len(in_jitted) >= 0.8 * len(jit), "perf inject did not use the live container's jitdump")
    finally:
        # Ask the JVM to stop through its own /tmp.
        open(f"/proc/{hostpid}/root/tmp/stop", "w").close()
        rc, _, err = finish(p)
    check(rc == 0, f"JVM exit {rc}: {err}")
    # Reported again after the exit: the jitted-1-*.so files were written into the container's
    # tmpfs, now gone; perf finds them in its build-id cache (~/.debug), where inject put them.
    jit, resolved, java = jit_summary(perf_samples(perf_env, injected, hostpid), hostpid)
    log(f"same injected data reported after the JVM exited: {len(resolved)} of {len(jit)} resolved")
    check(len(resolved) >= 0.95 * len(jit), "injected while alive, unresolved after exit")


def test_namespace_attach(jvm, build, tool, work, in_namespaces):
    """scripts/bin/attach from the host into a JVM in its own pid+mount namespace, then collect."""
    p = unshare(jvm, private_tmp(jvm) + f"exec {jvm.java} -cp {NS_CLASSES} Workload 20000 /tmp/stop")
    wait_line(p, "ready")
    with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
        hostpid = int(f.read().split()[0])
    check(ns_pid_of(hostpid)[-1] == 1, "the JVM is not pid 1 of its namespace")
    r = attach(build.scripts, NS_AGENT, hostpid, "dir=/tmp/jit,perfmap=on")
    check(r.returncode == 0 and "writing /tmp/jit/jit-1.dump" in r.stdout, "attach into the namespace failed")
    root = f"/proc/{hostpid}/root"
    check(os.path.isfile(root + "/tmp/perf-1.map"), "no /tmp/perf-1.map inside the container")
    collected = work / "collected"
    r = run([build.scripts / "bin" / "collect", "watch", "--once", "--map-dir", collected, "--dump-dir", collected,
             str(hostpid)], timeout=60)
    log(r.stdout + r.stderr)
    check(r.returncode == 0, "collect watch --once failed")
    open(root + "/tmp/stop", "w").close()
    rc, _, err = finish(p)
    check(rc == 0 and not agent_lines(err), f"JVM exit {rc}: {err}")
    entries = read_map(collected / f"perf-{hostpid}.map")
    check(any(simple_method(e[2]) == "Workload.mix" for e in entries), "replayed Workload.mix missing from the map")
    dump = read_dump(tool, collected / f"jit-{hostpid}.dump")
    check(any(simple_method(l.name) == "Workload.mix" for l in dump.loads), "Workload.mix missing from the dump")
    check(dump.pid == hostpid, "the copy's header pid was not rewritten")
