#!/usr/bin/env python3
"""The install suite: the product as a user gets it, run with nothing from the checkout.

  test_install.py destdir --build BUILD --source SRC
      `meson install --destdir` of BUILD into a fresh directory: exactly the expected files, no
      path of SRC or BUILD inside any of them, man pages groff accepts, the exports and glibc
      floor of the installed agent, and the installed perf-java profiling the demo.
  test_install.py deb --source SRC
      scripts/package/build-deb (lintian included), then apt-get install of the agent package
      alone (a JVM loads it and writes a valid dump), then of the tools, the same checks as
      above on /usr, then apt-get remove and purge, after which none of the packages' files
      is left. Needs root: it installs system-wide (CI runs as root on a throwaway machine)
      and refuses to start when a libjitdumpagent package is already installed.

The installed commands run with a clean environment (PATH of the system directories plus the
installed bin/, HOME and the working directory in a fresh temporary directory), so nothing of
the build tree can be found through PATH, PERF_JAVA_AGENT or the current directory. A missing
prerequisite fails the test with the Debian package to install.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

AGENT_PACKAGE = "libjitdumpagent"
TOOLS_PACKAGE = "libjitdumpagent-tools"
COMMANDS = ["jitdump", "perf-java", "jitdump-attach", "jitdump-collect", "jitdump-hotspot-view"]
DOCS = ["agent", "deploying", "design", "measurements", "reports", "testing"]  # docs/*.md
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
DEMO_SECONDS = "4"


class Failure(Exception):
    pass


def check(condition, what, detail=""):
    """Prints 'ok: WHAT', or fails with WHAT and DETAIL (the evidence: a command's output)."""
    if not condition:
        raise Failure(f"{what}\n{detail}".rstrip())
    print(f"ok: {what}", flush=True)


def need(program, package):
    if shutil.which(program, path=SYSTEM_PATH) is None:
        raise Failure(f"{program} not found: install Debian's {package} (scripts/setup does)")


def run(command, **kwargs):
    print("$ " + " ".join(command), flush=True)
    return subprocess.run(command, text=True, capture_output=True, **kwargs)


def expected_files(bindir, libdir, datadir, mandir):
    """What an install holds, relative to its root: the spec of `meson install`."""
    return sorted(
        [f"{bindir}/{c}" for c in COMMANDS]
        + [f"{mandir}/man1/{c}.1" for c in COMMANDS]
        + [f"{libdir}/libjitdumpagent/libjitdumpagent.so"]
        + [f"{datadir}/libjitdumpagent/container/{f}" for f in ("Dockerfile", "Dockerfile.package", "README.md",
                                                                 "pod.yaml")]
        + [f"{datadir}/libjitdumpagent/service/jitdumpagent.conf"]
        + [f"{datadir}/doc/libjitdumpagent/README.md"]
        + [f"{datadir}/doc/libjitdumpagent/docs/{d}.md" for d in DOCS])


def files_under(root):
    found = []
    for directory, _, names in os.walk(root):
        found += [os.path.relpath(os.path.join(directory, n), root) for n in names]
    return sorted(found)


def check_no_checkout_paths(paths, forbidden):
    """No installed file names the checkout or its build tree (the agent's own debug info aside)."""
    naming = []
    for path in paths:
        if path.endswith(".so") or os.path.basename(path) == "jitdump":
            continue  # compiled: debug info may carry source paths; locating never reads them
        with open(path, "rb") as f:
            data = f.read()
        if path.endswith(".gz"):
            data = gzip.decompress(data)
        naming += [f"{path} names {where}" for where in forbidden if where.encode() in data]
    check(not naming, f"no installed script, page or document names {' or '.join(forbidden)}", "\n".join(naming))


def check_man_pages(pages, bindir, env):
    """Each command's page renders without a groff warning and shows its --help text."""
    need("groff", "groff-base")
    for command in COMMANDS:
        page = next(p for p in pages if os.path.basename(p) in (command + ".1", command + ".1.gz"))
        with open(page, "rb") as f:
            text = f.read()
        if page.endswith(".gz"):
            text = gzip.decompress(text)
        r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=text, capture_output=True)
        check(r.returncode == 0 and not r.stderr, f"groff renders {page} without warnings", r.stderr.decode())
        shown = subprocess.run(["groff", "-man", "-Tascii", "-P-cbou"], input=text, capture_output=True).stdout.decode()
        help_text = subprocess.run([os.path.join(bindir, command), "--help"], env=env, capture_output=True, text=True).stdout
        first = " ".join(next(line for line in help_text.split("\n") if line.strip()).split())
        check(first in " ".join(shown.split()), f"{page} shows the --help text ('{first[:60]}')")


def check_agent_guarantees(source, agent):
    r = run(["sh", os.path.join(source, "cpp-tests", "check_exports.sh"), agent])
    print(r.stdout, end="")
    check(r.returncode == 0, f"the installed agent exports only Agent_* and needs glibc <= 2.34", r.stderr)


def clean_env(work, bindir):
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    return {"PATH": f"{bindir}:{SYSTEM_PATH}", "HOME": home, "LANG": "C.UTF-8", "TMPDIR": work}


def compile_demo(source, work):
    need("javac", "openjdk-17-jdk-headless")
    classes = os.path.join(work, "classes")
    demo = os.path.join(source, "scripts", "demo-app", "demo")
    r = run(["javac", "-g", "-d", classes] + [os.path.join(demo, f) for f in sorted(os.listdir(demo))])
    check(r.returncode == 0, "javac compiled the demo", r.stderr)
    return classes


def check_installed_commands(bindir, agent, work, classes):
    """--help of each command, then perf-java profiling the demo, all from bindir."""
    env = clean_env(work, bindir)
    for command in COMMANDS:
        r = run([os.path.join(bindir, command), "--help"], env=env, cwd=work)
        check(r.returncode == 0 and r.stdout.strip(), f"{command} --help", r.stderr)
    r = run([os.path.join(bindir, "perf-java"), "--help"], env=env, cwd=work)
    check(f"(default {agent};" in r.stdout, f"perf-java --help names the installed agent {agent}", r.stdout)

    need("perf", "linux-perf")
    run_dir = os.path.join(work, "run")
    # --inject: also perf's own view (report.txt), so the installed perf-java is checked with both.
    r = run([os.path.join(bindir, "perf-java"), "-o", run_dir, "-q", "--inject", "--",
             "java", "-cp", classes, "demo.Demo", DEMO_SECONDS], env=env, cwd=work)
    check(r.returncode == 0, f"installed perf-java profiled the demo (rc={r.returncode})", r.stderr)
    check(f"-agentpath:{agent}=" in r.stderr, f"the JVM loaded the installed agent {agent}", r.stderr)
    check_java_frames(run_dir)
    check_running_jvm(bindir, agent, env, work, classes)


def check_running_jvm(bindir, agent, env, work, classes):
    """The installed perf-java -p on a JVM started without the agent: it attaches the installed
    agent through the installed jitdump-attach and reports the JVM's Java frames with lines."""
    jvm = subprocess.Popen(["java", "-cp", classes, "demo.Demo", "30"], env=env, cwd=work,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        run_dir = os.path.join(work, "run-pid")
        r = run([os.path.join(bindir, "perf-java"), "-o", run_dir, "-p", str(jvm.pid), "-d", "3"], env=env, cwd=work)
        check(r.returncode == 0, f"installed perf-java -p profiled a running JVM (rc={r.returncode})", r.stderr)
        check("jitdump-attach: writing" in r.stderr, "perf-java -p attached through the installed jitdump-attach",
              r.stderr)
        maps = open(f"/proc/{jvm.pid}/maps").read()
        check(agent in maps, f"the running JVM mapped the installed agent {agent}", maps[:2000])
        with open(os.path.join(run_dir, "srcline.txt")) as f:
            srcline = f.read()
        m = re.search(r"java_srcline_share: ([0-9.]+)%", srcline)
        check(m is not None and float(m.group(1)) >= 80.0 and "demo.Demo." in srcline,
              f"{m and m.group(1)}% of the running JVM's compiled-Java samples have a source line", srcline)
        check(jvm.poll() is None, "the JVM runs on after perf-java -p")
    finally:
        jvm.kill()
        jvm.wait()


def check_java_frames(run_dir):
    """Java method names in jitted code and Java source lines, from perf-java's reports."""
    with open(os.path.join(run_dir, "report.txt")) as f:
        report = f.read()
    demo_share = sum(float(m.group(1)) for m in
                     re.finditer(r"^\s*([0-9.]+)%\s+jitted-\d+-\d+\.so\s+\[\.\]\s+demo\.Demo\.\w+\(", report, re.M))
    check(demo_share >= 20.0, f"perf report attributes {demo_share:.1f}% of samples to the demo's compiled Java methods",
          report)
    with open(os.path.join(run_dir, "srcline.txt")) as f:
        srcline = f.read()
    m = re.search(r"java_srcline_share: ([0-9.]+)%", srcline)
    check(m is not None and float(m.group(1)) >= 90.0,
          f"{m and m.group(1)}% of the samples in compiled Java methods have a source line", srcline)
    hot = re.findall(r"^\s*[0-9.]+%\s+\d+\s+(?:\S*/)?Demo\.java:(\d+)\s+demo\.Demo\.\w+", srcline, re.M)
    check(len(hot) >= 2, f"demo source lines with their methods: Demo.java:{', Demo.java:'.join(hot[:5])}", srcline)


# ------------------------------------------------------------------------------------ destdir

def test_destdir(args, work):
    info = json.loads(run(["meson", "introspect", "--buildoptions", args.build], check=True).stdout)
    options = {o["name"]: o["value"] for o in info}
    prefix = options["prefix"]
    dest = os.path.join(work, "dest")
    r = run(["meson", "install", "-C", args.build, "--destdir", dest, "--no-rebuild", "--quiet"])
    check(r.returncode == 0, f"meson install --destdir {dest}", r.stdout + r.stderr)

    root = dest + prefix
    dirs = {k: options[k] for k in ("bindir", "libdir", "datadir", "mandir")}
    installed = files_under(dest)
    expected = [os.path.relpath(os.path.join(prefix, f), "/") for f in expected_files(**dirs)]
    check(installed == sorted(expected), f"exactly the expected {len(expected)} files under {dest}",
          f"installed: {installed}\nexpected: {sorted(expected)}")
    check_no_checkout_paths([os.path.join(dest, f) for f in installed],
                            [os.path.realpath(args.source), os.path.realpath(args.build)])
    bindir = os.path.join(root, dirs["bindir"])
    check_man_pages([os.path.join(root, dirs["mandir"], "man1", c + ".1") for c in COMMANDS],
                    bindir, clean_env(work, bindir))
    # The scripts find the agent beside themselves, not at prefix: DESTDIR is a relocation.
    agent = os.path.realpath(os.path.join(root, dirs["libdir"], "libjitdumpagent", "libjitdumpagent.so"))
    check_agent_guarantees(args.source, agent)
    classes = compile_demo(args.source, work)
    check_installed_commands(bindir, agent, work, classes)


# ------------------------------------------------------------------------------------ deb

def package_state(name):
    r = subprocess.run(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", name], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def apt_get(*arguments):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return run(["apt-get", "-y", "-o", "DPkg::Lock::Timeout=600"] + list(arguments), env=env)


def package_files(name):
    listing = run(["dpkg-query", "-L", name]).stdout.split("\n")
    return [p for p in listing if p and not os.path.isdir(p)]


def test_deb(args, work):
    check(os.geteuid() == 0, "running as root (the test installs the packages system-wide; CI runs as root)")
    need("apt-get", "apt")
    for name in (AGENT_PACKAGE, TOOLS_PACKAGE):
        state = package_state(name)
        check(state in ("unknown", "un", "pn"),
              f"{name} is not installed before the test (state '{state}'; apt-get purge {name} to run it)")

    out = os.path.join(work, "out")
    r = run([os.path.join(args.source, "scripts", "package", "build-deb"), "-o", out])
    print(r.stdout, end="", flush=True)
    check(r.returncode == 0, "scripts/package/build-deb built the packages and lintian passed them", r.stderr[-5000:])
    arch = run(["dpkg", "--print-architecture"], check=True).stdout.strip()
    debs = {name: os.path.join(out, f) for name in (AGENT_PACKAGE, TOOLS_PACKAGE)
            for f in os.listdir(out) if f.startswith(name + "_") and f.endswith(f"_{arch}.deb")}
    check(len(debs) == 2, f"both packages were built: {sorted(os.listdir(out))}")

    agent_depends = run(["dpkg-deb", "-f", debs[AGENT_PACKAGE], "Depends", "Recommends"]).stdout
    check(not re.search(r"perf|python|jdk|jre|java", agent_depends),
          f"the agent package pulls in no perf, Python or Java ({agent_depends.strip()})")
    tools_depends = run(["dpkg-deb", "-f", debs[TOOLS_PACKAGE], "Depends"]).stdout
    check("linux-perf" in tools_depends and "python3" in tools_depends,
          f"the tools package depends on perf and python3 ({tools_depends.strip()})")

    classes = compile_demo(args.source, work)
    installed = {}
    try:
        r = apt_get("install", debs[AGENT_PACKAGE])
        check(r.returncode == 0, f"apt-get install {debs[AGENT_PACKAGE]}", r.stdout[-2000:] + r.stderr)
        installed[AGENT_PACKAGE] = package_files(AGENT_PACKAGE)
        agent = next(p for p in installed[AGENT_PACKAGE] if p.endswith("/libjitdumpagent.so"))
        check_agent_guarantees(args.source, agent)
        dump = check_agent_alone(agent, work, classes)

        r = apt_get("install", debs[TOOLS_PACKAGE])
        check(r.returncode == 0, f"apt-get install {debs[TOOLS_PACKAGE]}", r.stdout[-2000:] + r.stderr)
        installed[TOOLS_PACKAGE] = package_files(TOOLS_PACKAGE)
        everything = sorted(installed[AGENT_PACKAGE] + installed[TOOLS_PACKAGE])
        check(all(p.startswith("/usr/") for p in everything), "every packaged file is under /usr")
        libdir = os.path.dirname(os.path.dirname(agent))
        for f in expected_files("/usr/bin", libdir, "/usr/share", "/usr/share/man"):
            check(f in everything or f + ".gz" in everything, f"packaged: {f}")
        check_no_checkout_paths(everything, [os.path.realpath(args.source)])
        env = clean_env(work, "/usr/bin")
        check_man_pages([p for p in everything if "/man1/" in p], "/usr/bin", env)
        r = run(["/usr/bin/jitdump", "check", dump], env=env, cwd=work)
        check(r.returncode == 0, "the installed jitdump finds the dump of the agent alone valid", r.stdout + r.stderr)
        check_installed_commands("/usr/bin", agent, work, classes)
    finally:
        # remove, then purge what dpkg still knows (a package without conffiles is forgotten at
        # remove already, and apt then no longer finds its name to purge).
        removed = apt_get("remove", AGENT_PACKAGE, TOOLS_PACKAGE)
        left_after_remove = {name: [p for p in files if os.path.lexists(p)] for name, files in installed.items()}
        known = [name for name in (AGENT_PACKAGE, TOOLS_PACKAGE) if package_state(name) != "unknown"]
        purged = apt_get("purge", *known) if known else None
    check(removed.returncode == 0, "apt-get remove", removed.stdout[-2000:] + removed.stderr)
    for name, left in left_after_remove.items():
        check(not left, f"no file of {name} is left after apt-get remove", "\n".join(left))
    if purged is not None:
        check(purged.returncode == 0, f"apt-get purge {' '.join(known)}", purged.stdout[-2000:] + purged.stderr)
    for name in installed:
        check(package_state(name) == "unknown", f"dpkg no longer knows {name}")
    for directory in ("/usr/share/libjitdumpagent", "/usr/share/doc/libjitdumpagent"):
        check(not os.path.exists(directory), f"{directory} is gone")


def check_agent_alone(agent, work, classes):
    """The agent package without the tools: a JVM loads it and writes a dump."""
    need("java", "openjdk-17-jre-headless")
    dump_dir = os.path.join(work, "agent-alone", "jit")
    env = clean_env(work, "/usr/bin")
    r = run(["java", f"-agentpath:{agent}=dir={dump_dir}", "-cp", classes, "demo.Demo", "1"], env=env, cwd=work)
    check(r.returncode == 0, f"java -agentpath:{agent} ran the demo", r.stderr)
    dumps = [f for f in os.listdir(dump_dir) if re.fullmatch(r"jit-\d+\.dump", f)]
    check(len(dumps) == 1 and os.path.getsize(os.path.join(dump_dir, dumps[0])) > 40,
          f"the agent alone wrote a dump: {dumps}")
    return os.path.join(dump_dir, dumps[0])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["destdir", "deb"])
    parser.add_argument("--source", required=True)
    parser.add_argument("--build")
    args = parser.parse_args(argv)
    if args.mode == "destdir" and not args.build:
        parser.error("destdir needs --build")

    work = tempfile.mkdtemp(prefix=f"install-test-{args.mode}.")
    try:
        (test_destdir if args.mode == "destdir" else test_deb)(args, work)
    except Failure as e:
        print(f"FAIL: {e}\n(work directory kept: {work})", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
