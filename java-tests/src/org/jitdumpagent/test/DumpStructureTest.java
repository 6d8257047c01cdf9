package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The file-level rules of the jitdump format, checked on real dumps. */
class DumpStructureTest {
  static Stream<String> runs() {
    return Stream.of("return-from-main", "system-exit");
  }

  static AgentRun run(String which) {
    return which.equals("system-exit") ? Runs.mixedJvmNamesSystemExit() : Runs.mixed();
  }

  @ParameterizedTest
  @MethodSource("runs")
  void headerIsVersion1With40ByteHeader(String which) {
    AgentRun r = run(which);
    JitDump d = r.dump();
    assertEquals(java.nio.ByteOrder.LITTLE_ENDIAN, d.order, "x86-64 dumps are little-endian");
    assertEquals(1, d.version, "header version");
    assertEquals(40, d.headerTotalSize, "header total_size");
    assertEquals(0, d.flags, "header flags (no arch timestamp)");
    String arch = System.getProperty("os.arch");
    if (arch.equals("amd64") || arch.equals("x86_64")) assertEquals(62, d.elfMach, "elf_mach EM_X86_64");
    assertEquals("jit-" + d.pid + ".dump", r.dumpPath().getFileName().toString(), "header pid matches the file name");
    assertEquals(0, d.trailingBytes, "no partial record at the end");
  }

  @ParameterizedTest
  @MethodSource("runs")
  void closeRecordEndsTheFile(String which) {
    JitDump d = run(which).dump();
    assertEquals(1, d.count(JitDump.CODE_CLOSE), "exactly one JIT_CODE_CLOSE");
    JitDump.Record last = d.records.get(d.records.size() - 1);
    assertEquals(JitDump.CODE_CLOSE, last.id, "the last record is JIT_CODE_CLOSE");
    assertEquals(16, last.totalSize, "CLOSE is a bare record header");
  }

  @ParameterizedTest
  @MethodSource("runs")
  void everyDebugInfoImmediatelyPrecedesItsCodeLoad(String which) {
    JitDump d = run(which).dump();
    List<JitDump.Record> rs = d.records;
    int debugInfos = 0;
    for (int i = 0; i < rs.size(); i++) {
      if (!(rs.get(i) instanceof JitDump.DebugInfo)) continue;
      debugInfos++;
      JitDump.DebugInfo di = (JitDump.DebugInfo) rs.get(i);
      assertTrue(i + 1 < rs.size() && rs.get(i + 1) instanceof JitDump.CodeLoad,
                 "DEBUG_INFO at offset " + di.fileOffset + " is not followed by a CODE_LOAD");
      JitDump.CodeLoad load = (JitDump.CodeLoad) rs.get(i + 1);
      assertEquals(load.codeAddr, di.codeAddr, "DEBUG_INFO code_addr vs the next CODE_LOAD: " + load);
      assertFalse(di.entries.isEmpty(), "DEBUG_INFO with no entries before " + load);
      long prev = Long.MIN_VALUE;
      for (JitDump.DebugEntry e : di.entries) {
        assertTrue(e.addr > prev, "entries not strictly ascending in DEBUG_INFO for " + load + ": " + di.entries);
        assertTrue(Long.compareUnsigned(e.addr, load.codeAddr) >= 0 && Long.compareUnsigned(e.addr, load.end()) < 0,
                   "entry " + e + " outside " + load);
        assertTrue(e.line >= 1, "line numbers start at 1: " + e + " in " + load);
        assertFalse(e.file.isEmpty(), "empty file name: " + e + " in " + load);
        prev = e.addr;
      }
    }
    assertTrue(debugInfos > 10, "expected many DEBUG_INFO records with lines=on, found " + debugInfos);
  }

  @ParameterizedTest
  @MethodSource("runs")
  void codeLoadsAreWellFormed(String which) {
    JitDump d = run(which).dump();
    Set<Long> indexes = new HashSet<>();
    List<JitDump.CodeLoad> loads = d.codeLoads();
    assertTrue(loads.size() > 100, "expected hundreds of code loads, got " + loads.size());
    long previousIndex = -1;
    for (JitDump.CodeLoad l : loads) {
      assertTrue(indexes.add(l.codeIndex), "code_index " + l.codeIndex + " used twice: " + l);
      assertTrue(l.codeIndex > previousIndex, "code_index not increasing in file order at " + l);
      previousIndex = l.codeIndex;
      assertEquals(d.pid, l.pid, "pid of " + l);
      assertEquals(l.codeAddr, l.vma, "vma == code_addr for " + l);
      assertTrue(l.codeSize > 0, "empty code in " + l);
      assertEquals(l.codeSize, l.codeBytes, "code=on stores exactly code_size bytes: " + l);
      assertFalse(l.name.isEmpty(), "empty name at offset " + l.fileOffset);
      assertTrue(Long.compareUnsigned(l.timestamp, d.timestamp) >= 0, "load before the file header's timestamp: " + l);
    }
    for (JitDump.Record rec : d.records) {
      if (rec.id > JitDump.CODE_UNWINDING_INFO) fail("unexpected record id " + rec.id + " with default options");
    }
  }
}
