"""The integration suite: real JVMs against the built agent, late attach with jcmd
(scripts/bin/attach), JAVA_TOOL_OPTIONS, option sources, perf maps, and JVMs in their own pid and
mount namespaces profiled with real perf (scripts/bin/collect)."""
