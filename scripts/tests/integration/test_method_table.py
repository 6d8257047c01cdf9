"""The method table (interp=on): jit-PID.dump.methods, which names HotSpot's interpreted frames.

Read through `jitdump methods --json` and checked against each class file itself
(support/classfile.py: bytecode lengths and line tables straight from the bytes), on a real JVM
running interpreted (-Xint): every method of the workload is there with its class, source file,
bytecode size and line table; classes loaded before the agent's writer attached hold from the
start (timestamp 0); unloaded classes' methods are retired and their Method*s, reused by HotSpot,
recorded again; a redefined method is recorded again with its new bytecodes and lines. On a JVM
whose layout the agent does not know (faked by vmstructs_shim.cc: VMStructs hidden, or the
interpreter's frame moved), interp=on says once why it is off and everything else is as without
it. Without interp=on there is no table and no ClassPrepare event.
"""
import subprocess
import time
from collections import defaultdict
from pathlib import Path

import pytest

from support import classfile
from support.checks import check, log
from support.jvm import finish, wait_line
from support.output import agent_lines, dumps_in, one_dump, read_stats
from support.visits import check_left_nothing

from .workload import attach

MAIN = "InterpTable"


def run_table(jvm, work, *args, agent_options="", jvm_args=(), env=None):
    out, stats = work / "out", work / "stats.json"
    options = f"dir={out},stats={stats},interp=on" + (f",{agent_options}" if agent_options else "")
    r = jvm.run(MAIN, *args, agent=options, jvm_args=["-Xint", *jvm_args], env=env, timeout=180)
    check(r.returncode == 0, f"JVM exit {r.returncode}", r.stderr.decode(errors="replace"))
    return r, out, stats


def vm_version(stdout: bytes) -> str:
    lines = [l for l in stdout.decode().splitlines() if l.startswith("vm ")]
    check(len(lines) == 1, f"the workload printed no version: {stdout!r}")
    return lines[0][3:]


def methods_of(table: dict, klass: str) -> list:
    return [m for m in table["methods"] if m["class"] == klass]


def check_like_class_file(records: list, reference: classfile.ClassFile, what: str) -> None:
    """Each method of the class file is in `records` with its size, descriptor and lines."""
    by_key = defaultdict(list)
    for m in records:
        by_key[(m["name"], m["descriptor"])].append(m)
    for method in reference.methods:
        found = by_key.get((method.name, method.descriptor), [])
        check(found, f"{what}: {method.name}{method.descriptor} is not in the table")
        for m in found:
            check(m["code_size"] == method.code_length,
                  f"{what}: {method.name} has {m['code_size']} bytes of bytecode in the table, "
                  f"{method.code_length} in the class file")
            check([tuple(x) for x in m["lines"]] == method.lines,
                  f"{what}: {method.name}'s lines {m['lines']} differ from the class file's {method.lines}")
            check(not m["native"], f"{what}: {method.name} is marked native")


# What depends on the JVM's internals runs on every JDK.
@pytest.mark.meson(every_jdk=True)
def test_method_table(jvm, tool, work, build):
    r, out, stats = run_table(jvm, work, "table")
    check(not agent_lines(r.stderr), f"the agent printed: {agent_lines(r.stderr)}")
    dump = one_dump(out)
    table_path = Path(str(dump) + ".methods")
    check(table_path.is_file(), f"no method table beside {dump}: {sorted(p.name for p in out.iterdir())}")
    check(table_path.stat().st_mode & 0o777 == 0o600, f"{table_path} mode {oct(table_path.stat().st_mode)}")
    table = tool.methods(table_path)
    layout = table["layout"]
    log(f"JDK {jvm.jdk.feature}: {len(table['methods'])} methods of {table['classes']} classes, "
        f"{table_path.stat().st_size} bytes; layout {layout}")
    check(layout["jvm_version"] == vm_version(r.stdout) and layout["jvm_feature"] == jvm.jdk.feature,
          f"layout names {layout['jvm_version']} (feature {layout['jvm_feature']})")
    check((layout["method_slot"], layout["bcp_slot"], layout["complete_slot"]) == (-3, -8, -9) and
          layout["bcp_register"] == 21 and layout["method_register"] == 1, f"layout {layout}")
    check(table["ended"] and table["problems"] == [], f"table not closed cleanly: {table['problems']}")
    check(table["end"]["methods"] == len(table["methods"]) and table["end"]["methods_lost"] == 0,
          f"END says {table['end']}, the table holds {len(table['methods'])}")

    main = classfile.read(jvm.classes / f"{MAIN}.class")
    check_like_class_file(methods_of(table, MAIN), main, MAIN)
    victim = classfile.read(jvm.classes / f"{MAIN}$Victim.class")
    check_like_class_file(methods_of(table, f"{MAIN}$Victim"), victim, "Victim")
    ours = methods_of(table, MAIN)
    check(all(m["file"] == "InterpTable.java" for m in ours), f"source file: {ours[0]['file']}")

    # The JDK's own classes, most loaded before the writer attached: they hold since the start.
    hash_code = [m for m in table["methods"] if m["class"] == "java.lang.String" and m["name"] == "hashCode"]
    check(len(hash_code) == 1 and hash_code[0]["timestamp"] == 0 and hash_code[0]["file"] == "java/lang/String.java"
          and hash_code[0]["lines"], f"java.lang.String.hashCode: {hash_code}")
    nano = [m for m in table["methods"] if m["class"] == "java.lang.System" and m["name"] == "nanoTime"]
    check(len(nano) == 1 and nano[0]["native"] and nano[0]["lines"] == [], f"System.nanoTime: {nano}")
    # One record per method: a class prepared while the first pass listed the loaded ones is not
    # written twice.
    seen = defaultdict(int)
    for m in table["methods"]:
        seen[m["method"]] += 1
    doubles = [hex(k) for k, n in seen.items() if n > 1]
    check(not doubles, f"Method*s recorded twice in a run without unloading: {doubles[:5]}")

    s = read_stats(stats)["method_table"]
    log(f"stats: {s}")
    check(s["state"] == "on" and s["methods"] == len(table["methods"]) and s["methods_lost"] == 0 and
          s["classes_lost"] == 0 and s["class_prepare"] > 0 and s["bytes"] + 40 == table_path.stat().st_size - 48,
          f"stats {s}")


@pytest.mark.meson(every_jdk=True)
def test_method_table_churn(jvm, tool, work):
    """Classes unloaded: their methods retired, HotSpot's reuse of the memory recorded."""
    rounds = 8
    r, out, stats = run_table(jvm, work, "churn", rounds)
    check(not agent_lines(r.stderr), f"the agent printed: {agent_lines(r.stderr)}")
    table = tool.methods(one_dump(out))
    work_records = [m for m in methods_of(table, f"{MAIN}$Victim") if m["name"] == "work"]
    log(f"{len(work_records)} records of Victim.work at {len({m['method'] for m in work_records})} Method*s; "
        f"{sum('retired' in m for m in work_records)} retired")
    # One per throwaway loader.
    check(len(work_records) == rounds, f"{len(work_records)} records of Victim.work for {rounds} loaders")
    retired = [m for m in work_records if "retired" in m]
    check(retired, "no record of an unloaded Victim was retired")
    check(all(m["retired"] > m["timestamp"] for m in retired), f"retired before recorded: {retired[:3]}")
    # At each Method*, the records follow each other in time, none retired after the next began.
    by_method = defaultdict(list)
    for m in table["methods"]:
        by_method[m["method"]].append(m)
    for ptr, records in by_method.items():
        records.sort(key=lambda m: (m["timestamp"], m["serial"]))
        for before, after in zip(records, records[1:]):
            check("retired" not in before or before["retired"] <= after["timestamp"] or after["timestamp"] == 0,
                  f"at {hex(ptr)}: {before} retired after {after} began")
    s = read_stats(stats)["method_table"]
    log(f"stats: {s}")
    check(s["retired"] == sum("retired" in m for m in table["methods"]) and s["sweeps"] >= 1, f"stats {s}")


def redefine(jvm, tool, work, mode):
    """Runs InterpTable `mode` with Victim redefined by a second version of it: (the table, Victim.work's
    records oldest first, the stats, the class files' old and new work)."""
    jdk = jvm.jdk
    source = (Path(__file__).parent / "java" / f"{MAIN}.java").read_text()
    old_body = "      for (int i = 0; i < n; i++) total += i;\n"
    check(old_body in source, "InterpTable.java's Victim.work changed: update the test")
    v2 = work / "v2"
    v2.mkdir()
    (v2 / f"{MAIN}.java").write_text(source.replace(old_body, "\n      int twice = 2;\n"
                                                    "      for (int i = 0; i < n; i++) total += i * twice;\n"))
    r = subprocess.run([jdk.javac, "-g", "-d", str(v2), str(v2 / f"{MAIN}.java")], capture_output=True, text=True)
    check(r.returncode == 0, "javac of the second version failed", r.stderr)
    (work / "manifest").write_text(f"Premain-Class: {MAIN}\nCan-Redefine-Classes: true\n")
    jar = work / "redefine.jar"
    r = subprocess.run([str(Path(jdk.java).with_name("jar")), "cfm", str(jar), str(work / "manifest"),
                        "-C", str(jvm.classes), f"{MAIN}.class"], capture_output=True, text=True)
    check(r.returncode == 0, "jar failed", r.stderr)
    new_class = v2 / f"{MAIN}$Victim.class"
    r, out, stats = run_table(jvm, work, mode, new_class, jvm_args=[f"-javaagent:{jar}"])
    check(not agent_lines(r.stderr), f"the agent printed: {agent_lines(r.stderr)}")
    table = tool.methods(one_dump(out))
    work_records = sorted((m for m in methods_of(table, f"{MAIN}$Victim") if m["name"] == "work"),
                          key=lambda m: m["timestamp"])
    old = classfile.read(jvm.classes / f"{MAIN}$Victim.class").method("work")
    new = classfile.read(new_class).method("work")
    log(f"Victim.work records: {[(hex(m['method']), m['code_size'], m['lines'], m['redefined']) for m in work_records]}")
    return table, work_records, read_stats(stats)["method_table"], old, new


def check_redefined(work_records, stats, old, new) -> None:
    check(len(work_records) == 2, f"{len(work_records)} records of Victim.work, expected the old and the new one")
    first, second = work_records
    check(not first["redefined"] and first["code_size"] == old.code_length and
          [tuple(x) for x in first["lines"]] == old.lines, f"the old version: {first}")
    check(second["redefined"] and second["code_size"] == new.code_length and
          [tuple(x) for x in second["lines"]] == new.lines and second["method"] != first["method"] and
          second["timestamp"] > first["timestamp"], f"the new version: {second}")
    check("retired" not in first, "the old version is retired while frames may still run it")
    check(stats["redefined"] >= 1, f"stats {stats}")


@pytest.mark.meson(every_jdk=True)
def test_method_table_redefine(jvm, tool, work):
    """A redefined method: recorded again with its new Method*, bytecodes and lines."""
    _, work_records, stats, old, new = redefine(jvm, tool, work, "redefine")
    check_redefined(work_records, stats, old, new)


@pytest.mark.meson(every_jdk=True)
def test_method_table_redefine_at_exit(jvm, tool, work):
    """A class redefined just before the JVM exits, before the agent's next periodic sweep: the
    last sweep, when the writer detaches, records its new version; the class is described whole
    (its constructor's new Method* too)."""
    table, work_records, stats, old, new = redefine(jvm, tool, work, "redefine-exit")
    check_redefined(work_records, stats, old, new)
    victim = methods_of(table, f"{MAIN}$Victim")
    check(any(m["name"] == "<init>" and m["redefined"] for m in victim),
          f"Victim's constructor was not written again with the class: {victim}")


@pytest.mark.meson(every_jdk=True)
def test_method_table_attach(jvm, tool, work, build):
    """A late attach with interp=on: every class loaded before it is in the table, holding since
    before the table began; the JVM runs on."""
    stop = work / "stop"
    jvm_args = ["-Xint"] + (["-XX:+EnableDynamicAgentLoading"] if jvm.jdk.feature >= 21 else [])
    p = jvm.start(MAIN, "wait", stop, jvm_args=jvm_args)
    pid = int(wait_line(p, "ready", timeout=60).split()[1])
    out, stats = work / "out", work / "stats.json"
    r = attach(build.scripts, jvm.agent, pid, f"dir={out},interp=on,stats={stats}")
    check(r.returncode == 0, "the attach failed")
    stop.touch()
    rc, _, err = finish(p)
    check(rc == 0 and not agent_lines(err), f"JVM exit {rc}: {err}")
    table = tool.methods(one_dump(out))
    ours = methods_of(table, MAIN)
    check_like_class_file(ours, classfile.read(jvm.classes / f"{MAIN}.class"), MAIN)
    check(all(m["timestamp"] == 0 for m in ours), f"{MAIN}'s methods do not hold since before the attach: {ours[:2]}")
    s = read_stats(stats)["method_table"]
    log(f"attached: {len(table['methods'])} methods of {table['classes']} classes; stats {s}")
    check(s["state"] == "on" and s["methods_lost"] == 0 and table["ended"], f"stats {s}")


@pytest.mark.meson(every_jdk=True)
def test_method_table_sessions(jvm, tool, work, build):
    """The table belongs to the agent's session: a stop closes it (its END record) with nothing of
    the agent's left, and a new session with interp=on writes a new one, every class loaded by then
    in it; the JVM runs on."""
    stop = work / "stop"
    jvm_args = ["-Xint"] + (["-XX:+EnableDynamicAgentLoading"] if jvm.jdk.feature >= 21 else [])
    p = jvm.start(MAIN, "wait", stop, jvm_args=jvm_args)
    pid = int(wait_line(p, "ready", timeout=60).split()[1])
    tables = []
    for n in (1, 2):
        out = work / f"session{n}"
        r = attach(build.scripts, jvm.agent, pid, f"dir={out},interp=on,stats={out}/stats.json")
        check(r.returncode == 0 and "writing" in r.stdout, f"session {n}: the attach", r.stdout + r.stderr)
        time.sleep(2)
        r = attach(build.scripts, jvm.agent, pid, "stop")
        check(r.returncode == 0 and "stopped:" in r.stdout, f"session {n}: the stop", r.stdout + r.stderr)
        check_left_nothing(tool, pid, out / f"jit-{pid}.dump", 1, f"session {n} stopped")
        table = tool.methods(out / f"jit-{pid}.dump.methods")
        s = read_stats(out / "stats.json")["method_table"]
        log(f"session {n}: {len(table['methods'])} methods of {table['classes']} classes; stats {s}")
        check(table["ended"], f"session {n}: its table has no END record")
        check(s["state"] == "on" and s["methods_lost"] == 0 and s["classes_lost"] == 0, f"session {n}: stats {s}")
        check_like_class_file(methods_of(table, MAIN), classfile.read(jvm.classes / f"{MAIN}.class"), MAIN)
        tables.append(table)
    check(len(tables[1]["methods"]) >= len(tables[0]["methods"]) * 0.9,
          f"the second table lists {len(tables[1]['methods'])} methods, the first {len(tables[0]['methods'])}")
    stop.touch()
    rc, _, err = finish(p)
    check(rc == 0 and not agent_lines(err), f"JVM exit {rc}: {err}")


@pytest.mark.meson(every_jdk=True)
def test_method_table_unknown_layout(jvm, tool, work, build):
    """A JVM whose layout the agent does not know: one warning, no table, nothing else changes."""
    shim = build.tests / "integration" / "vmstructs_shim.so"
    check(shim.is_file(), f"the shim is not built at {shim}: ninja -C {build.dir}")
    reasons = {"hide": "exports no VMStructs", "frame": "frame is not laid out as known"}
    for mode, reason in reasons.items():
        case = work / mode
        case.mkdir()
        r, out, stats = run_table(jvm, case, "table", env={"LD_PRELOAD": str(shim), "VMSTRUCTS_SHIM": mode})
        lines = agent_lines(r.stderr)
        log(f"{mode}: {lines}")
        check(len(lines) == 1 and "interp=on: interpreted frames will not be named" in lines[0] and reason in lines[0],
              f"{mode}: expected one warning saying {reason!r}: {lines}")
        dump = one_dump(out)
        check(not list(out.glob("*.methods")), f"{mode}: a method table was written: {sorted(out.iterdir())}")
        check(tool.check(dump).returncode == 0, f"{mode}: the dump is not valid: {tool.check(dump).stdout}")
        s = read_stats(stats)
        check(s["method_table"]["state"] == "unavailable" and s["method_table"]["class_prepare"] == 0,
              f"{mode}: {s['method_table']}")
        check(s["lost"]["total"] == 0 and s["written"]["code_loads"] > 0, f"{mode}: {s['lost']} {s['written']}")
    # The same run without the shim names every interpreter frame source: the shim alone made the
    # difference.
    plain = work / "plain"
    plain.mkdir()
    r, out, _ = run_table(jvm, plain, "table")
    check(not agent_lines(r.stderr) and len(list(out.glob("*.methods"))) == 1, "without the shim: no table?")


def test_method_table_off(jvm, work):
    """Without interp=on: no table, no ClassPrepare."""
    out, stats = work / "out", work / "stats.json"
    r = jvm.run(MAIN, "table", agent=f"dir={out},stats={stats}", jvm_args=["-Xint"], timeout=120)
    check(r.returncode == 0 and not agent_lines(r.stderr), f"exit {r.returncode}: {r.stderr.decode()}")
    check(len(dumps_in(out)) == 1 and not list(out.glob("*.methods")), f"files: {sorted(out.iterdir())}")
    s = read_stats(stats)["method_table"]
    check(s["state"] == "off" and s["class_prepare"] == 0 and s["methods"] == 0, f"stats {s}")
