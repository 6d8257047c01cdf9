#!/usr/bin/env bash
# Prints the JDKs the java suite runs on, one per line as "NAME<TAB>HOME", homes resolved and
# deduplicated by realpath. The first line is the default JDK (Debian's OpenJDK 17, else the
# JDK of the javac on PATH), whose javac compiles the tests; its NAME is its feature version.
#   list-jdks.sh EXTRA_JDKS
# EXTRA_JDKS: colon-separated homes, "auto" (every directory under /usr/lib/jvm with bin/java),
# or "" (only the default).
set -euo pipefail
extra=${1-}
if [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/javac ]; then
  default=$(realpath /usr/lib/jvm/java-17-openjdk-amd64)
else
  javac=$(command -v javac) || { echo "list-jdks: no javac" >&2; exit 1; }
  default=$(dirname "$(dirname "$(realpath "$javac")")")
fi
feature=$(sed -n 's/^JAVA_VERSION="\{0,1\}\([0-9]*\).*/\1/p' "$default/release" 2>/dev/null || true)
printf '%s\t%s\n' "${feature:-default}" "$default"
seen=("$default")
if [ "$extra" = auto ]; then
  mapfile -t candidates < <(find /usr/lib/jvm -mindepth 1 -maxdepth 1 \( -type d -o -type l \) | sort)
else
  IFS=: read -r -a candidates <<< "$extra"
fi
for c in "${candidates[@]}"; do
  [ -n "$c" ] || continue
  if [ ! -x "$c/bin/java" ]; then
    # An explicitly named JDK that does not exist is a configuration error; auto just skips.
    if [ "$extra" != auto ]; then echo "list-jdks: $c has no bin/java" >&2; exit 1; fi
    continue
  fi
  home=$(realpath "$c")
  dup=0
  for s in "${seen[@]}"; do [ "$s" = "$home" ] && dup=1; done
  [ $dup -eq 1 ] && continue
  seen+=("$home")
  name=$(basename "$c")
  name=${name%-amd64}; name=${name%-arm64}; name=${name%-jdk}; name=${name%-openjdk}
  printf '%s\t%s\n' "$name" "$home"
done
