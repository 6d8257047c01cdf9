package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.Map;
import java.util.stream.Stream;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The agent's stats=PATH JSON agrees with the dump it wrote, and nothing was lost. */
class StatsTest {
  static Stream<String> runs() {
    return Stream.of("return-from-main", "system-exit");
  }

  static AgentRun run(String which) {
    return which.equals("system-exit") ? Runs.mixedJvmNamesSystemExit() : Runs.mixed();
  }

  @ParameterizedTest
  @MethodSource("runs")
  void writtenCountsEqualTheDump(String which) throws Exception {
    AgentRun r = run(which);
    JitDump d = r.dump();
    assertEquals(r.dumpPath().toString(), ((Map<?, ?>) r.stats()).get("dump"), "stats names the dump");
    assertEquals(d.count(JitDump.CODE_LOAD), r.stat("written.code_loads"), "written.code_loads vs CODE_LOAD records");
    assertEquals(d.count(JitDump.CODE_DEBUG_INFO), r.stat("written.debug_info"), "written.debug_info vs DEBUG_INFO records");
    long entries = d.records.stream().filter(x -> x instanceof JitDump.DebugInfo)
        .mapToLong(x -> ((JitDump.DebugInfo) x).entries.size()).sum();
    assertEquals(entries, r.stat("written.debug_entries"), "written.debug_entries vs entries in the dump");
    long codeBytes = d.codeLoads().stream().mapToLong(l -> l.codeBytes).sum();
    assertEquals(codeBytes, r.stat("written.code_bytes"), "written.code_bytes vs code in the dump");
    long recordBytes = d.records.stream().filter(x -> x.id != JitDump.CODE_CLOSE).mapToLong(x -> x.totalSize).sum();
    assertEquals(recordBytes, r.stat("written.bytes"), "written.bytes vs the records (header and CLOSE excluded)");
    assertEquals(Files.size(r.dumpPath()), 40 + recordBytes + 16, "file size = header + records + CLOSE");
  }

  @ParameterizedTest
  @MethodSource("runs")
  void everyEventIsAccountedForAndNothingIsLost(String which) {
    AgentRun r = run(which);
    JitDump d = r.dump();
    long loads = d.count(JitDump.CODE_LOAD);
    long events = r.stat("events.compiled_method_load") + r.stat("events.dynamic_code_generated");
    long lost = r.stat("lost.total");
    long duplicates = r.stat("events.duplicate_loads");
    long empty = r.stat("events.empty_blobs");
    // Every code blob the JVM reported is in the file, counted as lost (by cause), a duplicate
    // of code already written (GenerateEvents replays), or an empty blob nothing can run in.
    assertEquals(events, loads + lost + duplicates + empty,
                 "events (compiled_method_load + dynamic_code_generated) vs loads + lost + duplicates + empty; stats: "
                     + r.stats());
    // after_close too: the files close in Agent_OnUnload, so the loads HotSpot still posts while
    // VMDeath runs are kept.
    for (String reason : new String[] {"budget", "queue_full", "allocation", "write_error", "after_close",
                                       "no_output", "unresolved", "writer_error", "writer_stalled"}) {
      assertEquals(0, r.stat("lost." + reason), "lost." + reason + "; stats: " + r.stats());
    }
    assertEquals(0, r.stat("lookup_errors"), "JVMTI lookup errors");
    // Loaded at startup, the only replay is the stubs-only one at VM death (for blobs HotSpot
    // never posts live); it adds only blobs nothing else describes.
    long replayed = r.stat("events.replayed");
    assertTrue(replayed > 0 && replayed <= r.stat("events.dynamic_code_generated"),
               "stub replay at VM death; stats: " + r.stats());
    assertTrue(duplicates <= replayed, "only replayed events can be duplicates here; stats: " + r.stats());
  }

  @ParameterizedTest
  @MethodSource("runs")
  void callbackTimesCoverEveryLoad(String which) {
    AgentRun r = run(which);
    long loads = r.stat("events.compiled_method_load");
    assertTrue(loads > 0, "the workload compiles methods; stats: " + r.stats());
    assertEquals(loads, r.stat("callback_latency.compiled_method_load.count"), "wall time per load; " + r.stats());
    long sampled = r.stat("callback_cpu.compiled_method_load.count");  // one load in 16 per thread
    assertTrue(sampled >= loads / 16 && sampled <= loads / 16 + 4, "CPU time of every 16th load; " + r.stats());
    long small = r.stat("callback_latency.compiled_method_load_code_le_4k.count");
    assertTrue(small > 0 && small <= loads, "loads of at most 4 KiB of code; " + r.stats());
    long p50 = r.stat("callback_latency.compiled_method_load.p50_ns");
    long p99 = r.stat("callback_latency.compiled_method_load.p99_ns");
    long max = r.stat("callback_latency.compiled_method_load.max_ns");
    assertTrue(0 < p50 && p50 <= p99 && p99 <= max * 9 / 8 + 1, "ordered percentiles; " + r.stats());
    long cpuMax = r.stat("callback_cpu.compiled_method_load.max_ns");
    assertTrue(0 < cpuMax && cpuMax <= max + 1000, "a thread cannot burn more CPU than the wall time it spent; "
                                                        + r.stats());
  }
}
