#!/usr/bin/env bash
# Runs the JUnit 5 suite against one JDK. Called by meson (java-tests/meson.build):
#   run.sh TARGET_JDK_HOME COMPILE_JDK_HOME AGENT_SO JITDUMP_TOOL WORK_DIR SRC_DIR
# Compiles every *.java under SRC_DIR with the compile JDK's javac (--release 17, -g), then runs
# the JUnit console launcher on the target JDK, which starts child JVMs with the agent.
# Exits non-zero on any failure (including "no tests found").
set -euo pipefail
if [ $# -ne 6 ]; then
  echo "usage: $0 TARGET_JDK_HOME COMPILE_JDK_HOME AGENT_SO JITDUMP_TOOL WORK_DIR SRC_DIR" >&2
  exit 2
fi
target_jdk=$1 compile_jdk=$2 agent=$3 tool=$4 work=$5 src=$6
junit=/usr/share/java/junit-platform-console-standalone.jar

for f in "$target_jdk/bin/java" "$compile_jdk/bin/javac"; do
  [ -x "$f" ] || { echo "run.sh: $f not found" >&2; exit 2; }
done
[ -f "$junit" ] || { echo "run.sh: $junit not found; install Debian's junit5 (scripts/setup does)" >&2; exit 2; }
[ -f "$agent" ] || { echo "run.sh: agent $agent not found; build it first" >&2; exit 2; }
if [ ! -x "$tool" ]; then
  echo "run.sh: WARNING: jitdump tool $tool does not exist yet; the tests that need it will FAIL" >&2
fi

# Fresh work directory every run.
case "$work" in
  */java-tests/work-*) rm -rf "$work" ;;
  *) echo "run.sh: refusing to clean unexpected work dir $work" >&2; exit 2 ;;
esac
mkdir -p "$work/classes" "$work/runs"

mapfile -t sources < <(find "$src" -name '*.java' | sort)
[ ${#sources[@]} -gt 0 ] || { echo "run.sh: no sources under $src" >&2; exit 2; }
"$compile_jdk/bin/javac" --release 17 -g -encoding UTF-8 -Xlint:-options \
  -cp "$junit" -d "$work/classes" "${sources[@]}"

echo "run.sh: target JDK $target_jdk ($("$target_jdk/bin/java" -version 2>&1 | head -1))"
exec "$target_jdk/bin/java" \
  -Djitdump.agent="$agent" \
  -Djitdump.tool="$tool" \
  -Djitdump.jdk="$target_jdk" \
  -Djitdump.work="$work/runs" \
  -Djitdump.classes="$work/classes" \
  -Djitdump.src="$src" \
  -jar "$junit" \
  --disable-banner --details=tree --disable-ansi-colors --fail-if-no-tests \
  --class-path "$work/classes" --scan-classpath "$work/classes" \
  --reports-dir "$work/reports"
