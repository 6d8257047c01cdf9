"""Native and kernel symbols without perf (jitdump/symbols), against perf itself: every distinct
native and kernel address of real recordings (a JVM: libjvm.so, libc, JNI libraries, the vdso,
the kernel; the symbols fixture as PIE and not; the fixture in a container's mount namespace,
alive and gone) is named by `perf script` and by the Symbolizer, and the names must be equal.
Native inline chains, which perf 6.1 never shows, are checked against LLVM's llvm-symbolizer
(another DWARF reader than elfutils')."""
import os
import subprocess
import time
from pathlib import Path

import pytest

from support import perf
from support.checks import check, figure, log
from support.prereq import require_command, require_file, require_root
from support.procs import wait_for

from .native_symbols import compare, llvm_chains, our_chain, perf_script, vaddr_of_offset


def built(build, relative: str) -> Path:
    path = build.dir / relative
    if not path.is_file():
        pytest.fail(f"{path} is not built: configure the build with -Dtests=true (scripts/setup does) and "
                    f"ninja -C {build.dir}", pytrace=False)
    return path


def record(command, data: Path, env: dict, extra=()) -> None:
    p = subprocess.run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "1999", *extra, "-o", str(data), "--",
                        *map(str, command)], capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"perf record failed (rc={p.returncode})", p.stderr[-2000:])


def check_names(result, what: str) -> None:
    log(f"{what}:\n{result.summary()}")
    differ = sum(len(v) for v in result.differ.values())
    check(differ == 0, f"{what}: {differ} of {sum(result.compared.values())} addresses named otherwise than perf",
          result.summary())


def check_chains(result, dso_suffix: str, what: str, min_checked: int) -> int:
    """Our inline chains (file, line per level) equal llvm-symbolizer's at every address of the
    DSO whose file has DWARF. Returns the deepest chain seen."""
    keys = [k for k, (dso, _, _) in result.requests.items() if dso.endswith(dso_suffix)]
    check(keys, f"{what}: no address in {dso_suffix} to check")
    report = result.file(result.requests[keys[0]][0])
    debug = report.get("debug_info_from", "")
    check(debug, f"{what}: no DWARF used for {dso_suffix}", str(report))
    runtime = report["found_at"]
    vaddrs, ours = [], []
    for k in keys:
        dso, address, mapping = result.requests[k]
        vaddr = vaddr_of_offset(Path(runtime), address - mapping.start + mapping.pgoff)
        if vaddr is None or result.answers[k]["outcome"] != "symbol":
            continue
        vaddrs.append(vaddr)
        ours.append(our_chain(result.answers[k]))
    theirs = llvm_chains(debug, vaddrs)
    differ = [(hex(v), o, t) for v, o, t in zip(vaddrs, ours, theirs) if o != t]
    log(f"{what}: {len(vaddrs)} inline chains of {dso_suffix} compared with llvm-symbolizer, {len(differ)} differ")
    check(len(vaddrs) >= min_checked, f"{what}: enough chains compared ({len(vaddrs)} >= {min_checked})")
    check(not differ, f"{what}: {len(differ)} inline chains differ from llvm-symbolizer's (address, ours, llvm-symbolizer)",
          "\n".join(map(str, differ[:10])))
    return max((len(c) for c in ours), default=0)


def kallsyms_image(path: Path) -> tuple[int, int]:
    """A kallsyms file's _text and the highest start of a kernel image symbol perf keeps (text,
    weak, data, bss; not a module's, whose lines end in a tab and "[module]")."""
    text, last = 0, 0
    for line in path.read_text(errors="replace").splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) < 3 or "\t" in parts[2]:
            continue
        address = int(parts[0], 16)
        if parts[2] == "_text":
            text = address
        if parts[1].upper() in "TWDB":
            last = max(last, address)
    return text, last


def check_kernel_from_copy(probe: Path, data: Path, env: dict, home: Path, script: str) -> None:
    """The kernel addresses announced before the first lookup, as `jitdump report` announces
    them: named from the kallsyms copy the `perf record` left in its build-id cache when every one
    is in the kernel image (else from /proc/kallsyms), and named as perf names them from
    /proc/kallsyms either way."""
    announced = compare(probe, data, env, ["--buildid-dir", home / ".debug", "--want-kernel"], script=script)
    check_names(announced, "JVM, the kernel addresses announced")
    kernel = announced.file("[kernel.kallsyms]")
    check(kernel.get("build_id"), "the recording names its kernel's build id", str(kernel))
    copy = home / ".debug" / "[kernel.kallsyms]" / kernel["build_id"] / "kallsyms"
    check(copy.is_file(), f"perf record (without -N) left its kallsyms copy at {copy}", str(kernel))
    # Recorded in this boot, the copy made now: its addresses are the recording's.
    text, image_last = kallsyms_image(copy)
    addresses = [address for dso, address, _ in announced.requests.values() if dso == "[kernel.kallsyms]"]
    in_image = sum(text <= a < image_last for a in addresses)
    expected = "kallsyms-cache" if in_image == len(addresses) else "kallsyms"
    log(f"kernel addresses announced: {in_image} of {len(addresses)} in the image, named from {kernel['found_how']}")
    check(kernel["found_how"] == expected,
          f"kernel symbols from {expected} ({in_image} of {len(addresses)} addresses in the image)", str(kernel))


@pytest.mark.meson(every_jdk=True)
def test_native_symbols_jvm(build, jvm, work):
    """A JVM's libjvm.so, libc, JNI libraries, vdso and kernel frames: named as perf names them;
    libc's inline chains (Debian's libc6-dbg) as llvm-symbolizer gives them."""
    perf.require_sampling()
    require_command("llvm-symbolizer", "llvm")
    probe = built(build, "cpp-tests/symbols/symbols_probe")
    home = work / "home"
    env = perf.env(home)
    data = work / "perf.data"
    record(jvm.command("symbols.NativeMix", "6"), data, env)
    script = perf_script(data, env)
    result = compare(probe, data, env, ["--buildid-dir", home / ".debug"], script=script)
    check_names(result, "JVM")
    check_kernel_from_copy(probe, data, env, home, script)
    libjvm = next((d for d in result.compared if d.endswith("/libjvm.so")), None)
    check(libjvm is not None, "no libjvm.so frames in the recording")
    figure("native_symbols.jvm.libjvm_addresses", result.compared[libjvm])
    figure("native_symbols.jvm.addresses", sum(result.compared.values()))
    figure("native_symbols.jvm.probe_seconds", round(result.probe_seconds, 2))
    check(result.compared[libjvm] >= 200, f"libjvm.so: enough distinct addresses ({result.compared[libjvm]} >= 200)")
    check(result.perf_named[libjvm] >= 0.9 * result.compared[libjvm],
          f"perf names most libjvm.so addresses ({result.perf_named[libjvm]} of {result.compared[libjvm]}): "
          "the comparison compares names")
    libc = next((d for d in result.compared if "/libc.so" in d), None)
    check(libc is not None and result.compared[libc] >= 5, "libc frames in the recording")
    check(result.compared["[kernel.kallsyms]"] >= 20, f"kernel frames ({result.compared['[kernel.kallsyms]']} >= 20)")
    libc_report = result.file(libc)
    require_file(f"/usr/lib/debug/.build-id/{libc_report['build_id'][:2]}/{libc_report['build_id'][2:]}.debug",
                 "libc6-dbg", "libc's debug file")
    check_chains(result, "/libc.so.6", "JVM", min_checked=5)


@pytest.mark.meson(timeout=300)
@pytest.mark.parametrize("program", ["symfix_pie", "symfix_nopie"], ids=["pie", "nopie"])
def test_native_symbols(build, work, program):
    """The symbols fixture (cpp-tests/symbols/fixtures): a PIE or non-PIE executable and its
    library, whose hot code is a chain of inlined functions."""
    perf.require_sampling()
    require_command("llvm-symbolizer", "llvm")
    probe = built(build, "cpp-tests/symbols/symbols_probe")
    exe = built(build, f"cpp-tests/symbols/{program}")
    home = work / "home"
    env = perf.env(home)
    data = work / "perf.data"
    record([exe, "spin", "5"], data, env)
    result = compare(probe, data, env, ["--buildid-dir", home / ".debug"])
    check_names(result, program)
    check(result.compared[str(exe)] >= 2, f"{program}'s own code sampled")
    lib = str(build.dir / "cpp-tests/symbols/libsymfix.so")
    check(result.compared[lib] >= 5, f"libsymfix.so sampled at enough addresses ({result.compared[lib]} >= 5)")
    deepest = check_chains(result, "/libsymfix.so", program, min_checked=5)
    check(deepest >= 3, f"the inlined chain Inner < Middle < Outer was sampled (deepest chain {deepest})")


@pytest.mark.meson(timeout=300)
def test_native_symbols_container(build, work, cleanup):
    """The fixture in its own mount namespace with its files on a tmpfs only it sees (a
    container): while it lives, through /proc/PID/root; after it exited, from the copies perf
    record put in its build-id cache; without those, not at all (and the lookups say so)."""
    perf.require_sampling()
    require_root("a mount namespace with its own tmpfs")
    require_command("unshare", "util-linux")
    probe = built(build, "cpp-tests/symbols/symbols_probe")
    exe = built(build, "cpp-tests/symbols/symfix_pie")
    lib = built(build, "cpp-tests/symbols/libsymfix.so")
    inside = work / "container"
    inside.mkdir()
    script = (f"mount -t tmpfs tmpfs {inside} && cp {exe} {lib} {inside}/ && "
              f"LD_LIBRARY_PATH={inside} exec {inside}/symfix_pie spin 12 wait")
    proc = subprocess.Popen(["unshare", "--mount", "--fork", "sh", "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    cleanup.kill(proc)
    pid = None

    def started() -> bool:
        nonlocal pid
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if os.readlink(entry / "exe") == f"{inside}/symfix_pie":
                        pid = int(entry.name)
                        return True
                except OSError:
                    pass
        return False

    check(wait_for(started, 20), "the fixture did not start in its namespace")
    check(not (inside / "symfix_pie").exists(), "the container's files are not visible outside it")
    home = work / "home"
    env = perf.env(home)
    data = work / "perf.data"
    p = subprocess.run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "1999", "-p", str(pid), "-o", str(data),
                        "--", "sleep", "3"], capture_output=True, text=True, env=env)
    check(p.returncode == 0, "perf record -p failed", p.stderr[-2000:])
    text = perf_script(data, env)  # while the process lives, perf itself reaches its files

    alive = compare(probe, data, env, ["--buildid-dir", work / "no-cache"], script=text)
    check_names(alive, "container, alive")
    for name in ("symfix_pie", "libsymfix.so"):
        report = alive.file(f"{inside}/{name}")
        check(report.get("found_how") == "proc-root", f"{name} found in the process's root while it lives", str(report))

    proc.stdin.close()
    proc.wait(timeout=30)
    check(wait_for(lambda: not Path(f"/proc/{pid}").exists(), 10), "the fixture did not exit")
    gone = compare(probe, data, env, ["--buildid-dir", home / ".debug"], script=text)
    check_names(gone, "container, gone, with perf's build-id cache")
    for name in ("symfix_pie", "libsymfix.so"):
        report = gone.file(f"{inside}/{name}")
        check(report.get("found_how") == "buildid-cache", f"{name} found in the build-id cache after exit", str(report))

    lost = compare(probe, data, env, ["--buildid-dir", work / "no-cache"], script=text)
    for key, answer in lost.answers.items():
        if lost.requests[key][0].startswith(str(inside)):
            check(answer["outcome"] == "no-file", f"without its files, {key} is no-file ({answer['outcome']})")
    report = lost.file(f"{inside}/libsymfix.so")
    check("found" in report.get("problem", ""), "the report says the file was not found", str(report))
