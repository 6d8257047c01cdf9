#!/bin/sh
# The agent must export exactly the three JVMTI entry points: anything else could clash with
# symbols of the JVM or of other agents loaded into the same process.
set -eu
lib=$1
actual=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWwDdBbVvRrIi]$/ {print $3}' | sort | tr '\n' ' ')
expected="Agent_OnAttach Agent_OnLoad Agent_OnUnload "
if [ "$actual" != "$expected" ]; then
  echo "exported symbols of $lib: '$actual'" >&2
  echo "expected exactly: '$expected'" >&2
  exit 1
fi
echo "exports ok: $actual"
