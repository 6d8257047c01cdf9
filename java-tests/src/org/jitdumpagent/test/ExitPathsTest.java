package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** However the JVM ends (short of SIGKILL), the dump is complete and closed. */
class ExitPathsTest {
  static void assertClosedAndComplete(AgentRun r) {
    JitDump d = r.dump();
    assertEquals(0, d.trailingBytes, "partial record at the end\n" + r.describe());
    assertEquals(1, d.count(JitDump.CODE_CLOSE), "CLOSE records\n" + r.describe());
    assertEquals(JitDump.CODE_CLOSE, d.records.get(d.records.size() - 1).id, "CLOSE is not last\n" + r.describe());
    assertEquals(r.stat("written.code_loads"), d.count(JitDump.CODE_LOAD), "stats vs dump\n" + r.describe());
    assertFalse(d.loadsNamed("Interpreter").isEmpty(), "no Interpreter load");
    try {
      ToolCheckTest.assertChecks(r);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void runtimeHalt() {
    AgentRun r = AgentRun.spec("halt").main(Runs.PKG + "Worker", "halt").run().expectExit(0);
    assertClosedAndComplete(r);
  }

  @Test
  void sigterm() throws Exception {
    AgentRun.Running running = AgentRun.spec("sigterm").main(Runs.PKG + "Worker", "sleep").start();
    running.awaitLine("ready");
    running.terminate();
    AgentRun r = running.finish();
    assertEquals(143, r.exitCode, "exit status after SIGTERM\n" + r.describe());
    assertTrue(!r.stdout.contains("not killed"), "the JVM slept through SIGTERM");
    assertClosedAndComplete(r);
    assertFalse(r.dump().loadsNamed(Runs.PKG + "HotLoop.spin(int)").isEmpty(), "code compiled before SIGTERM is missing");
  }
}
