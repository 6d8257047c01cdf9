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

# It must load wherever the JVM runs: glibc 2.34 (RHEL 9, Ubuntu 22.04 has 2.35) is the floor a
# Debian 12 build can reach; a newer symbol version would make dlopen fail and the JVM refuse
# to start.
newest=$(objdump -T "$lib" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n | tail -1)
case "$newest" in
  GLIBC_2.3[5-9]|GLIBC_2.[4-9][0-9])
    echo "$lib needs $newest (symbols: $(objdump -T "$lib" | grep "$newest" | awk '{print $NF}' | tr '\n' ' '))" >&2
    exit 1 ;;
esac
echo "glibc floor ok: $newest"
