"""Names against the JVM's own: every method-handle intrinsic (invokeBasic, linkTo*) and every
other nmethod the JVM lists in `jcmd <pid> Compiler.codelist` of the same live JVM carries that
name in the dump, hidden classes spelled as the JDK spells them ("LambdaForm$DMH/0x...").
JVMTI hands all intrinsics one jmethodID (that of whichever intrinsic came first), so a name
taken from JVMTI alone would be wrong for all but one of them (agent/core/intrinsic_names.h)."""
import re

from support import jdks
from support.checks import check, log
from support.jvm import finish, wait_line
from support.output import agent_lines, one_dump, read_stats
from support.prereq import optional

from .workload import codelist, read_dump, simple_method

UNKNOWN_INTRINSIC = "java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)"
INTRINSIC = re.compile(r"^java\.lang\.invoke\.MethodHandle\.(invokeBasic|linkTo\w+)\((.*)\)(.+)$")
PRIMITIVES = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "F": "float",
              "D": "double", "V": "void"}


def java_parameters(descriptor: str) -> str:
    """'IILjava/lang/invoke/MemberName;' -> 'int, int, java.lang.invoke.MemberName' (JVMS 4.3.3)."""
    out, pos = [], 0
    while pos < len(descriptor):
        dims = 0
        while descriptor[pos] == "[":
            dims, pos = dims + 1, pos + 1
        if descriptor[pos] == "L":
            end = descriptor.index(";", pos)
            name, pos = descriptor[pos + 1:end].replace("/", "."), end + 1
        else:
            name, pos = PRIMITIVES[descriptor[pos]], pos + 1
        out.append(name + "[]" * dims)
    return ", ".join(out)


def check_names_match_codelist(jvm, tool, work):
    out, stop, stats = work / "out", work / "stop", work / "stats.json"
    p = jvm.start("MhIntrinsics", "300", stop, agent=f"dir={out},stats={stats}")
    pid = int(wait_line(p, "pid ", timeout=240).split()[1])
    listed = codelist(jvm.jdk.jcmd, pid)
    stop.touch()
    rc, _, err = finish(p)
    check(rc == 0, f"JVM exit {rc}: {err}")
    check(not agent_lines(err), f"the agent printed on the JVM's stderr: {err}")
    dump = read_dump(tool, one_dump(out))
    ours = {}
    for load in dump.loads:  # the last load at an address is the code there now
        ours[load.code_addr] = load.name

    intrinsics = {a: n for a, n in listed.items() if INTRINSIC.match(n)}
    kinds = sorted({INTRINSIC.match(n).group(1) for n in intrinsics.values()})
    log(f"JDK {jvm.jdk.feature}: {len(listed)} nmethods in Compiler.codelist, {len(intrinsics)} intrinsics "
        f"({', '.join(kinds)}), {len(dump.loads)} loads in the dump")
    # The program makes all five kinds; fewer would mean the test no longer tests them.
    check({"invokeBasic", "linkToStatic", "linkToSpecial", "linkToVirtual", "linkToInterface"} <= set(kinds),
          f"MhIntrinsics made only {kinds}")
    wrong, unnamed, expected_names = [], [], set()
    for addr, name in sorted(intrinsics.items()):
        m = INTRINSIC.match(name)
        # names=java leaves out return types, for intrinsics as for every method: linkToSpecial
        # (Object, long, MemberName) returning long and returning void read alike.
        expected = f"java.lang.invoke.MethodHandle.{m.group(1)}({java_parameters(m.group(2))})"
        expected_names.add(expected)
        if ours.get(addr) == UNKNOWN_INTRINSIC:
            unnamed.append(hex(addr))
        elif ours.get(addr) != expected:
            wrong.append((hex(addr), expected, ours.get(addr)))
    check(not wrong, f"{len(wrong)} of {len(intrinsics)} intrinsics named otherwise than Compiler.codelist "
          f"(address, codelist, ours): {wrong[:8]}")
    log(f"{len(intrinsics)} intrinsics, {len(expected_names)} distinct names without return types; "
        f"{len(intrinsics) - len(unnamed)} named as listed, {len(unnamed)} say their name is unknown")

    # Every other nmethod: the same method, hidden classes spelled alike ('/0x...').
    others = {a: n for a, n in listed.items() if a not in intrinsics and a in ours}
    mismatched = [(n, ours[a]) for a, n in others.items() if simple_method(n) != simple_method(ours[a])]
    check(not mismatched, f"names differ from Compiler.codelist: {mismatched[:10]}")
    hidden = [n for n in others.values() if "/0x" in n]
    check(hidden, "no hidden class among the compiled methods: the spelling check did not run")
    log(f"{len(others)} other nmethods named as in Compiler.codelist, {len(hidden)} of hidden classes, "
        f"e.g. {hidden[0]}")

    s = read_stats(stats)["method_handle_intrinsics"]
    log(f"stats: {s}")
    check(s["code_lists_read"] >= 1, f"the code list was never read: {s}")
    # The agent reads the list only while its CPU cost fits a budget (agent/core/intrinsic_names.h); a
    # read costs more CPU on a loaded machine, so some reads may be skipped there. An intrinsic
    # left unnamed must then say so (never carry another's name), be counted, and be the
    # exception: on a quiet machine every one is named.
    check(not unnamed or s["code_lists_skipped"] > 0,
          f"{len(unnamed)} intrinsics unnamed although no read of the code list was skipped: {s}")
    check(s["unnamed"] >= len(unnamed) and s["named"] + s["unnamed"] >= len(intrinsics), f"intrinsic stats: {s}")
    check(len(unnamed) <= len(intrinsics) // 4,
          f"{len(unnamed)} of {len(intrinsics)} intrinsics unnamed (more than a quarter): {unnamed[:8]}; {s}")


def test_intrinsic_names(jvm, tool, work):
    check_names_match_codelist(jvm, tool, work)


def test_intrinsic_names_jdk21plus(jvm, tool, work):
    """JDK 21 moved the JMM function the agent calls (JMM_VERSION_4): the newest JDK 21+."""
    jdk = jdks.newest(21)
    if jdk is None:
        optional("no JDK 21+ under /usr/lib/jvm (Debian 12 ships only 17; install one, e.g. Temurin 25)")
    check_names_match_codelist(jvm.with_jdk(jdk), tool, work)


def test_intrinsic_names_off(jvm, tool, work):
    """intrinsics=off: the code list is never read, and every intrinsic says its name is unknown."""
    out, stats = work / "out", work / "stats.json"
    r = jvm.run("MhIntrinsics", "0", agent=f"dir={out},stats={stats},intrinsics=off", timeout=240)
    check(r.returncode == 0, f"JVM exit {r.returncode}", r.stderr.decode())
    dump = read_dump(tool, one_dump(out))
    named = [l.name for l in dump.loads if INTRINSIC.match(l.name)]
    count = sum(l.name == UNKNOWN_INTRINSIC for l in dump.loads)
    s = read_stats(stats)["method_handle_intrinsics"]
    log(f"intrinsics=off: {count} loads named {UNKNOWN_INTRINSIC}; stats {s}")
    check(not named, f"intrinsics named with intrinsics=off: {named[:5]}")
    check(count >= 20 and s["unnamed"] == count and s["code_lists_read"] == 0, f"{count} unknown intrinsics, stats {s}")
