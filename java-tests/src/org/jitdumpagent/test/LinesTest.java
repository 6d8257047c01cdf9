package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.jitdumpagent.test.support.Env;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.jitdumpagent.test.support.SourceLines;
import org.junit.jupiter.api.Test;

/**
 * Source lines (JIT_CODE_DEBUG_INFO) against line numbers read from the workload sources'
 * "@line:" markers, never from the agent's output.
 */
class LinesTest {
  static final String P = Runs.PKG;
  static final String DIR = "org/jitdumpagent/workloads/";

  static List<JitDump.CodeLoad> loads(String name) {
    JitDump d = Runs.mixed().dump();
    List<JitDump.CodeLoad> l = d.loadsNamed(name);
    assertFalse(l.isEmpty(), "no load named " + name + d.describe("workloads"));
    return l;
  }

  static String where(JitDump.CodeLoad l) {
    return l + (l.debugInfo == null ? " (no DEBUG_INFO)" : " lines " + l.debugInfo.entries);
  }

  @Test
  void sampledAddressesOfALeafMethodMapIntoItsLineRange() {
    int first = SourceLines.line("HotLoop", "spin-first");
    int last = SourceLines.line("HotLoop", "spin-last");
    for (JitDump.CodeLoad l : loads(P + "HotLoop.spin(int)")) {
      assertNotNull(l.debugInfo, "compiled Java method without DEBUG_INFO: " + l);
      int sampled = 0;
      for (long a = l.codeAddr; a < l.end(); a += 3) {
        JitDump.DebugEntry e = l.debugInfo.lookup(a);
        assertNotNull(e, String.format("address 0x%x maps to no line in %s", a, where(l)));
        assertEquals(DIR + "HotLoop.java", e.file, String.format("file at 0x%x in %s", a, where(l)));
        assertTrue(e.line >= first && e.line <= last,
                   String.format("0x%x maps to line %d, outside spin() lines %d..%d: %s", a, e.line, first, last, where(l)));
        sampled++;
      }
      assertTrue(sampled > 10, "too little code sampled in " + l);
    }
  }

  @Test
  void hotLoopLineIsPresent() {
    int loop = SourceLines.line("HotLoop", "spin-loop");
    boolean found = false;
    for (JitDump.CodeLoad l : loads(P + "HotLoop.spin(int)")) {
      if (l.debugInfo != null && l.debugInfo.entries.stream().anyMatch(e -> e.line == loop)) found = true;
    }
    assertTrue(found, "no compiled spin() has a row for its loop body line " + loop);
  }

  @Test
  void inlinedCalleeLinesAppearInsideTheCaller() {
    String a = DIR + "ChainA.java:" + SourceLines.line("ChainA", "a-body");
    String b = DIR + "ChainB.java:" + SourceLines.line("ChainB", "b-body");
    String c = DIR + "ChainC.java:" + SourceLines.line("ChainC", "c-body");
    List<JitDump.CodeLoad> loads = loads(P + "ChainA.a(int)");
    for (JitDump.CodeLoad l : loads) {
      assertNotNull(l.debugInfo, "no DEBUG_INFO for " + l);
      Set<String> seen = new TreeSet<>();
      for (JitDump.DebugEntry e : l.debugInfo.entries) {
        String fl = e.file + ":" + e.line;
        // a(), b() and c() are one line each: nothing else can be in a()'s code.
        assertTrue(fl.equals(a) || fl.equals(b) || fl.equals(c), "row " + fl + " is none of " + a + ", " + b + ", " + c
                   + " in " + where(l));
        seen.add(fl);
      }
      // b() and c() each call the out-of-line Leaf.mix(): those call sites carry the callee's
      // line in every compilation (C1 and C2) of a().
      assertTrue(seen.contains(b), "the inlined ChainB.b() line " + b + " is not in " + where(l));
      assertTrue(seen.contains(c), "the doubly-inlined ChainC.c() line " + c + " is not in " + where(l));
    }
  }

  @Test
  void lambdaBodyLineIsInTheLambdaCode() {
    int body = SourceLines.line("Mixed", "lambda-body");
    JitDump d = Runs.mixed().dump();
    boolean found = false;
    for (JitDump.CodeLoad l : d.codeLoads()) {
      if (!l.name.startsWith(P + "Mixed.lambda$lambdas$")) continue;
      assertNotNull(l.debugInfo, "no DEBUG_INFO for " + l);
      for (JitDump.DebugEntry e : l.debugInfo.entries) {
        assertEquals(DIR + "Mixed.java", e.file, "lambda body row in another file: " + where(l));
        assertEquals(body, e.line, "lambda body row on another line: " + where(l));
        found = true;
      }
    }
    assertTrue(found, "no compiled lambda body" + d.describe("lambda"));
  }

  @Test
  void throwingMethodHasItsThrowLine() {
    int line = SourceLines.line("Mixed", "throw");
    boolean found = false;
    for (JitDump.CodeLoad l : loads(P + "Mixed.mayThrow(int)")) {
      if (l.debugInfo != null && l.debugInfo.entries.stream().anyMatch(e -> e.file.equals(DIR + "Mixed.java") && e.line == line)) {
        found = true;
      }
    }
    assertTrue(found, "mayThrow() never maps to its throw line " + line);
  }

  @Test
  void workloadFileNamesResolveToRealSources() {
    JitDump d = Runs.mixed().dump();
    int checked = 0;
    for (JitDump.CodeLoad l : d.codeLoads()) {
      if (l.debugInfo == null) continue;
      for (JitDump.DebugEntry e : l.debugInfo.entries) {
        if (!e.file.startsWith(DIR)) continue;
        assertTrue(Files.isRegularFile(Env.sources().resolve(e.file)), "DEBUG_INFO names " + e.file
                   + ", which is not a source under " + Env.sources() + " (" + l + ")");
        checked++;
      }
    }
    assertTrue(checked > 20, "few workload rows: " + checked);
  }

  @Test
  void linesOffWritesNoDebugInfo() {
    // Covered by a dedicated short run: lines=off must drop every DEBUG_INFO but keep the loads.
    org.jitdumpagent.test.support.AgentRun r = org.jitdumpagent.test.support.AgentRun.spec("lines-off")
        .options("lines=off").main(P + "Worker").run().expectExit(0);
    JitDump d = r.dump();
    assertEquals(0, d.count(JitDump.CODE_DEBUG_INFO), "lines=off still wrote DEBUG_INFO");
    assertTrue(d.codeLoads().size() > 100, "lines=off lost code loads");
  }
}
