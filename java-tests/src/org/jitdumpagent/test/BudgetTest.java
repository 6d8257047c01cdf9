package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** When the record budget overflows, records are dropped and counted, and the dump stays valid. */
class BudgetTest {
  @Test
  void droppedRecordsAreCountedNotSilentlyLost() throws Exception {
    // 256K is the smallest budget; the startup burst of several hundred stubs arrives faster than
    // the writer drains it, so some records must be dropped.
    AgentRun r = AgentRun.spec("budget-256k").options("budget=256K,overflow=drop").main(Runs.PKG + "Mixed").run()
        .expectExit(0);
    JitDump d = r.dump();
    long loads = d.count(JitDump.CODE_LOAD);
    assertTrue(r.stat("lost.budget") > 0, "a 256K budget dropped nothing; stats: " + r.stats());
    assertTrue(r.stderr.contains("budget"), "no warning about the full budget\n" + r.describe());
    assertEquals(loads, r.stat("written.code_loads"), "written.code_loads vs the dump");
    long events = r.stat("events.compiled_method_load") + r.stat("events.dynamic_code_generated");
    long lost = r.stat("lost.total");
    assertEquals(events, loads + lost + r.stat("events.duplicate_loads") + r.stat("events.empty_blobs"),
                 "every event is written or counted as lost; stats: " + r.stats());
    assertEquals(JitDump.CODE_CLOSE, d.records.get(d.records.size() - 1).id, "CLOSE last");
    for (JitDump.Record rec : d.records) {
      if (rec instanceof JitDump.DebugInfo) {
        int i = d.records.indexOf(rec);
        assertTrue(d.records.get(i + 1) instanceof JitDump.CodeLoad, "a dropped load left its DEBUG_INFO behind at " + rec.fileOffset);
      }
    }
    ToolCheckTest.assertChecks(r);
  }
}
