package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** Every hot workload method is in the dump under the name each names= style promises. */
class NamesTest {
  static final String P = Runs.PKG;

  static void assertLoaded(AgentRun run, String name) {
    JitDump d = run.dump();
    assertFalse(d.loadsNamed(name).isEmpty(),
                "no CODE_LOAD named '" + name + "'; loads in the workload package:" + d.describe("workloads"));
  }

  @Test
  void javaStyleIsDefault() {
    AgentRun r = Runs.mixed();
    assertLoaded(r, P + "HotLoop.spin(int)");
    assertLoaded(r, P + "ChainA.a(int)");
    assertLoaded(r, P + "Names.arrays(java.lang.String[], int[][], long)");
    assertLoaded(r, P + "Names$Point.<init>(int, int)");
    assertLoaded(r, P + "Mixed.mayThrow(int)");
    assertLoaded(r, P + "Worker.churn(int, int)");
  }

  @Test
  void lambdaBodyIsNamedAfterItsSyntheticMethod() {
    JitDump d = Runs.mixed().dump();
    // javac names the body lambda$<enclosing method>$<n>.
    assertTrue(d.codeLoads().stream().anyMatch(l -> l.name.matches("\\Q" + P + "Mixed.lambda$lambdas$\\E\\d+\\(int\\)")),
               "no compiled lambda body:" + d.describe("lambda"));
  }

  @Test
  void javaStyleHasNoJvmDescriptors() {
    for (JitDump.CodeLoad l : Runs.mixed().dump().codeLoads()) {
      if (!l.name.startsWith(P)) continue;
      // The one '/' a java-style name has: a hidden class's, as Class.getName() spells it.
      final String outsideHiddenClasses = l.name.replaceAll("/0x[0-9a-f]+\\.", ".");
      assertFalse(outsideHiddenClasses.contains("/") || l.name.contains(";"), "descriptor syntax in a java-style name: " + l);
      assertTrue(l.name.endsWith(")"), "java-style name without a parameter list: " + l);
    }
  }

  @Test
  void hiddenClassesAreSpelledAsTheJdkPrintsThem() {
    // JVMTI says "LMixed$$Lambda$1.0x...;" (JDK 17) or "LMixed$$Lambda.0x...;" (JDK 21+);
    // Class.getName(), jcmd and stack traces say "Mixed$$Lambda$1/0x...".
    final String hidden = "\\Q" + P + "Mixed$$Lambda\\E(\\$\\d+)?/0x[0-9a-f]+\\.applyAsInt\\(int\\)";
    assertTrue(Runs.mixed().dump().codeLoads().stream().anyMatch(l -> l.name.matches(hidden)),
               "no compiled lambda proxy spelled Mixed$$Lambda.../0x...:" + Runs.mixed().dump().describe("Lambda"));
  }

  @Test
  void jvmStyle() {
    AgentRun r = Runs.mixedJvmNamesSystemExit();
    assertLoaded(r, "Lorg/jitdumpagent/workloads/HotLoop;spin(I)I");
    assertLoaded(r, "Lorg/jitdumpagent/workloads/Names;arrays([Ljava/lang/String;[[IJ)I");
    assertLoaded(r, "Lorg/jitdumpagent/workloads/Names$Point;<init>(II)V");
    assertLoaded(r, "Lorg/jitdumpagent/workloads/Worker;churn(II)J");
    assertFalse(r.dump().codeLoads().stream().anyMatch(l -> l.name.startsWith(P)),
                "names=jvm still wrote java-style names");
  }

  @Test
  void simpleStyle() {
    AgentRun r = Runs.mixedSimpleNames();
    assertLoaded(r, P + "HotLoop.spin");
    assertLoaded(r, P + "Names$Point.<init>");
    assertLoaded(r, P + "Names.arrays");
    List<JitDump.CodeLoad> loads = r.dump().codeLoads();
    for (JitDump.CodeLoad l : loads) {
      if (l.name.startsWith(P)) assertFalse(l.name.contains("("), "names=simple wrote a parameter list: " + l);
    }
  }

  @Test
  void manyThreadsRanTheirWork() {
    AgentRun r = Runs.mixed();
    assertTrue(r.stdout.contains("threads ok 8"), "the threads phase did not finish\n" + r.describe());
  }
}
