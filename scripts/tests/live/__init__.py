"""The live suite: profilers that read a running JVM's perf map (agent option perfmap=on) while it
runs: `perf top -p PID` and a bpftrace one-liner. Needs root (perf top on another process's
samples, BPF), linux-perf and bpftrace; a missing one fails the test naming the package."""
