#!/usr/bin/env python3
"""Integration tests that run real JVMs (and real perf) against the built agent.

  integ.py TEST --agent LIB --scripts DIR --work DIR

Exit status: 0 pass, 1 fail, 77 skip (meson's convention).
Tests: attach_replay, attach_replay_jdk21plus, attach_twice, attach_after_agentpath,
java_tool_options, config_precedence, perfmap_unload, perfmap_files, namespace_perf,
namespace_perf_alive, namespace_attach, attach_refused_jdk21plus,
attach_other_user.
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Fail(message)


def note(message):
    print(message, flush=True)


# ---------------------------------------------------------------------------------------------
# Environment


class Env:
    def __init__(self, args):
        self.agent = os.path.abspath(args.agent)
        self.scripts = os.path.abspath(args.scripts)
        self.work = os.path.abspath(args.work)
        self.java = os.environ.get("INTEG_JAVA", "java")
        self.javac = os.environ.get("INTEG_JAVAC", "javac")
        self.classes = os.path.join(self.work, "classes")
        os.makedirs(self.work, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix="integ-", dir=self.work)
        self.processes = []
        self.cleanup_paths = []
        PERF_HOME[0] = self.path("home")
        os.makedirs(PERF_HOME[0])

    def compile(self):
        sources = sorted(glob.glob(os.path.join(HERE, "java", "*.java")))
        stamp = os.path.join(self.classes, ".stamp")
        newest = max(os.path.getmtime(s) for s in sources)
        if os.path.exists(stamp) and os.path.getmtime(stamp) >= newest:
            return
        shutil.rmtree(self.classes, ignore_errors=True)
        os.makedirs(self.classes)
        env = dict(os.environ)
        env.pop("JAVA_TOOL_OPTIONS", None)
        subprocess.run([self.javac, "-d", self.classes] + sources, check=True, env=env)
        open(stamp, "w").close()

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def clean_env(self, **extra):
        env = dict(os.environ)
        for key in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "JITDUMPAGENT_OPTIONS"):
            env.pop(key, None)
        env.update(extra)
        return env

    def start_java(self, args, env=None, java=None, jvm_flags=(), umask=None):
        command = [java or self.java] + list(jvm_flags) + ["-cp", self.classes] + list(args)
        p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env if env is not None else self.clean_env(),
                             preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
        self.processes.append(p)
        return p

    def close(self, passed):
        for p in self.processes:
            if p.poll() is None:
                p.kill()
                p.wait()
        for path in self.cleanup_paths:
            try:
                if os.path.islink(path) or os.path.isfile(path):
                    os.unlink(path)
                elif os.path.isdir(path):
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                pass
        if passed:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            note(f"kept {self.tmp} for inspection")


def wait_line(p, prefix, timeout=30):
    """Reads p's stdout until a line starting with prefix; returns it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            check(False, f"process exited (rc {p.wait()}) before printing '{prefix}': {p.stderr.read()}")
        if line.startswith(prefix):
            return line.strip()
    check(False, f"timed out waiting for '{prefix}'")


def finish(p, timeout=60):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def run(command, **kwargs):
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    kwargs.setdefault("text", True)
    return subprocess.run(command, **kwargs)


def jdk_major(java):
    r = run([java, "-XshowSettings:properties", "-version"], env={"PATH": os.environ.get("PATH", "")})
    m = re.search(r"java\.specification\.version = (\d+)", r.stderr)
    return int(m.group(1)) if m else 0


# ---------------------------------------------------------------------------------------------
# Readers


class Load:
    __slots__ = ("addr", "size", "name", "index", "timestamp", "pid", "tid")


def read_dump(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, version, header_size = struct.unpack_from("<III", data, 0)
    check(magic == 0x4A695444, f"{path}: bad magic {magic:#x}")
    check(version == 1 and header_size == 40, f"{path}: version {version}, header size {header_size}")
    pid = struct.unpack_from("<I", data, 20)[0]
    loads = []
    kinds = {}
    pos = header_size
    while pos + 16 <= len(data):
        kind, size, timestamp = struct.unpack_from("<IIQ", data, pos)
        check(size >= 16 and pos + size <= len(data), f"{path}: torn record at {pos}")
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == 0:
            load = Load()
            load.timestamp = timestamp
            load.pid, load.tid, _vma, load.addr, load.size, load.index = struct.unpack_from("<IIQQQQ", data, pos + 16)
            end = data.index(b"\0", pos + 56)
            load.name = data[pos + 56:end].decode("utf-8", "replace")
            loads.append(load)
        pos += size
    check(pos == len(data), f"{path}: trailing bytes")
    return {"pid": pid, "loads": loads, "kinds": kinds}


MAP_LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (\S.*)$")


def read_map(path):
    entries = []
    with open(path, "r", encoding="utf-8", errors="replace") as f:
        text = f.read()
    check(text == "" or text.endswith("\n"), f"{path}: last line is not terminated")
    for number, line in enumerate(text.splitlines(), 1):
        m = MAP_LINE.match(line)
        check(m is not None, f"{path}:{number}: malformed line {line!r}")
        entries.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return entries


CODELIST_LINE = re.compile(r"^\d+ -?\d+ \d+ (\S+) \[0x([0-9a-f]+), 0x([0-9a-f]+) - 0x([0-9a-f]+)\]")


def codelist(pid, env):
    """{code_begin: name} of every nmethod in the code cache, from jcmd Compiler.codelist."""
    r = run(["jcmd", str(pid), "Compiler.codelist"], env=env, timeout=60)
    check(r.returncode == 0, f"jcmd Compiler.codelist failed: {r.stdout}{r.stderr}")
    result = {}
    for line in r.stdout.splitlines():
        m = CODELIST_LINE.match(line)
        if m:
            result[int(m.group(3), 16)] = m.group(1)
    check(result, f"no nmethods parsed from: {r.stdout[:500]}")
    return result


# Java-style method names ("pkg.Class.method(args)"), as opposed to stub names ("Interpreter").
METHOD_NAME = re.compile(r"^[\w$./]+\.[\w$<>]+\(")


def simple_method(name):
    """'Workload.mix(int)' or 'Workload.mix(I)I' -> 'Workload.mix'."""
    return name.split("(", 1)[0]


def one_dump(directory):
    dumps = glob.glob(os.path.join(directory, "jit-*.dump"))
    check(len(dumps) == 1, f"expected one dump in {directory}, found {dumps}")
    return dumps[0]


def exact_duplicates(loads):
    seen = {}
    dups = 0
    for load in loads:
        key = (load.addr, load.size, load.name)
        dups += key in seen
        seen[key] = True
    return dups


# ---------------------------------------------------------------------------------------------
# Attach


def attach(env, pid, options, force=False, jcmd_env=None, agent=None):
    command = [os.path.join(env.scripts, "attach"), "--agent", agent or env.agent]
    if force:
        command.append("--force")
    command += [str(pid), options]
    r = run(command, env=jcmd_env or env.clean_env(), timeout=120)
    note(f"$ {' '.join(command)}\n{r.stdout}{r.stderr}".rstrip())
    return r


def replay_test(env, java=None):
    stop = env.path("stop")
    out = env.path("out")
    p = env.start_java(["Workload", "20000", stop], java=java)
    pid = int(wait_line(p, "ready").split()[1])
    before = codelist(pid, env.clean_env())
    r = attach(env, pid, f"dir={out}")
    check(r.returncode == 0, "scripts/attach failed")
    check("writing " in r.stdout, "scripts/attach did not confirm the dump")
    after = codelist(pid, env.clean_env())
    open(stop, "w").close()
    rc, _, err = finish(p)
    check(rc == 0, f"JVM exit {rc}: {err}")
    dump = read_dump(one_dump(out))
    addrs = {load.addr: load for load in dump["loads"]}
    # Everything compiled before the attach that was still there after it was alive during the
    # replay: all of it must be in the dump, at the same address, under the same method.
    required = {a: n for a, n in before.items() if a in after}
    missing = {a: n for a, n in required.items() if a not in addrs}
    note(f"compiled before attach: {len(before)}, alive across the attach: {len(required)}, "
         f"in the dump: {len(required) - len(missing)}; dump loads: {len(dump['loads'])}")
    check(not missing, f"{len(missing)} methods compiled before the attach are missing: "
          f"{sorted(missing.values())[:20]}")
    wrong = []
    for a, name in required.items():
        ours = addrs[a].name
        if name.startswith(("java.lang.invoke.", "jdk.internal.")):
            continue  # MethodHandle intrinsics are mislabelled by JVMTI itself
        if simple_method(name).replace("/", ".") != simple_method(ours):
            wrong.append((name, ours))
    check(not wrong, f"names differ from Compiler.codelist: {wrong[:10]}")
    for method in ("Workload.mix", "Workload.sumMixed", "Workload.mapWork"):
        check(any(simple_method(l.name) == method for l in dump["loads"]), f"{method} not in the dump")
    check(dump["kinds"].get(3, 0) == 1, "no JIT_CODE_CLOSE record at the end")
    check(any(l.name == "Interpreter" for l in dump["loads"]), "stubs (Interpreter) were not replayed")
    dups = exact_duplicates(dump["loads"])
    check(dups == 0, f"{dups} duplicate loads (replay racing with live events must be deduplicated)")
    return err


def test_attach_replay(env):
    err = replay_test(env)
    check("jitdumpagent:" not in err, f"the agent printed on the JVM's stderr: {err}")


def newest_jdk21plus():
    candidates = []
    for home in glob.glob("/usr/lib/jvm/*"):
        java = os.path.join(home, "bin", "java")
        if os.path.isfile(java) and not os.path.islink(home) and os.path.isfile(os.path.join(home, "bin", "jcmd")):
            major = jdk_major(java)
            if major >= 21:
                candidates.append((major, java))
    if not candidates:
        raise Skip("no JDK 21+ under /usr/lib/jvm")
    major, java = max(candidates)
    note(f"using JDK {major}: {java}")
    return major, java


def test_attach_refused_jdk21plus(env):
    """-XX:-EnableDynamicAgentLoading: scripts/attach fails clearly, the JVM runs on."""
    major, java = newest_jdk21plus()
    stop = env.path("stop")
    p = env.start_java(["Workload", "20000", stop], java=java, jvm_flags=["-XX:-EnableDynamicAgentLoading"])
    pid = int(wait_line(p, "ready").split()[1])
    r = attach(env, pid, f"dir={env.path('out')}")
    check(r.returncode != 0, "attach should fail")
    check("refuses dynamic agents" in r.stderr and "-XX:+EnableDynamicAgentLoading" in r.stderr,
          "the failure does not explain the remedy")
    check(not os.path.exists(env.path("out")), "the refused agent wrote output")
    open(stop, "w").close()
    rc, _, err = finish(p)
    check(rc == 0, f"the JVM did not survive the refused attach: {rc} {err}")


def test_attach_other_user(env):
    """Run as root against a JVM of another user: jcmd runs as that user, files belong to it."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        raise Skip("needs root and setpriv")
    out = tempfile.mkdtemp(prefix="integ-nobody-", dir="/tmp")
    env.cleanup_paths.append(out)
    os.chown(out, 65534, 65534)
    stop = os.path.join(out, "stop")
    command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", env.java, "-cp", env.classes,
               "Workload", "20000", stop]
    p = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env.clean_env(HOME=out), cwd=out)
    env.processes.append(p)
    pid = int(wait_line(p, "ready").split()[1])
    env.cleanup_paths.append(f"/tmp/perf-{pid}.map")
    r = attach(env, pid, f"dir={out}/jit,perfmap=on")
    check(r.returncode == 0, "attach to another user's JVM failed")
    open(stop, "w").close()
    rc, _, err = finish(p)
    check(rc == 0 and "jitdumpagent:" not in err, f"exit {rc}: {err}")
    for path in (one_dump(os.path.join(out, "jit")), f"/tmp/perf-{pid}.map"):
        st = os.stat(path)
        check(st.st_uid == 65534 and (st.st_mode & 0o777) == 0o600, f"{path}: uid {st.st_uid} mode {st.st_mode:o}")
    entries = read_map(f"/tmp/perf-{pid}.map")
    check(any(simple_method(e[2]) == "Workload.mix" for e in entries), "Workload.mix missing")


def test_attach_replay_jdk21plus(env):
    major, java = newest_jdk21plus()
    err = replay_test(env, java=java)
    check("A JVM TI agent has been loaded dynamically" in err, f"JEP 451 warning expected on JDK {major}: {err}")


def start_for_attach(env, flags=()):
    stop = env.path("stop")
    p = env.start_java(["Workload", "20000", stop], jvm_flags=flags)
    pid = int(wait_line(p, "ready").split()[1])
    return p, pid, stop


def check_single_output(env, p, stop, first_dir, second_dir):
    open(stop, "w").close()
    rc, _, err = finish(p)
    check(rc == 0, f"JVM exit {rc}: {err}")
    second_files = os.listdir(second_dir) if os.path.exists(second_dir) else []
    check(not second_files, f"the second load wrote output: {second_files}")
    dump = read_dump(one_dump(first_dir))
    dups = exact_duplicates(dump["loads"])
    note(f"dump loads: {len(dump['loads'])}, exact duplicates: {dups}")
    check(dups == 0, f"{dups} duplicate loads")
    maps = glob.glob(os.path.join(first_dir, "perf-*.map"))
    check(len(maps) == 1, f"expected one perf map, found {maps}")
    entries = read_map(maps[0])
    starts = [e[0] for e in entries]
    check(len(starts) == len(set(starts)), "the perf map has duplicate entries")
    return err


def test_attach_twice(env):
    first, second = env.path("first"), env.path("second")
    p, pid, stop = start_for_attach(env)
    check(attach(env, pid, f"dir={first},perfmap={first}").returncode == 0, "first attach failed")
    r = attach(env, pid, f"dir={second},perfmap={second},log=info", force=True)
    check(r.returncode == 0, "second attach failed")
    err = check_single_output(env, p, stop, first, second)
    check("already loaded in this JVM" in err, f"the second load was not recognized: {err}")


def test_attach_after_agentpath(env):
    first, second = env.path("first"), env.path("second")
    p, pid, stop = start_for_attach(env, [f"-agentpath:{env.agent}=dir={first},perfmap={first}"])
    r = attach(env, pid, f"dir={second},perfmap={second}")
    check(r.returncode == 0 and "already loaded" in r.stdout, "scripts/attach should notice the loaded agent")
    r = attach(env, pid, f"dir={second},perfmap={second},log=info", force=True)
    check(r.returncode == 0, "forced attach failed")
    err = check_single_output(env, p, stop, first, second)
    check("already loaded in this JVM" in err, f"the second load was not recognized: {err}")


# ---------------------------------------------------------------------------------------------
# JAVA_TOOL_OPTIONS and option sources


def only_picked_up(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    return [l for l in lines if not l.startswith("Picked up JAVA_TOOL_OPTIONS:")]


def test_java_tool_options(env):
    out = env.path("out")
    tool_env = env.clean_env(JAVA_TOOL_OPTIONS=f"-agentpath:{env.agent}=dir={out}")
    # javac
    src = env.path("src")
    os.makedirs(src)
    with open(os.path.join(src, "Hello.java"), "w") as f:
        f.write("public class Hello { public static void main(String[] a) { System.out.println(\"hi\"); } }\n")
    r = run([env.javac, "-d", src, os.path.join(src, "Hello.java")], env=tool_env, timeout=120)
    check(r.returncode == 0, f"javac failed under JAVA_TOOL_OPTIONS: {r.stderr}")
    check(r.stdout == "", f"javac printed: {r.stdout!r}")
    check(not only_picked_up(r.stderr), f"unexpected stderr from javac: {only_picked_up(r.stderr)}")
    check("Picked up JAVA_TOOL_OPTIONS" in r.stderr, "the JVM did not pick up JAVA_TOOL_OPTIONS")
    check(len(glob.glob(os.path.join(out, "jit-*.dump"))) == 1, "javac wrote no dump")
    # java running the compiled class
    r = run([env.java, "-cp", src, "Hello"], env=tool_env, timeout=60)
    check(r.returncode == 0 and r.stdout == "hi\n", f"java Hello: {r.returncode} {r.stdout!r} {r.stderr}")
    check(not only_picked_up(r.stderr), f"unexpected stderr from java: {only_picked_up(r.stderr)}")
    # jcmd, against a JVM that has the agent through JAVA_TOOL_OPTIONS too
    stop = env.path("stop")
    p = env.start_java(["Workload", "20000", stop], env=tool_env)
    pid = int(wait_line(p, "ready").split()[1])
    for command in (["jcmd", str(pid), "VM.version"], ["jcmd", "-l"], ["jcmd", str(pid), "Compiler.codelist"]):
        r = run(command, env=tool_env, timeout=60)
        check(r.returncode == 0, f"{command} failed: {r.stdout}{r.stderr}")
        check(not only_picked_up(r.stderr), f"unexpected stderr from {command}: {only_picked_up(r.stderr)}")
        agent_lines = [l for l in r.stdout.splitlines() if l.startswith("jitdumpagent:")]
        check(not agent_lines, f"{command} printed agent output: {agent_lines}")
    check(str(pid) in run(["jcmd", "-l"], env=tool_env).stdout, "jcmd -l does not list the JVM")
    open(stop, "w").close()
    rc, stdout, err = finish(p)
    check(rc == 0, f"workload exit {rc}: {err}")
    check(not only_picked_up(err), f"unexpected stderr from the workload: {only_picked_up(err)}")
    dumps = glob.glob(os.path.join(out, "jit-*.dump"))
    note(f"dumps written under JAVA_TOOL_OPTIONS: {len(dumps)}")
    check(len(dumps) >= 6, f"expected a dump per JVM (javac, java, workload, 4 jcmd), found {len(dumps)}")
    workload = read_dump(os.path.join(out, f"jit-{pid}.dump"))
    check(any(simple_method(l.name) == "Workload.mix" for l in workload["loads"]), "Workload.mix missing")
    # Asking for output is honoured: log=info prints, once, on stderr.
    loud = env.clean_env(JAVA_TOOL_OPTIONS=f"-agentpath:{env.agent}=dir={out},log=info")
    r = run(["jcmd", "-l"], env=loud, timeout=60)
    check(r.returncode == 0 and "jitdumpagent: info: writing" in r.stderr, f"log=info was not honoured: {r.stderr}")


def name_style(dump):
    names = [l.name for l in dump["loads"] if "Workload" in l.name and "mix" in l.name]
    check(names, "Workload.mix was not compiled")
    name = names[0]
    if name.startswith("LWorkload;mix(I)I"):
        return "jvm"
    if name == "Workload.mix(int)":
        return "java"
    if name == "Workload.mix":
        return "simple"
    raise Fail(f"unknown name style: {name}")


def test_config_precedence(env):
    d_file, d_env, d_cmd = env.path("file"), env.path("env"), env.path("cmd")
    config = env.path("agent.conf")
    with open(config, "w") as f:
        f.write("# a ConfigMap-style file\n"
                f"dir={d_file}\n"
                "names=jvm   # trailing comment\n"
                "\n"
                f"perfmap={d_file}\n")

    def run_case(name, agent_options, env_options, expect_dir, expect_style, expect_map_dir):
        for d in (d_file, d_env, d_cmd):
            shutil.rmtree(d, ignore_errors=True)
        extra = {} if env_options is None else {"JITDUMPAGENT_OPTIONS": env_options}
        flag = f"-agentpath:{env.agent}" + (f"={agent_options}" if agent_options else "")
        p = env.start_java(["Workload", "600"], env=env.clean_env(**extra), jvm_flags=[flag])
        rc, out, err = finish(p)
        check(rc == 0 and not err.strip(), f"{name}: exit {rc}, stderr {err!r}")
        for d in (d_file, d_env, d_cmd):
            has_dump = bool(glob.glob(os.path.join(d, "jit-*.dump")))
            check(has_dump == (d == expect_dir), f"{name}: dump in {d}: {has_dump}, expected in {expect_dir}")
            has_map = bool(glob.glob(os.path.join(d, "perf-*.map")))
            check(has_map == (d == expect_map_dir), f"{name}: map in {d}: {has_map}, expected in {expect_map_dir}")
        style = name_style(read_dump(one_dump(expect_dir)))
        check(style == expect_style, f"{name}: names={style}, expected {expect_style}")
        note(f"{name}: ok (dir {os.path.basename(expect_dir)}, names {style})")

    run_case("file only (config= on the command line)", f"config={config}", None, d_file, "jvm", d_file)
    run_case("file named by the environment", None, f"config={config}", d_file, "jvm", d_file)
    run_case("env over file", f"config={config}", "names=simple", d_file, "simple", d_file)
    run_case("env over file (dir)", f"config={config}", f"dir={d_env}", d_env, "jvm", d_file)
    run_case("command line over env over file", f"dir={d_cmd},names=java",
             f"config={config},names=simple,dir={d_env},perfmap=off", d_cmd, "java", None)
    run_case("command line over file", f"config={config},perfmap=off,names=simple", None, d_file, "simple", None)


# ---------------------------------------------------------------------------------------------
# perf map


def check_map_file(path, mode):
    st = os.lstat(path)
    check(os.path.isfile(path) and not os.path.islink(path), f"{path} is not a regular file")
    check(st.st_uid == os.geteuid(), f"{path} is owned by uid {st.st_uid}, not {os.geteuid()}")
    check((st.st_mode & 0o777) == mode, f"{path} has mode {st.st_mode & 0o777:o}, expected {mode:o}")
    entries = read_map(path)
    for start, size, name in entries:
        check(size > 0, f"{path}: empty range for {name}")
        check(";" not in name, f"{path}: ';' in name {name!r}")
        check(not name.startswith("0x"), f"{path}: bad name {name!r}")
    with open(path) as f:
        check("0x" not in "".join(l.split(" ", 2)[0] + l.split(" ", 2)[1] for l in f), f"{path}: 0x prefix")
    ordered = sorted(entries)
    for (a, asz, an), (b, _, bn) in zip(ordered, ordered[1:]):
        check(a + asz <= b, f"{path}: overlapping entries {an} [{a:x}+{asz:x}] and {bn} [{b:x}]")
    return entries


def test_perfmap_unload(env):
    out = env.path("out")
    go, stop = env.path("go"), env.path("stop")
    stats = env.path("stats.json")
    # backdate=off: load timestamps are the event times, compared with the codelist time below.
    # mode=0664 under umask 027: the files are 0640, and compaction must keep that.
    flags = [f"-agentpath:{env.agent}=dir={out},perfmap={out},stats={stats},backdate=off,mode=0664",
             "-Xlog:class+unload=info:file=" +
             env.path("unload.log")]
    p = env.start_java(["Unload", "900", go, stop], jvm_flags=flags, umask=0o027)
    loaded = wait_line(p, "loaded", timeout=120)
    pid = p.pid
    map_path = os.path.join(out, f"perf-{pid}.map")
    # Streaming: a reader in the middle of the run sees the new code.
    time.sleep(0.3)
    live = read_map(map_path)
    workers_live = sum(1 for e in live if e[2].startswith("Unload$Worker.applyAsInt"))
    note(f"{loaded}; mid-run map: {len(live)} lines, {workers_live} Worker entries")
    check(workers_live >= 100, f"the mid-run map shows only {workers_live} Worker entries")
    open(go, "w").close()
    wait_line(p, "ready", timeout=120)
    codelist_time = time.monotonic_ns()  # CLOCK_MONOTONIC, the dump's clock
    alive = codelist(pid, env.clean_env())
    # The map is compacted while the JVM runs, soon after entries go stale.
    deadline = time.monotonic() + 5
    while True:
        running = read_map(map_path)
        stale_running = sum(1 for e in running if e[2].startswith("Unload$Worker"))
        if stale_running == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    check_map_file(map_path, 0o640)
    note(f"map after the collections, JVM still running: {len(running)} lines, {stale_running} stale")
    check(stale_running == 0, f"{stale_running} stale Worker entries in the map while running")
    open(stop, "w").close()
    rc, _, err = finish(p)
    check(rc == 0 and "jitdumpagent:" not in err, f"exit {rc}: {err}")
    with open(env.path("unload.log")) as f:
        unloaded = sum(1 for l in f if "Unload$Worker" in l)
    check(unloaded >= 850, f"only {unloaded} Worker classes were unloaded; the test proves nothing")
    with open(stats) as f:
        s = json.load(f)
    note(f"classes unloaded: {unloaded}; agent: {s['events']['compiled_method_unload']} unloads, "
         f"{s['written']['perfmap_compactions']} compactions, {s['written']['perfmap_lines']} lines streamed")
    check(s["events"]["compiled_method_unload"] >= 900, "too few CompiledMethodUnload events")
    check(s["written"]["perfmap_compactions"] >= 2, "the map was not compacted both while running and at exit")
    dump = read_dump(one_dump(out))
    worker_loads = sum(1 for l in dump["loads"] if l.name.startswith("Unload$Worker.applyAsInt"))
    check(worker_loads >= 900, f"only {worker_loads} Worker loads in the dump")
    entries = check_map_file(map_path, 0o640)
    check((os.stat(one_dump(out)).st_mode & 0o777) == 0o640, "the dump's mode is not mode= minus the umask")
    check(not glob.glob(os.path.join(out, f"perf-{pid}.map.*")), "temporary files were left behind")
    stale = [e for e in entries if e[2].startswith("Unload$Worker")]
    check(not stale, f"{len(stale)} map entries point at unloaded code: {stale[:5]}")
    methods = [e for e in entries if METHOD_NAME.match(e[2])]
    last_load = {}
    for l in dump["loads"]:
        last_load[l.addr] = l.timestamp
    not_alive = [e for e in methods if e[0] not in alive]
    # The JVM idles between Compiler.codelist and its exit, but may still compile a little
    # (a native wrapper, an OSR method): only code loaded before the list was taken must be in it.
    unexplained = [e for e in not_alive if last_load.get(e[0], 0) < codelist_time]
    note(f"final map: {len(entries)} lines, {len(methods)} methods, {len(alive)} nmethods in the code cache, "
         f"{len(not_alive)} map methods not in it, of which {len(not_alive) - len(unexplained)} compiled after the list")
    check(not unexplained, f"map entries for code that is no longer in the code cache: "
          f"{[(hex(a), n) for a, _, n in unexplained[:10]]}")
    live_methods = set(alive)
    method_starts = {e[0] for e in methods}
    covered = sum(1 for a in live_methods if a in method_starts)
    note(f"code cache nmethods present in the map: {covered}/{len(live_methods)}")
    check(covered >= 0.95 * len(live_methods), "the final map misses live nmethods")


def test_perfmap_files(env):
    """Default location, mode and ownership; planted files and symlinks are never followed."""
    # Default: /tmp/perf-<pid>.map, mode 0600, owned by us; mode= is honoured.
    for mode_option, mode in (("", 0o600), (",mode=0644", 0o644)):
        p = env.start_java(["Workload", "20000", env.path("stop")],
                           jvm_flags=[f"-agentpath:{env.agent}=dir={env.path('out')},perfmap=on{mode_option}"])
        wait_line(p, "ready")
        path = f"/tmp/perf-{p.pid}.map"
        env.cleanup_paths.append(path)
        check(os.path.exists(path), f"{path} missing while the JVM runs")
        open(env.path("stop"), "w").close()
        rc, _, err = finish(p)
        check(rc == 0 and not err, f"exit {rc}: {err}")
        entries = check_map_file(path, mode)
        check(any(simple_method(e[2]) == "Workload.mix" for e in entries), "Workload.mix not in the map")
        os.unlink(env.path("stop"))
        note(f"default map {path}: mode {mode:o}, {len(entries)} lines: ok")

    # Planted things at /tmp/perf-<pid>.map: the JVM's pid is the shell's, which execs it.
    victim = env.path("victim")
    with open(victim, "w") as f:
        f.write("sentinel\n")
    cases = [
        ("symlink to an existing file", f"ln -s {victim} /tmp/perf-$$.map"),
        ("dangling symlink", f"ln -s {env.path('created-through-symlink')} /tmp/perf-$$.map"),
        ("symlink to a directory", f"ln -s {env.tmp} /tmp/perf-$$.map"),
    ]
    if os.geteuid() == 0:
        cases.append(("regular file of another user",
                      "echo foreign > /tmp/perf-$$.map && chown 65534:65534 /tmp/perf-$$.map"))
    for name, plant in cases:
        script = (f"{plant} && exec {env.java} -agentpath:{env.agent}=dir={env.path('out')},perfmap=on "
                  f"-cp {env.classes} Workload 300")
        p = subprocess.Popen(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env.clean_env())
        env.processes.append(p)
        path = f"/tmp/perf-{p.pid}.map"
        env.cleanup_paths.append(path)
        rc, out, err = finish(p)
        check(rc == 0 and "done" in out, f"{name}: JVM exit {rc}: {err}")
        check("cannot create perf map" in err, f"{name}: no warning about the perf map: {err!r}")
        with open(victim) as f:
            check(f.read() == "sentinel\n", f"{name}: the symlink target was written")
        check(not os.path.exists(env.path("created-through-symlink")), f"{name}: a file was created through the link")
        check(not glob.glob(os.path.join(env.tmp, "perf-*")), f"{name}: a file was created in the linked directory")
        if "symlink" in name:
            check(os.path.islink(path), f"{name}: the planted symlink was replaced")
        else:
            with open(path) as f:
                check(f.read() == "foreign\n", f"{name}: another user's file was modified")
        note(f"{name}: not followed, JVM ran on, warned: ok")


# ---------------------------------------------------------------------------------------------
# Namespaces with real perf

PERF_SCRIPT_LINE = re.compile(r"^\s*(\d+)\s+([0-9a-f]+)\s+(.*)\s+\((.*)\)\s*$")


def perf_env():
    """perf's build-id cache ($HOME/.debug) goes to the test's own directory, not root's home."""
    env = dict(os.environ)
    env["HOME"] = PERF_HOME[0]
    return env


PERF_HOME = [None]


def perf_samples(perf_data, pid):
    """[(symbol, dso)] of pid's user-space samples."""
    r = run(["perf", "script", "-i", perf_data, "--pid", str(pid), "-F", "pid,ip,sym,dso"], timeout=300,
            env=perf_env())
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


def need_namespace_perf():
    if os.geteuid() != 0:
        raise Skip("needs root (unshare --pid --mount, perf record -a)")
    for tool in ("perf", "unshare"):
        if shutil.which(tool) is None:
            raise Skip(f"{tool} not installed")
    r = run(["perf", "record", "-k", "1", "-e", "cpu-clock", "-a", "-o", "/dev/null", "--", "true"], env=perf_env())
    if r.returncode != 0:
        raise Skip(f"perf record -a does not work here: {r.stderr.strip()[:200]}")


# Where private_tmp() puts the workload classes and the agent inside the namespace.
NS_CLASSES = "/tmp/app"
NS_AGENT = "/tmp/agent/libjitdumpagent.so"


def private_tmp(env):
    """Shell that gives a new mount namespace its own tmpfs /tmp (as a container has) holding the
    workload classes and the agent. They are copied in because the build directory may itself
    live under /tmp (a CI clone), where the new mount hides it: opened before the mount, they
    stay reachable through /proc/self/fd."""
    return (f"exec 3<{shlex.quote(env.classes)} 4<{shlex.quote(env.agent)} && "
            "mount -t tmpfs -o mode=1777 tmpfs /tmp && "
            f"mkdir -p /tmp/jit {NS_CLASSES} {os.path.dirname(NS_AGENT)} && "
            f"cp -r /proc/self/fd/3/. {NS_CLASSES} && cp /proc/self/fd/4 {NS_AGENT} && exec 3<&- 4<&- && ")


def start_in_namespace(env, java_args, agent_options):
    """Starts java as pid 1 of new pid+mount namespaces with a private tmpfs /tmp. Returns
    (unshare process, host pid of the JVM)."""
    inner = (private_tmp(env) +
             f"exec {env.java} -agentpath:{NS_AGENT}={agent_options} -cp {NS_CLASSES} {java_args}")
    p = subprocess.Popen(["unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c", inner],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env.clean_env())
    env.processes.append(p)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                children = f.read().split()
        except OSError:
            children = []
        for child in children:
            try:
                exe = os.readlink(f"/proc/{child}/exe")
            except OSError:
                continue
            if os.path.basename(exe) == "java":
                return p, int(child)
        time.sleep(0.01)
    raise Fail("the JVM did not start in the namespace")


def ns_pid_of(hostpid):
    with open(f"/proc/{hostpid}/status") as f:
        for line in f:
            if line.startswith("NStgid:"):
                return [int(x) for x in line.split()[1:]]
    return []


def start_perf_record(env, output):
    perf = subprocess.Popen(["perf", "record", "-k", "1", "-e", "cpu-clock", "-F", "999", "-a", "-o", output],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=perf_env())
    env.processes.append(perf)
    time.sleep(1.0)
    check(perf.poll() is None, "perf record died")
    return perf


def stop_perf_record(perf):
    perf.send_signal(signal.SIGINT)
    _, err = perf.communicate(timeout=120)
    # perf record exits with the status of the SIGINT it got; what counts is that it wrote the data.
    check("Captured and wrote" in err, f"perf record failed ({perf.returncode}): {err}")


def test_namespace_perf(env):
    """JVM in its own pid+mount namespace, perf on the host, reports after the JVM exited."""
    need_namespace_perf()
    perf_data = env.path("perf.data")
    dump_dir = env.path("collected")
    perf = start_perf_record(env, perf_data)
    p, hostpid = start_in_namespace(env, "Workload 4000", "dir=/tmp/jit,perfmap=on")
    nspids = ns_pid_of(hostpid)
    note(f"JVM host pid {hostpid}, NStgid {nspids}")
    check(len(nspids) == 2 and nspids[1] == 1, "the JVM is not pid 1 of its own namespace")
    host_map = f"/tmp/perf-{hostpid}.map"
    env.cleanup_paths.append(host_map)
    collector = subprocess.Popen([os.path.join(env.scripts, "collect"), "watch", "--dump-dir", dump_dir,
                                  "--interval", "0.1", str(hostpid)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    env.processes.append(collector)
    rc, out, err = finish(p)
    check(rc == 0 and "done" in out, f"JVM in namespace: exit {rc}: {err}")
    check(not os.path.exists(f"/proc/{hostpid}"), "the JVM still exists")
    collected, _ = collector.communicate(timeout=60)
    note(collected.rstrip())
    check(collector.returncode == 0, "collect watch failed")
    stop_perf_record(perf)
    check(os.path.isfile(host_map), f"collect did not write {host_map}")
    host_dump = os.path.join(dump_dir, f"jit-{hostpid}.dump")
    copied = read_dump(host_dump)
    check(copied["pid"] == hostpid and all(l.pid == hostpid for l in copied["loads"]),
          "the host copy still carries namespace pids")
    check(copied["kinds"].get(3, 0) == 1, "the host copy lacks the close record (copied before the end?)")
    map_entries = check_map_file(host_map, 0o644)
    check(any(simple_method(e[2]) == "Workload.sumMixed" for e in map_entries),
          "the copied map lacks Workload.sumMixed")

    perf_version = run(["perf", "version"]).stdout.strip()
    # 1) perf report straight from perf.data, the JVM gone: resolves through the copied map.
    samples = perf_samples(perf_data, hostpid)
    jit, resolved, java = jit_summary(samples, hostpid)
    note(f"[{perf_version}] perf report, JVM exited, map copied to the host name: {len(samples)} samples, "
         f"{len(jit)} JIT, {len(resolved)} resolved, {len(java)} Java-named")
    check(len(jit) >= 50, "too few JIT samples to judge (is the machine overloaded?)")
    check(len(resolved) >= 0.95 * len(jit), "JIT samples unresolved with the host map copy")
    check(any(simple_method(s) in ("Workload.sumMixed", "Workload.mix", "Workload.mapWork") for s, _ in java),
          "no Workload method among the samples")

    # 2) Control: without the host copy, the same report cannot resolve anything (perf looks at
    # /tmp/perf-<hostpid>.map only, the container's /tmp is gone).
    aside = host_map + ".aside"
    os.rename(host_map, aside)
    env.cleanup_paths.append(aside)
    try:
        _, resolved_without, _ = jit_summary(perf_samples(perf_data, hostpid), hostpid)
    finally:
        os.rename(aside, host_map)
    note(f"control, no host map: {len(resolved_without)} of {len(jit)} JIT samples resolved")
    check(len(resolved_without) <= 0.05 * len(jit), "the control resolved samples without the copy?")

    # 3) Plain perf inject: perf 6.1 ignores the marker of an exited namespaced JVM.
    # perf record -a also saw other JVMs' markers (other test runs); perf inject aborts on any
    # unreadable dump, so hide those first, changing nothing else.
    filtered = env.path("perf.filtered.data")
    r = run([os.path.join(env.scripts, "collect"), "fix-perf-data", "--only-pid", str(hostpid), "--no-host-copies",
             perf_data, filtered], timeout=300)
    check(r.returncode == 0, f"collect fix-perf-data failed: {r.stderr}")
    plain = env.path("perf.plain.data")
    r = run(["perf", "inject", "--jit", "-i", filtered, "-o", plain], timeout=300, env=perf_env())
    check(r.returncode == 0, f"perf inject failed: {r.stderr}")
    plain_jitted = [d for s, d in perf_samples(plain, hostpid) if "/jitted-" in d]
    note(f"plain perf inject --jit: {len(plain_jitted)} samples in jitted-*.so")
    if perf_version.startswith("perf version 6.1."):
        check(not plain_jitted, "perf 6.1 was expected to ignore the marker of an exited namespaced JVM")

    # 4) collect inject: marker rewritten to the host copy, perf inject accepts it.
    injected = env.path("perf.jit.data")
    r = run([os.path.join(env.scripts, "collect"), "inject", "--dump-dir", dump_dir, "--only-pid", str(hostpid),
             "-i", perf_data, "-o", injected], timeout=300, env=perf_env())
    note(r.stdout + r.stderr)
    check(r.returncode == 0, "collect inject failed")
    samples = perf_samples(injected, hostpid)
    jit, resolved, java = jit_summary(samples, hostpid)
    in_jitted = [(s, d) for s, d in resolved if "/jitted-" in d and d.startswith(dump_dir)]
    note(f"collect inject: {len(jit)} JIT samples, {len(resolved)} resolved, {len(in_jitted)} in "
         f"{dump_dir}/jitted-{hostpid}-*.so")
    check(len(resolved) >= 0.95 * len(jit), "JIT samples unresolved after collect inject")
    check(len(in_jitted) >= 0.8 * len(jit), "the jitdump was not used")
    check(any(simple_method(s) in ("Workload.sumMixed", "Workload.mix", "Workload.mapWork") for s, _ in in_jitted),
          "no Workload method resolved through the jitdump")
    check(all(f"/jitted-{hostpid}-" in d for _, d in in_jitted), "jitted DSOs named with the wrong pid")


def test_namespace_perf_alive(env):
    """Same setup, but perf inject and report run while the JVM still lives: perf 6.1 needs no help."""
    need_namespace_perf()
    perf_data = env.path("perf.data")
    perf = start_perf_record(env, perf_data)
    p, hostpid = start_in_namespace(env, f"Workload 60000 /tmp/stop", "dir=/tmp/jit,perfmap=on")
    note(f"JVM host pid {hostpid}, NStgid {ns_pid_of(hostpid)}")
    wait_line(p, "ready")
    time.sleep(1.5)
    stop_perf_record(perf)
    check(not os.path.exists(f"/tmp/perf-{hostpid}.map"), "a host map exists; this test needs none")
    try:
        samples = perf_samples(perf_data, hostpid)
        jit, resolved, java = jit_summary(samples, hostpid)
        note(f"perf report, JVM alive, no host files: {len(jit)} JIT samples, {len(resolved)} resolved "
             f"(through /proc/{hostpid}/root/tmp/perf-1.map)")
        check(len(jit) >= 50 and len(resolved) >= 0.95 * len(jit), "live container map not used")
        injected = env.path("perf.jit.data")
        # Nothing is redirected (the JVM lives); --only-pid only hides other processes' markers.
        r = run([os.path.join(env.scripts, "collect"), "inject", "--only-pid", str(hostpid), "-i", perf_data,
                 "-o", injected], timeout=300, env=perf_env())
        check(r.returncode == 0, f"perf inject failed: {r.stdout}{r.stderr}")
        # The ELF files land in the container's dump directory (perf enters its mount namespace).
        samples = perf_samples(injected, hostpid)
        jit, resolved, java = jit_summary(samples, hostpid)
        in_jitted = [(s, d) for s, d in resolved if "/jitted-" in d]
        note(f"plain perf inject, JVM alive: {len(jit)} JIT samples, {len(in_jitted)} in jitted-*.so "
             f"(e.g. {in_jitted[0][1] if in_jitted else '-'})")
        check(len(in_jitted) >= 0.8 * len(jit), "perf inject did not use the live container's jitdump")
    finally:
        # Ask the JVM to stop through its own /tmp.
        open(f"/proc/{hostpid}/root/tmp/stop", "w").close()
        rc, _, err = finish(p)
    check(rc == 0, f"JVM exit {rc}: {err}")
    # Reported again after the exit: the jitted-1-*.so files were written into the container's
    # tmpfs, now gone; perf finds them in its build-id cache (~/.debug), where inject put them.
    jit, resolved, java = jit_summary(perf_samples(injected, hostpid), hostpid)
    note(f"same injected data reported after the JVM exited: {len(resolved)} of {len(jit)} resolved")
    check(len(resolved) >= 0.95 * len(jit), "injected while alive, unresolved after exit")


def test_namespace_attach(env):
    """scripts/attach from the host into a JVM in its own pid+mount namespace, then collect."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        raise Skip("needs root and unshare")
    inner = private_tmp(env) + f"exec {env.java} -cp {NS_CLASSES} Workload 20000 /tmp/stop"
    p = subprocess.Popen(["unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c", inner],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env.clean_env())
    env.processes.append(p)
    wait_line(p, "ready")
    with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
        hostpid = int(f.read().split()[0])
    check(ns_pid_of(hostpid)[-1] == 1, "the JVM is not pid 1 of its namespace")
    r = attach(env, hostpid, "dir=/tmp/jit,perfmap=on", agent=NS_AGENT)
    check(r.returncode == 0 and "writing /tmp/jit/jit-1.dump" in r.stdout, "attach into the namespace failed")
    root = f"/proc/{hostpid}/root"
    check(os.path.isfile(root + "/tmp/perf-1.map"), "no /tmp/perf-1.map inside the container")
    collected = env.path("collected")
    r = run([os.path.join(env.scripts, "collect"), "watch", "--once", "--map-dir", collected, "--dump-dir",
             collected, str(hostpid)], timeout=60)
    note(r.stdout + r.stderr)
    check(r.returncode == 0, "collect watch --once failed")
    open(root + "/tmp/stop", "w").close()
    rc, _, err = finish(p)
    check(rc == 0 and "jitdumpagent:" not in err, f"JVM exit {rc}: {err}")
    entries = read_map(os.path.join(collected, f"perf-{hostpid}.map"))
    check(any(simple_method(e[2]) == "Workload.mix" for e in entries), "replayed Workload.mix missing from the map")
    dump = read_dump(os.path.join(collected, f"jit-{hostpid}.dump"))
    check(any(simple_method(l.name) == "Workload.mix" for l in dump["loads"]), "Workload.mix missing from the dump")
    check(dump["pid"] == hostpid, "the copy's header pid was not rewritten")


TESTS = {name[5:]: fn for name, fn in globals().items() if name.startswith("test_")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("test", choices=sorted(TESTS))
    parser.add_argument("--agent", required=True)
    parser.add_argument("--scripts", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if shutil.which("java") is None or shutil.which("jcmd") is None:
        print("SKIP: no JDK")
        return SKIP
    env = Env(args)
    passed = False
    try:
        env.compile()
        TESTS[args.test](env)
        passed = True
        print(f"PASS {args.test}")
        return 0
    except Skip as e:
        passed = True
        print(f"SKIP {args.test}: {e}")
        return SKIP
    except Fail as e:
        print(f"FAIL {args.test}: {e}")
        return 1
    finally:
        env.close(passed)


if __name__ == "__main__":
    sys.exit(main())
