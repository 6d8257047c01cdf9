"""Loading through JAVA_TOOL_OPTIONS (every JVM of the environment, silently), and the option
sources' precedence: config file < JITDUMPAGENT_OPTIONS < the option string."""
import shutil

from support.checks import CheckFailed, check, log
from support.jvm import clean_env, finish, wait_line
from support.output import EXIT_RACE, dumps_in, one_dump
from support.procs import run

from .workload import read_dump, simple_method


def only_picked_up(stderr):
    lines = [l for l in stderr.splitlines() if l.strip()]
    return [l for l in lines if not l.startswith("Picked up JAVA_TOOL_OPTIONS:") and EXIT_RACE not in l]


def test_java_tool_options(jvm, tool, work):
    out = work / "out"
    jdk = jvm.jdk
    tool_env = {"JAVA_TOOL_OPTIONS": jvm.agent_arg(f"dir={out}")}
    # javac
    src = work / "src"
    src.mkdir()
    (src / "Hello.java").write_text(
        "public class Hello { public static void main(String[] a) { System.out.println(\"hi\"); } }\n")
    r = run([jdk.javac, "-d", src, src / "Hello.java"], env=clean_env(**tool_env), timeout=120)
    check(r.returncode == 0, f"javac failed under JAVA_TOOL_OPTIONS: {r.stderr}")
    check(r.stdout == "", f"javac printed: {r.stdout!r}")
    check(not only_picked_up(r.stderr), f"unexpected stderr from javac: {only_picked_up(r.stderr)}")
    check("Picked up JAVA_TOOL_OPTIONS" in r.stderr, "the JVM did not pick up JAVA_TOOL_OPTIONS")
    check(len(dumps_in(out)) == 1, "javac wrote no dump")
    # java running the compiled class
    r = run([jdk.java, "-cp", src, "Hello"], env=clean_env(**tool_env), timeout=60)
    check(r.returncode == 0 and r.stdout == "hi\n", f"java Hello: {r.returncode} {r.stdout!r} {r.stderr}")
    check(not only_picked_up(r.stderr), f"unexpected stderr from java: {only_picked_up(r.stderr)}")
    # jcmd, against a JVM that has the agent through JAVA_TOOL_OPTIONS too
    stop = work / "stop"
    p = jvm.start("Workload", "20000", stop, env=tool_env)
    pid = int(wait_line(p, "ready").split()[1])
    for command in ([jdk.jcmd, str(pid), "VM.version"], [jdk.jcmd, "-l"], [jdk.jcmd, str(pid), "Compiler.codelist"]):
        r = run(command, env=clean_env(**tool_env), timeout=60)
        check(r.returncode == 0, f"{command} failed: {r.stdout}{r.stderr}")
        check(not only_picked_up(r.stderr), f"unexpected stderr from {command}: {only_picked_up(r.stderr)}")
        agent_lines = [l for l in r.stdout.splitlines() if l.startswith("jitdumpagent:")]
        check(not agent_lines, f"{command} printed agent output: {agent_lines}")
    check(str(pid) in run([jdk.jcmd, "-l"], env=clean_env(**tool_env)).stdout, "jcmd -l does not list the JVM")
    stop.touch()
    rc, stdout, err = finish(p)
    check(rc == 0, f"workload exit {rc}: {err}")
    check(not only_picked_up(err), f"unexpected stderr from the workload: {only_picked_up(err)}")
    dumps = dumps_in(out)
    log(f"dumps written under JAVA_TOOL_OPTIONS: {len(dumps)}")
    check(len(dumps) >= 6, f"expected a dump per JVM (javac, java, workload, 4 jcmd), found {len(dumps)}")
    workload = read_dump(tool, out / f"jit-{pid}.dump")
    check(any(simple_method(l.name) == "Workload.mix" for l in workload.loads), "Workload.mix missing")
    # Asking for output is honoured: log=info prints, once, on stderr.
    loud = {"JAVA_TOOL_OPTIONS": jvm.agent_arg(f"dir={out},log=info")}
    r = run([jdk.jcmd, "-l"], env=clean_env(**loud), timeout=60)
    check(r.returncode == 0 and "jitdumpagent: info: writing" in r.stderr, f"log=info was not honoured: {r.stderr}")


def name_style(dump):
    names = [l.name for l in dump.loads if "Workload" in l.name and "mix" in l.name]
    check(names, "Workload.mix was not compiled")
    name = names[0]
    if name.startswith("LWorkload;mix(I)I"):
        return "jvm"
    if name == "Workload.mix(int)":
        return "java"
    if name == "Workload.mix":
        return "simple"
    raise CheckFailed(f"unknown name style: {name}")


def test_config_precedence(jvm, tool, work):
    d_file, d_env, d_cmd = work / "file", work / "env", work / "cmd"
    config = work / "agent.conf"
    config.write_text("# a ConfigMap-style file\n"
                      f"dir={d_file}\n"
                      "names=jvm   # trailing comment\n"
                      "\n"
                      f"perfmap={d_file}\n")

    def run_case(name, agent_options, env_options, expect_dir, expect_style, expect_map_dir):
        for d in (d_file, d_env, d_cmd):
            shutil.rmtree(d, ignore_errors=True)
        extra = {} if env_options is None else {"JITDUMPAGENT_OPTIONS": env_options}
        p = jvm.start("Workload", "600", env=extra, jvm_args=[jvm.agent_arg(agent_options or "")])
        rc, out, err = finish(p)
        check(rc == 0 and not err.strip(), f"{name}: exit {rc}, stderr {err!r}")
        for d in (d_file, d_env, d_cmd):
            has_dump = bool(dumps_in(d))
            check(has_dump == (d == expect_dir), f"{name}: dump in {d}: {has_dump}, expected in {expect_dir}")
            has_map = bool(list(d.glob("perf-*.map")))
            check(has_map == (d == expect_map_dir), f"{name}: map in {d}: {has_map}, expected in {expect_map_dir}")
        style = name_style(read_dump(tool, one_dump(expect_dir)))
        check(style == expect_style, f"{name}: names={style}, expected {expect_style}")
        log(f"{name}: ok (dir {expect_dir.name}, names {style})")

    run_case("file only (config= on the command line)", f"config={config}", None, d_file, "jvm", d_file)
    run_case("file named by the environment", None, f"config={config}", d_file, "jvm", d_file)
    run_case("env over file", f"config={config}", "names=simple", d_file, "simple", d_file)
    run_case("env over file (dir)", f"config={config}", f"dir={d_env}", d_env, "jvm", d_file)
    run_case("command line over env over file", f"dir={d_cmd},names=java",
             f"config={config},names=simple,dir={d_env},perfmap=off", d_cmd, "java", None)
    run_case("command line over file", f"config={config},perfmap=off,names=simple", None, d_file, "simple", None)
