"""Late attach (scripts/bin/attach, i.e. jcmd JVMTI.agent_load): what was compiled before the attach
is replayed, a second load does not double the output, JDK 21+'s refusal is explained, and a
JVM of another user gets files of that user."""
import os
import tempfile

import pytest

from support import jdks
from support.checks import check, log
from support.jvm import finish, wait_line
from support.output import agent_lines, one_dump
from support.prereq import optional, require_command, require_root

from .workload import attach, codelist, exact_duplicates, read_dump, read_map, simple_method, start_workload


@pytest.fixture
def newest_jvm(jvm):
    """The Workload classes on the newest JDK 21+ under /usr/lib/jvm (optional: Debian 12 has none)."""
    jdk = jdks.newest(21)
    if jdk is None:
        optional("no JDK 21+ under /usr/lib/jvm (Debian 12 ships only 17; install one, e.g. Temurin 25)")
    log(f"using JDK {jdk.feature}: {jdk.home}")
    return jvm.with_jdk(jdk)


def replay(jvm, build, tool, work):
    p, pid, stop = start_workload(jvm, work)
    out = work / "out"
    before = codelist(jvm.jdk.jcmd, pid)
    r = attach(build.scripts, jvm.agent, pid, f"dir={out}")
    check(r.returncode == 0, "scripts/bin/attach failed")
    check("writing " in r.stdout, "scripts/bin/attach did not confirm the dump")
    after = codelist(jvm.jdk.jcmd, pid)
    stop.touch()
    rc, _, err = finish(p)
    check(rc == 0, f"JVM exit {rc}: {err}")
    dump = read_dump(tool, one_dump(out))
    addrs = {load.code_addr: load for load in dump.loads}
    # Everything compiled before the attach that was still there after it was alive during the
    # replay: all of it must be in the dump, at the same address, under the same method.
    required = {a: n for a, n in before.items() if a in after}
    missing = {a: n for a, n in required.items() if a not in addrs}
    log(f"compiled before attach: {len(before)}, alive across the attach: {len(required)}, "
        f"in the dump: {len(required) - len(missing)}; dump loads: {len(dump.loads)}")
    check(not missing, f"{len(missing)} methods compiled before the attach are missing: "
          f"{sorted(missing.values())[:20]}")
    wrong = []
    for a, name in required.items():
        ours = addrs[a].name
        if name.startswith(("java.lang.invoke.", "jdk.internal.")):
            continue  # MethodHandle intrinsics are mislabelled by JVMTI itself
        if simple_method(name) != simple_method(ours):  # hidden classes: "Workload$$Lambda$14/0x..." in both
            wrong.append((name, ours))
    check(not wrong, f"names differ from Compiler.codelist: {wrong[:10]}")
    for method in ("Workload.mix", "Workload.sumMixed", "Workload.mapWork"):
        check(any(simple_method(l.name) == method for l in dump.loads), f"{method} not in the dump")
    check(dump.counts["CODE_CLOSE"] == 1, "no JIT_CODE_CLOSE record at the end")
    check(any(l.name == "Interpreter" for l in dump.loads), "stubs (Interpreter) were not replayed")
    dups = exact_duplicates(dump.loads)
    check(dups == 0, f"{dups} duplicate loads (replay racing with live events must be deduplicated)")
    return err


def test_attach_replay(jvm, build, tool, work):
    err = replay(jvm, build, tool, work)
    check(not agent_lines(err), f"the agent printed on the JVM's stderr: {err}")


def test_attach_replay_jdk21plus(newest_jvm, build, tool, work):
    err = replay(newest_jvm, build, tool, work)
    check("A JVM TI agent has been loaded dynamically" in err,
          f"JEP 451 warning expected on JDK {newest_jvm.jdk.feature}: {err}")


def test_attach_refused_jdk21plus(newest_jvm, build, work):
    """-XX:-EnableDynamicAgentLoading: scripts/bin/attach fails clearly, the JVM runs on."""
    p, pid, stop = start_workload(newest_jvm, work, jvm_args=["-XX:-EnableDynamicAgentLoading"])
    r = attach(build.scripts, newest_jvm.agent, pid, f"dir={work / 'out'}")
    check(r.returncode != 0, "attach should fail")
    check("refuses dynamic agents" in r.stderr and "-XX:+EnableDynamicAgentLoading" in r.stderr,
          "the failure does not explain the remedy")
    check(not (work / "out").exists(), "the refused agent wrote output")
    stop.touch()
    rc, _, err = finish(p)
    check(rc == 0, f"the JVM did not survive the refused attach: {rc} {err}")


def test_attach_other_user(jvm, build, tool, cleanup):
    """Run as root against a JVM of another user: jcmd runs as that user, files belong to it."""
    require_root("to start a JVM as another user")
    require_command("setpriv", "util-linux")
    out = tempfile.mkdtemp(prefix="integ-nobody-", dir="/tmp")
    cleanup.remove(out)
    os.chown(out, 65534, 65534)
    stop = os.path.join(out, "stop")
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", jvm.java, "-cp", str(jvm.classes),
               "Workload", "20000", stop]
    p = jvm.spawn(command, env={"HOME": out}, cwd=out)
    pid = int(wait_line(p, "ready").split()[1])
    cleanup.remove(f"/tmp/perf-{pid}.map")
    r = attach(build.scripts, jvm.agent, pid, f"dir={out}/jit,perfmap=on")
    check(r.returncode == 0, "attach to another user's JVM failed")
    open(stop, "w").close()
    rc, _, err = finish(p)
    check(rc == 0 and not agent_lines(err), f"exit {rc}: {err}")
    for path in (one_dump(os.path.join(out, "jit")), f"/tmp/perf-{pid}.map"):
        st = os.stat(path)
        check(st.st_uid == 65534 and (st.st_mode & 0o777) == 0o600, f"{path}: uid {st.st_uid} mode {st.st_mode:o}")
    entries = read_map(f"/tmp/perf-{pid}.map")
    check(any(simple_method(e[2]) == "Workload.mix" for e in entries), "Workload.mix missing")


def check_single_output(tool, p, stop, first_dir, second_dir):
    stop.touch()
    rc, _, err = finish(p)
    check(rc == 0, f"JVM exit {rc}: {err}")
    second_files = os.listdir(second_dir) if os.path.exists(second_dir) else []
    check(not second_files, f"the second load wrote output: {second_files}")
    dump = read_dump(tool, one_dump(first_dir))
    dups = exact_duplicates(dump.loads)
    log(f"dump loads: {len(dump.loads)}, exact duplicates: {dups}")
    check(dups == 0, f"{dups} duplicate loads")
    maps = list(first_dir.glob("perf-*.map"))
    check(len(maps) == 1, f"expected one perf map, found {maps}")
    starts = [e[0] for e in read_map(maps[0])]
    check(len(starts) == len(set(starts)), "the perf map has duplicate entries")
    return err


def test_attach_twice(jvm, build, tool, work):
    first, second = work / "first", work / "second"
    p, pid, stop = start_workload(jvm, work)
    check(attach(build.scripts, jvm.agent, pid, f"dir={first},perfmap={first}").returncode == 0, "first attach failed")
    # Other options while the agent runs: nothing changes, and both the script (exit status) and
    # the agent (a warning on the JVM's stderr) say the options were not applied.
    r = attach(build.scripts, jvm.agent, pid, f"dir={second},perfmap={second},log=info", force=True)
    check(r.returncode != 0 and "not applied" in r.stderr, "a forced second attach should say its options were ignored")
    err = check_single_output(tool, p, stop, first, second)
    check("warning: already running in this JVM" in err and "are ignored" in err,
          f"the second load was not recognized: {err}")


def test_attach_after_agentpath(jvm, build, tool, work):
    first, second = work / "first", work / "second"
    p, pid, stop = start_workload(jvm, work, jvm_args=[jvm.agent_arg(f"dir={first},perfmap={first}")])
    r = attach(build.scripts, jvm.agent, pid, f"dir={second},perfmap={second}")
    check(r.returncode != 0 and "already runs" in r.stdout and "not applied" in r.stderr,
          "scripts/bin/attach should notice the running agent and say the options were not applied")
    r = attach(build.scripts, jvm.agent, pid, f"dir={second},perfmap={second},log=info", force=True)
    check(r.returncode != 0 and "not applied" in r.stderr, "a forced attach should say its options were ignored")
    err = check_single_output(tool, p, stop, first, second)
    check("warning: already running in this JVM" in err and "are ignored" in err,
          f"the second load was not recognized: {err}")
