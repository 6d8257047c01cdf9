package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** Options that change what each load record carries: code=, inline=. */
class RecordOptionsTest {
  static boolean allZero(byte[] b) {
    for (byte x : b) if (x != 0) return false;
    return true;
  }

  @Test
  void codeOnStoresTheMachineCode() {
    JitDump d = Runs.mixed().dump();
    JitDump.CodeLoad spin = d.loadsNamed(Runs.PKG + "HotLoop.spin(int)").get(0);
    assertTrue(!allZero(d.code(spin)), "code=on (default) wrote only zeros for " + spin);
    JitDump.CodeLoad interp = d.loadsNamed("Interpreter").get(0);
    assertTrue(!allZero(d.code(interp)), "code=on wrote only zeros for " + interp);
  }

  @Test
  void codeOffWritesZerosOfTheSameSize() {
    AgentRun r = AgentRun.spec("code-off").options("code=off").main(Runs.PKG + "Worker").run().expectExit(0);
    JitDump d = r.dump();
    List<JitDump.CodeLoad> loads = d.codeLoads();
    assertTrue(loads.size() > 100, "code=off lost loads");
    for (JitDump.CodeLoad l : loads) {
      assertEquals(l.codeSize, l.codeBytes, "code=off must keep code_size bytes: " + l);
      assertTrue(allZero(d.code(l)), "code=off wrote code bytes for " + l);
    }
  }

  @Test
  void inlineOnAddsSamplyRecordsBeforeTheirLoads() {
    AgentRun r = AgentRun.spec("inline-on").options("inline=on").jvm(Runs.COMPILE_COMMANDS)
        .main(Runs.PKG + "Mixed").run().expectExit(0);
    JitDump d = r.dump();
    List<JitDump.Record> rs = d.records;
    int samply = 0;
    int withLines = 0;
    for (int i = 0; i < rs.size(); i++) {
      if (rs.get(i).id != 827346259) continue;
      samply++;
      assertTrue(i + 1 < rs.size() && rs.get(i + 1) instanceof JitDump.CodeLoad,
                 "samply DEBUG_INFO2 at offset " + rs.get(i).fileOffset + " is not followed by its CODE_LOAD");
      // Order: [DEBUG_INFO] DEBUG_INFO2 CODE_LOAD; DEBUG_INFO is absent when no frame has lines.
      if (rs.get(i - 1) instanceof JitDump.DebugInfo) {
        withLines++;
        assertEquals(((JitDump.DebugInfo) rs.get(i - 1)).codeAddr, ((JitDump.CodeLoad) rs.get(i + 1)).codeAddr,
                     "DEBUG_INFO and CODE_LOAD around a DEBUG_INFO2 disagree on code_addr");
      }
    }
    assertTrue(samply > 10, "inline=on wrote " + samply + " inline records");
    assertTrue(withLines > samply / 2, "few DEBUG_INFO before DEBUG_INFO2: " + withLines + " of " + samply);
    assertEquals(samply, r.stat("written.inline_info"), "written.inline_info vs records in the dump");
    assertEquals(d.count(JitDump.CODE_LOAD), r.stat("written.code_loads"));
    assertEquals(d.count(JitDump.CODE_DEBUG_INFO), r.stat("written.debug_info"));
  }
}
