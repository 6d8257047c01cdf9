package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Code of a class loaded by a throwaway loader: loaded, compiled, unloaded by System.gc(). */
class UnloadTest {
  static final String VICTIM = "org.jitdumpagent.workloads.victim.Victim.applyAsInt(int)";
  static AgentRun run;

  @BeforeAll
  static void launch() {
    // perfmap= needs an absolute directory: the run's own, so nothing lands in /tmp.
    Path mapDir = org.jitdumpagent.test.support.Env.work().resolve("unload/map").toAbsolutePath();
    run = AgentRun.spec("unload").options("perfmap=" + mapDir).main(Runs.PKG + "Unload").run().expectExit(0);
  }

  @Test
  void workloadUnloadedTheClass() {
    assertTrue(run.stdout.contains("unloaded=true"), "the Victim class was not unloaded\n" + run.describe());
  }

  @Test
  void victimCodeWasLoadedWithLines() {
    List<JitDump.CodeLoad> loads = run.dump().loadsNamed(VICTIM);
    assertFalse(loads.isEmpty(), "no load of " + VICTIM + run.dump().describe("victim"));
    for (JitDump.CodeLoad l : loads) {
      assertTrue(l.debugInfo != null && l.debugInfo.entries.stream()
                     .allMatch(e -> e.file.equals("org/jitdumpagent/workloads/victim/Victim.java")),
                 "lines of " + l + ": " + (l.debugInfo == null ? "none" : l.debugInfo.entries));
    }
  }

  @Test
  void jitdumpCheckAccepts() throws Exception {
    ToolCheckTest.assertChecks(run);
  }

  @Test
  void unloadEventsWereCounted() {
    long victimLoads = run.dump().loadsNamed(VICTIM).size();
    assertTrue(run.stat("events.compiled_method_unload") >= victimLoads,
               "expected at least " + victimLoads + " unload events, stats: " + run.stats());
  }

  @Test
  void perfMapKeepsOnlyLiveCode() throws Exception {
    Path map;
    try (Stream<Path> s = Files.list(run.dir.resolve("map"))) {
      List<Path> maps = s.filter(p -> p.getFileName().toString().matches("perf-\\d+\\.map")).collect(Collectors.toList());
      assertEquals(1, maps.size(), "perf map files: " + maps);
      map = maps.get(0);
    }
    List<String> lines = Files.readAllLines(map);
    assertTrue(lines.stream().anyMatch(l -> l.matches("[0-9a-f]+ [0-9a-f]+ Interpreter")), "no Interpreter line in " + map);
    assertTrue(lines.stream().noneMatch(l -> l.contains("victim.Victim")),
               "unloaded Victim code is still in the compacted perf map " + map);
    assertEquals(0, run.stat("lost.total") - run.stat("lost.after_close"), "lost: " + run.stats());
    // Every line is a load from the dump: same start, size and name.
    java.util.Set<String> loads = run.dump().codeLoads().stream()
        .map(l -> Long.toHexString(l.codeAddr) + " " + Long.toHexString(l.codeSize) + " " + l.name)
        .collect(Collectors.toSet());
    for (String line : lines) {
      String[] f = line.split(" ", 3);
      assertEquals(3, f.length, "malformed perf map line '" + line + "'");
      String key = Long.toHexString(Long.parseUnsignedLong(f[0], 16)) + " " + Long.toHexString(Long.parseLong(f[1], 16)) + " " + f[2];
      assertTrue(loads.contains(key), "perf map line '" + line + "' matches no CODE_LOAD in the dump");
    }
  }
}
