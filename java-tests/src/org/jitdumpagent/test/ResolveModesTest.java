package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * resolve=writer (the default on JDK 17.0.14+, 21.0.3+, 22+) copies each load out of the
 * callback and looks names and lines up on the writer thread; resolve=callback looks them up in
 * the callback. Both must write the same thing, including for a class that is unloaded soon
 * after its code was compiled (the deferred load pins its class until it is resolved).
 */
class ResolveModesTest {
  static final String VICTIM = "org.jitdumpagent.workloads.victim.Victim.applyAsInt(int)";
  static final Map<String, AgentRun> RUNS = new HashMap<>();

  static synchronized AgentRun run(String mode) {
    return RUNS.computeIfAbsent(mode, m -> AgentRun.spec("resolve-" + m).options("resolve=" + m)
                                              .main(Runs.PKG + "Unload").run().expectExit(0));
  }

  @ParameterizedTest
  @ValueSource(strings = {"writer", "callback", "auto"})
  void everyLoadIsNamedAndNothingIsLost(String mode) {
    AgentRun r = run(mode);
    assertTrue(r.stdout.contains("unloaded=true"), "the Victim class was not unloaded\n" + r.describe());
    assertEquals(0, r.stat("lost.total"), "lost; stats: " + r.stats());
    assertEquals(0, r.stat("lookup_errors"), "JVMTI lookup errors; stats: " + r.stats());
    List<JitDump.CodeLoad> loads = r.dump().codeLoads();
    assertTrue(loads.stream().noneMatch(l -> l.name.startsWith("[unknown")),
               "unnamed loads: " + r.dump().describe("[unknown"));
    List<JitDump.CodeLoad> victim = r.dump().loadsNamed(VICTIM);
    assertFalse(victim.isEmpty(), "no load of " + VICTIM + r.dump().describe("victim"));
    for (JitDump.CodeLoad l : victim) {
      assertTrue(l.debugInfo != null && !l.debugInfo.entries.isEmpty() && l.debugInfo.entries.stream()
                     .allMatch(e -> e.file.equals("org/jitdumpagent/workloads/victim/Victim.java")),
                 "lines of " + l + ": " + (l.debugInfo == null ? "none" : l.debugInfo.entries));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"writer", "callback", "auto"})
  void loadsAreResolvedWhereAsked(String mode) {
    AgentRun r = run(mode);
    long loads = r.stat("events.compiled_method_load");
    long deferred = r.stat("events.deferred_loads");
    assertEquals(deferred, r.stat("writer_latency.resolve_deferred_load.count"),
                 "every deferred load was resolved by the writer; stats: " + r.stats());
    if (mode.equals("callback")) {
      assertEquals(0, deferred, "resolve=callback defers nothing; stats: " + r.stats());
      return;
    }
    // Loads before the writer has attached (it is asked to at VMInit) and from VM death on are
    // resolved in their callbacks; here all of them were deferred when the machine was idle.
    // The JDKs this suite runs on (17.0.21, 25) all qualify for auto.
    assertTrue(deferred <= loads, "deferred " + deferred + " of " + loads + " loads; " + r.stats());
    assertTrue(deferred > loads / 2, "most loads come after VMInit; stats: " + r.stats());
  }
}
