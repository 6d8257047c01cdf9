"""The perf suite: real perf record / inject / report / annotate on Java workloads with the agent,
mostly through scripts/bin/perf-java. Every test fails (never skips) when perf cannot sample here.
Figures are printed as "FIGURE name value" lines (grep FIGURE build/meson-logs/testlog.txt)."""
