"""perf-<pid>.map: streamed while the JVM runs, compacted to the live code (checked against
jcmd Compiler.codelist), with the documented modes; planted files and symlinks at its default
path (/tmp) are never followed or overwritten."""
import json
import os
import time

from support.checks import check, log
from support.jvm import finish, wait_line
from support.output import agent_lines, one_dump

from .workload import METHOD_NAME, check_map_file, codelist, read_dump, read_map, simple_method, start_workload


def test_perfmap_unload(jvm, tool, work):
    out = work / "out"
    go, stop = work / "go", work / "stop"
    stats = work / "stats.json"
    unload_log = work / "unload.log"
    # backdate=off: load timestamps are the event times, compared with the codelist time below.
    # mode=0664 under umask 027: the files are 0640, and compaction must keep that.
    flags = [jvm.agent_arg(f"dir={out},perfmap={out},stats={stats},backdate=off,mode=0664"),
             f"-Xlog:class+unload=info:file={unload_log}"]
    p = jvm.start("Unload", "900", go, stop, jvm_args=flags, umask=0o027)
    loaded = wait_line(p, "loaded", timeout=120)
    pid = p.pid
    map_path = out / f"perf-{pid}.map"
    # Streaming: a reader in the middle of the run sees the new code, within the writer's poll
    # (flush_ms, 100 ms; up to 8 x that after polls that found nothing).
    deadline = time.monotonic() + 5
    while True:
        live = read_map(map_path)
        workers_live = sum(1 for e in live if e[2].startswith("Unload$Worker.applyAsInt"))
        if workers_live >= 100 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    log(f"{loaded}; mid-run map: {len(live)} lines, {workers_live} Worker entries")
    check(workers_live >= 100, f"the mid-run map shows only {workers_live} Worker entries")
    go.touch()
    wait_line(p, "ready", timeout=120)
    codelist_time = time.monotonic_ns()  # CLOCK_MONOTONIC, the dump's clock
    alive = codelist(jvm.jdk.jcmd, pid)
    # The map is compacted while the JVM runs, soon after entries go stale.
    deadline = time.monotonic() + 5
    while True:
        running = read_map(map_path)
        stale_running = sum(1 for e in running if e[2].startswith("Unload$Worker"))
        if stale_running == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    check_map_file(map_path, 0o640)
    log(f"map after the collections, JVM still running: {len(running)} lines, {stale_running} stale")
    check(stale_running == 0, f"{stale_running} stale Worker entries in the map while running")
    stop.touch()
    rc, _, err = finish(p)
    check(rc == 0 and not agent_lines(err), f"exit {rc}: {err}")
    unloaded = sum(1 for l in unload_log.read_text().splitlines() if "Unload$Worker" in l)
    check(unloaded >= 850, f"only {unloaded} Worker classes were unloaded; the test proves nothing")
    s = json.loads(stats.read_text())
    log(f"classes unloaded: {unloaded}; agent: {s['events']['compiled_method_unload']} unloads, "
        f"{s['written']['perfmap_compactions']} compactions, {s['written']['perfmap_lines']} lines streamed")
    check(s["events"]["compiled_method_unload"] >= 900, "too few CompiledMethodUnload events")
    check(s["written"]["perfmap_compactions"] >= 2, "the map was not compacted both while running and at exit")
    dump = read_dump(tool, one_dump(out))
    worker_loads = sum(1 for l in dump.loads if l.name.startswith("Unload$Worker.applyAsInt"))
    check(worker_loads >= 900, f"only {worker_loads} Worker loads in the dump")
    entries = check_map_file(map_path, 0o640)
    check((os.stat(one_dump(out)).st_mode & 0o777) == 0o640, "the dump's mode is not mode= minus the umask")
    check(not list(out.glob(f"perf-{pid}.map.*")), "temporary files were left behind")
    stale = [e for e in entries if e[2].startswith("Unload$Worker")]
    check(not stale, f"{len(stale)} map entries point at unloaded code: {stale[:5]}")
    methods = [e for e in entries if METHOD_NAME.match(e[2])]
    last_load = {}
    for l in dump.loads:
        last_load[l.code_addr] = l.timestamp
    not_alive = [e for e in methods if e[0] not in alive]
    # The JVM idles between Compiler.codelist and its exit, but may still compile a little
    # (a native wrapper, an OSR method): only code loaded before the list was taken must be in it.
    unexplained = [e for e in not_alive if last_load.get(e[0], 0) < codelist_time]
    log(f"final map: {len(entries)} lines, {len(methods)} methods, {len(alive)} nmethods in the code cache, "
        f"{len(not_alive)} map methods not in it, of which {len(not_alive) - len(unexplained)} compiled after the list")
    check(not unexplained, f"map entries for code that is no longer in the code cache: "
          f"{[(hex(a), n) for a, _, n in unexplained[:10]]}")
    live_methods = set(alive)
    method_starts = {e[0] for e in methods}
    covered = sum(1 for a in live_methods if a in method_starts)
    log(f"code cache nmethods present in the map: {covered}/{len(live_methods)}")
    check(covered >= 0.95 * len(live_methods), "the final map misses live nmethods")


def test_perfmap_files(jvm, work, cleanup):
    """Default location, mode and ownership; planted files and symlinks are never followed."""
    # Default: /tmp/perf-<pid>.map, mode 0600, owned by us; mode= is honoured.
    out = work / "out"
    for mode_option, mode in (("", 0o600), (",mode=0644", 0o644)):
        p, pid, stop = start_workload(jvm, work, jvm_args=[jvm.agent_arg(f"dir={out},perfmap=on{mode_option}")])
        path = f"/tmp/perf-{p.pid}.map"
        cleanup.remove(path)
        check(os.path.exists(path), f"{path} missing while the JVM runs")
        stop.touch()
        rc, _, err = finish(p)
        check(rc == 0 and not err, f"exit {rc}: {err}")
        entries = check_map_file(path, mode)
        check(any(simple_method(e[2]) == "Workload.mix" for e in entries), "Workload.mix not in the map")
        stop.unlink()
        log(f"default map {path}: mode {mode:o}, {len(entries)} lines: ok")

    # Planted things at /tmp/perf-<pid>.map: the JVM's pid is the shell's, which execs it.
    victim = work / "victim"
    victim.write_text("sentinel\n")
    linked_dir = work / "linked"
    linked_dir.mkdir()
    cases = [
        ("symlink to an existing file", f"ln -s {victim} /tmp/perf-$$.map"),
        ("dangling symlink", f"ln -s {work / 'created-through-symlink'} /tmp/perf-$$.map"),
        ("symlink to a directory", f"ln -s {linked_dir} /tmp/perf-$$.map"),
    ]
    if os.geteuid() == 0:
        cases.append(("regular file of another user",
                      "echo foreign > /tmp/perf-$$.map && chown 65534:65534 /tmp/perf-$$.map"))
    for name, plant in cases:
        script = (f"{plant} && exec {jvm.java} {jvm.agent_arg(f'dir={out},perfmap=on')} "
                  f"-cp {jvm.classes} Workload 300")
        p = jvm.spawn(["bash", "-c", script])
        path = f"/tmp/perf-{p.pid}.map"
        cleanup.remove(path)
        rc, stdout, err = finish(p)
        check(rc == 0 and "done" in stdout, f"{name}: JVM exit {rc}: {err}")
        check("cannot create perf map" in err, f"{name}: no warning about the perf map: {err!r}")
        check(victim.read_text() == "sentinel\n", f"{name}: the symlink target was written")
        check(not (work / "created-through-symlink").exists(), f"{name}: a file was created through the link")
        check(not list(linked_dir.glob("perf-*")), f"{name}: a file was created in the linked directory")
        if "symlink" in name:
            check(os.path.islink(path), f"{name}: the planted symlink was replaced")
        else:
            with open(path) as f:
                check(f.read() == "foreign\n", f"{name}: another user's file was modified")
        log(f"{name}: not followed, JVM ran on, warned: ok")
