"""docs/deploying.md's service recipes, as far as this machine can run them: the systemd drop-in
(scripts/package/service/jitdumpagent.conf) is verified by systemd-analyze and its environment runs the
demo JVM with the agent; the container and Kubernetes files name the agent where the Debian
package and the sidecar put it. Docker and Kubernetes themselves are not run here (no daemon,
no cluster)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from perf.runs import PerfRun
from support.checks import check, log
from support.jvm import clean_env
from support.output import agent_lines, one_dump
from support.prereq import require_command

from .conftest import DEMO_METHODS

ENVIRONMENT = re.compile(r'^Environment="([A-Z_]+)=([^"]*)"$')


def drop_in(build) -> Path:
    return build.repo / "scripts" / "package" / "service" / "jitdumpagent.conf"


def drop_in_environment(path: Path) -> dict:
    """The drop-in's Environment= assignments, each written as Environment="KEY=VALUE" (the only
    form the recipe uses; anything else fails), with systemd's %% unescaped."""
    env = {}
    for line in path.read_text().splitlines():
        if line.startswith("Environment"):
            m = ENVIRONMENT.match(line)
            check(m, f"{path}: an Environment= line this test does not understand: {line}")
            check("%" not in m.group(2).replace("%%", ""), f"{path}: a systemd specifier in {line}")
            env[m.group(1)] = m.group(2).replace("%%", "%")
    return env


def packaged_agent_path(build) -> str:
    """Where the Debian package (prefix /usr) installs the agent, from meson's own install plan."""
    intro = lambda *a: json.loads(subprocess.run(["meson", "introspect", str(build.dir), *a], check=True,
                                                 capture_output=True, text=True).stdout)
    prefix = next(o["value"] for o in intro("--buildoptions") if o["name"] == "prefix")
    installed = [dest for src, dest in intro("--installed").items() if src.endswith("/libjitdumpagent.so")]
    check(len(installed) == 1, f"meson installs one libjitdumpagent.so (found {installed})")
    return "/usr/" + str(Path(installed[0]).relative_to(prefix))


def test_systemd_dropin(build, agent, tool, jdk, work, soft, cleanup):
    analyze = require_command("systemd-analyze", "systemd", "to verify the drop-in")
    classes = PerfRun(build, agent, tool, jdk, work, soft).demo_classes()
    units = work / "units"
    (units / "demo-app.service.d").mkdir(parents=True)
    (units / "demo-app.service").write_text(
        f"[Unit]\nDescription=the bundled demo\n\n[Service]\nExecStart={jdk.java} -cp {classes} demo.Demo 2\n")
    (units / "demo-app.service.d" / "jitdumpagent.conf").write_text(drop_in(build).read_text())
    r = subprocess.run([analyze, "verify", str(units / "demo-app.service")], capture_output=True, text=True,
                       env=clean_env(SYSTEMD_UNIT_PATH=f"{units}:", LC_ALL="C"))
    complaints = [l for l in (r.stdout + r.stderr).splitlines() if "jitdumpagent.conf" in l or "demo-app" in l]
    check(r.returncode == 0 and not complaints, "systemd-analyze verify complains about the drop-in",
          r.stdout + r.stderr)

    # The drop-in's environment, with the build's agent for the packaged path and the work
    # directory for /var/tmp/jitdump, starts the demo with the agent writing both files.
    env = drop_in_environment(drop_in(build))
    check(packaged_agent_path(build) in env.get("JAVA_TOOL_OPTIONS", ""),
          f"the drop-in's JAVA_TOOL_OPTIONS names the packaged agent {packaged_agent_path(build)}", str(env))
    env["JAVA_TOOL_OPTIONS"] = env["JAVA_TOOL_OPTIONS"].replace(packaged_agent_path(build), str(agent))
    env["JITDUMPAGENT_OPTIONS"] = env["JITDUMPAGENT_OPTIONS"].replace("/var/tmp/jitdump", str(work / "jitdump"))
    log(f"the drop-in's environment, adapted to the build: {env}")
    proc = subprocess.Popen([str(jdk.java), "-cp", str(classes), "demo.Demo", "2"], env=clean_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    perf_map = Path(f"/tmp/perf-{proc.pid}.map")
    cleanup.remove(perf_map)
    out, err = proc.communicate(timeout=300)
    check(proc.returncode == 0, "the demo failed under the drop-in's environment", err.decode(errors="replace"))
    complaints = agent_lines(err)
    check(not complaints, "the agent complained", "\n".join(complaints))
    dump = one_dump(work / "jitdump" / str(proc.pid))
    checked = tool.check(dump)
    check(checked.returncode == 0, f"{dump} is not a valid jitdump", checked.stdout + checked.stderr)
    names = {load.name for load in tool.records(dump).loads}
    check(all(m in names for m in DEMO_METHODS), f"{dump} names the demo's hot methods")
    text = perf_map.read_text(errors="replace") if perf_map.exists() else ""
    check(all(m in text for m in DEMO_METHODS), f"{perf_map} names the demo's hot methods")


@pytest.mark.meson(timeout=120)
def test_recipe_files(build):
    agent_path = packaged_agent_path(build)
    dockerfile = build.repo / "scripts" / "package" / "container" / "Dockerfile.package"
    text = dockerfile.read_text()
    check(f"-agentpath:{agent_path}" in text, f"{dockerfile} loads the agent from the package's {agent_path}")
    check("libjitdumpagent_*.deb" in text, f"{dockerfile} installs the package build-deb writes")
    try:
        import yaml
    except ImportError:
        pytest.fail("python3-yaml is missing (the pod recipe is parsed with it): install Debian's python3-yaml "
                    "(scripts/setup does)", pytrace=False)
    pod_file = build.repo / "scripts" / "package" / "container" / "pod.yaml"
    docs = [d for d in yaml.safe_load_all(pod_file.read_text()) if d]
    kinds = {d["kind"]: d for d in docs}
    check({"ConfigMap", "Pod"} <= set(kinds), f"{pod_file} holds a ConfigMap and a Pod ({sorted(kinds)})")
    pod = kinds["Pod"]["spec"]
    sidecar = pod["initContainers"][0]
    app = pod["containers"][0]
    tool_options = next(e["value"] for e in app["env"] if e["name"] == "JAVA_TOOL_OPTIONS")
    agent_mount = next(m["mountPath"] for m in app["volumeMounts"] if m["name"] == "agent")
    check(f"-agentpath:{agent_mount}/libjitdumpagent.so" in tool_options,
          "the pod's JAVA_TOOL_OPTIONS loads the library from the sidecar's volume", tool_options)
    check(f"{agent_mount}/" in " ".join(sidecar["command"]), "the sidecar copies the library into that volume",
          str(sidecar["command"]))
