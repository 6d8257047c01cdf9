package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Deoptimization (class hierarchy change and uncommon trap) and recompilation: every
 * compilation HotSpot reports with -XX:+PrintCompilation is a separate CODE_LOAD.
 */
class DeoptTest {
  static final String P = Runs.PKG;
  static AgentRun run;

  @BeforeAll
  static void launch() {
    run = AgentRun.spec("deopt")
        .jvm("-XX:-TieredCompilation", "-XX:+PrintCompilation", "-XX:CompileCommand=quiet",
             "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Deopt::total",
             "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Deopt::branchy")
        .main(P + "Deopt").run().expectExit(0);
  }

  static List<String> printCompilation(String method) {
    String tag = "org.jitdumpagent.workloads.Deopt::" + method + " ";
    return Arrays.stream(run.stdout.split("\n")).filter(l -> l.contains(tag)).collect(Collectors.toList());
  }

  static void check(String method, String dumpName) {
    List<String> lines = printCompilation(method);
    List<String> deopts = lines.stream().filter(l -> l.contains("made not entrant")).collect(Collectors.toList());
    List<String> compiles = lines.stream().filter(l -> !l.contains("made ")).collect(Collectors.toList());
    // The workload must really deoptimize, or this test proves nothing.
    assertTrue(!deopts.isEmpty(), method + "() was never made not entrant:\n" + run.describe());
    List<JitDump.CodeLoad> loads = run.dump().loadsNamed(dumpName);
    assertEquals(compiles.size(), loads.size(), "CODE_LOADs of " + dumpName + " vs compilations "
                 + String.join("\n", compiles) + "\nloads:" + run.dump().describe("Deopt."));
    assertTrue(loads.size() >= 2, "no recompilation after deoptimization of " + method);
    for (JitDump.CodeLoad l : loads) assertTrue(l.debugInfo != null, "no DEBUG_INFO for " + l);
  }

  @Test
  void classHierarchyChangeRecompiles() {
    check("total", P + "Deopt.total(org.jitdumpagent.workloads.Deopt$Shape[])");
  }

  @Test
  void uncommonTrapRecompiles() {
    check("branchy", P + "Deopt.branchy(int)");
  }

  @Test
  void dumpStaysConsistent() throws Exception {
    JitDump d = run.dump();
    assertEquals(run.stat("written.code_loads"), d.count(JitDump.CODE_LOAD));
    assertEquals(JitDump.CODE_CLOSE, d.records.get(d.records.size() - 1).id, "CLOSE last");
    ToolCheckTest.assertChecks(run);
  }
}
