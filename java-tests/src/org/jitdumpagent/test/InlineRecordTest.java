package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.Env;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.jitdumpagent.test.support.SourceLines;
import org.junit.jupiter.api.Test;

/**
 * samply's SAMPLY_JIT_CODE_DEBUG_INFO2 (agent option inline=on), end to end: the InlineTree
 * workload's hot a() inlines b() and c(); the record's inline tree must say so with the call
 * lines read from the source markers, and an address in c()'s loop must resolve to c, b, a.
 * The record is decoded here from samply's layout (seed 002), independently of the C++ code.
 */
class InlineRecordTest {
  static final int SAMPLY_DEBUG_INFO2 = 827346259;
  static final String P = Runs.PKG;
  static final String FILE = "org/jitdumpagent/workloads/InlineTree.java";

  private static AgentRun run;

  static synchronized AgentRun run() {
    if (run == null) {
      run = AgentRun.spec("inline-tree").options("inline=on")
          .jvm("-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.InlineTree::a")
          .main(P + "InlineTree").run().expectExit(0);
    }
    return run;
  }

  /** One decoded inline record. */
  static final class Inline {
    final long fileOffset;
    final int totalSize;
    final List<String> files = new ArrayList<>();
    final List<String> names = new ArrayList<>();
    int[][] functions;  // {name, file, start_line, start_column, flags}
    int[][] calls;      // {depth, range_count, function, call_line, call_column}
    int[][] ranges;     // {start_offset, size}
    int[][] lines;      // {code_offset, file, line, column}
    int[] rangeBegin;   // first range of each call

    Inline(long fileOffset, int totalSize) {
      this.fileOffset = fileOffset;
      this.totalSize = totalSize;
    }

    String function(int f) {
      return names.get(functions[f][0]);
    }

    String functionFile(int f) {
      return files.get(functions[f][1]);
    }

    boolean covers(int call, long offset) {
      for (int r = rangeBegin[call]; r < rangeBegin[call] + calls[call][1]; r++) {
        if (offset >= ranges[r][0] && offset < (long) ranges[r][0] + ranges[r][1]) return true;
      }
      return false;
    }

    /** Index of each call's parent call, -1 for calls made by the outer function. */
    int[] parents() {
      int[] parent = new int[calls.length];
      int[] pathByDepth = new int[calls.length + 1];
      for (int i = 0; i < calls.length; i++) {
        int d = calls[i][0];
        parent[i] = d == 0 ? -1 : pathByDepth[d - 1];
        pathByDepth[d] = i;
      }
      return parent;
    }

    /** The inline frames at {@code offset}, innermost first: "function file:line". */
    List<String> chain(long offset) {
      int[] parent = parents();
      int deepest = -1;
      for (int i = 0; i < calls.length; i++) {
        boolean all = true;
        for (int c = i; c >= 0 && all; c = parent[c]) all = covers(c, offset);
        if (all && (deepest < 0 || calls[i][0] > calls[deepest][0])) deepest = i;
      }
      int[] line = null;
      for (int[] l : lines) if (l[0] <= offset) line = l;
      List<String> out = new ArrayList<>();
      String file = line == null ? "?" : files.get(line[1]);
      int lineNo = line == null ? 0 : line[2];
      for (int c = deepest; ; c = parent[c]) {
        int f = c < 0 ? 0 : calls[c][2];
        out.add(function(f) + " " + file + ":" + lineNo);
        if (c < 0) break;
        int callerFunction = parent[c] < 0 ? 0 : calls[parent[c]][2];
        file = functionFile(callerFunction);
        lineNo = calls[c][3];
      }
      return out;
    }
  }

  static List<String> strings(ByteBuffer b, int from, int size, int count, String what) {
    List<String> out = new ArrayList<>();
    int p = from;
    for (int i = 0; i < count; i++) {
      int nul = p;
      while (nul < from + size && b.get(nul) != 0) nul++;
      assertTrue(nul < from + size, what + " string " + i + " runs past its list");
      byte[] s = new byte[nul - p];
      b.get(p, s);
      out.add(new String(s, StandardCharsets.UTF_8));
      p = nul + 1;
    }
    assertEquals(0, size % 4, what + " list size is not a multiple of 4");
    assertTrue(p <= from + size && from + size - p < 4, what + " list has more than 3 bytes of padding");
    return out;
  }

  static int[][] table(ByteBuffer b, int from, int count, int width) {
    int[][] t = new int[count][width];
    for (int i = 0; i < count; i++) {
      for (int k = 0; k < width; k++) t[i][k] = b.getInt(from + 4 * (i * width + k));
    }
    return t;
  }

  static Inline decode(ByteBuffer b, JitDump.Record r) {
    int pos = (int) r.fileOffset;
    Inline in = new Inline(r.fileOffset, r.totalSize);
    int[] n = new int[8];
    for (int i = 0; i < 8; i++) n[i] = b.getInt(pos + 16 + 4 * i);
    int p = pos + 48;
    in.files.addAll(strings(b, p, n[1], n[0], "file"));
    p += n[1];
    in.names.addAll(strings(b, p, n[3], n[2], "function name"));
    p += n[3];
    in.functions = table(b, p, n[4], 5);
    p += 20 * n[4];
    in.calls = table(b, p, n[5], 5);
    p += 20 * n[5];
    in.ranges = table(b, p, n[6], 2);
    p += 8 * n[6];
    in.lines = table(b, p, n[7], 4);
    p += 16 * n[7];
    assertEquals(pos + r.totalSize, p, "inline record at " + pos + ": lists do not fill total_size");
    in.rangeBegin = new int[in.calls.length];
    int next = 0;
    for (int i = 0; i < in.calls.length; i++) {
      in.rangeBegin[i] = next;
      next += in.calls[i][1];
    }
    assertEquals(in.ranges.length, next, "inline record at " + pos + ": calls consume " + next + " of " + in.ranges.length + " ranges");
    return in;
  }

  /** Every load that has an inline record, with that record (the record precedes its load). */
  static Map<JitDump.CodeLoad, Inline> inlineRecords(JitDump d) {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(d.path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    ByteBuffer b = ByteBuffer.wrap(bytes).order(d.order);
    Map<JitDump.CodeLoad, Inline> out = new LinkedHashMap<>();
    Inline pending = null;
    for (JitDump.Record r : d.records) {
      if (r.id == SAMPLY_DEBUG_INFO2) {
        assertTrue(pending == null, "two inline records before one CODE_LOAD at " + r.fileOffset);
        pending = decode(b, r);
      } else if (r instanceof JitDump.CodeLoad) {
        if (pending != null) out.put((JitDump.CodeLoad) r, pending);
        pending = null;
      }
    }
    assertTrue(pending == null, "inline record without a CODE_LOAD after it");
    return out;
  }

  static Map<JitDump.CodeLoad, Inline> loadsOfA() {
    Map<JitDump.CodeLoad, Inline> all = inlineRecords(run().dump());
    Map<JitDump.CodeLoad, Inline> out = new LinkedHashMap<>();
    all.forEach((load, in) -> {
      if (load.name.equals(P + "InlineTree.a(int)")) out.put(load, in);
    });
    assertFalse(out.isEmpty(), "no inline record for a compiled InlineTree.a(int)" + run().dump().describe("InlineTree"));
    return out;
  }

  static String describe(JitDump.CodeLoad load, Inline in) {
    StringBuilder sb = new StringBuilder(load.toString()).append("\n  functions:");
    for (int f = 0; f < in.functions.length; f++) {
      sb.append(" [").append(f).append("] ").append(in.function(f)).append(" ").append(in.functionFile(f)).append(":")
          .append(in.functions[f][2]);
    }
    sb.append("\n  calls:");
    for (int i = 0; i < in.calls.length; i++) {
      sb.append("\n    ").append("  ".repeat(in.calls[i][0])).append(in.function(in.calls[i][2])).append(" @line ")
          .append(in.calls[i][3]).append(" ranges");
      for (int r = in.rangeBegin[i]; r < in.rangeBegin[i] + in.calls[i][1]; r++) {
        sb.append(String.format(" [0x%x,0x%x)", in.ranges[r][0], in.ranges[r][0] + in.ranges[r][1]));
      }
    }
    sb.append("\n  lines:");
    for (int[] l : in.lines) sb.append(String.format(" +0x%x %s:%d", l[0], in.files.get(l[1]), l[2]));
    return sb.toString();
  }

  private static AgentRun mixed;

  /** The Mixed workload (lambdas, exceptions, library code) with inline=on. */
  static synchronized AgentRun mixedInline() {
    if (mixed == null) {
      mixed = AgentRun.spec("mixed-inline").options("inline=on").jvm(Runs.COMPILE_COMMANDS).main(P + "Mixed").run()
          .expectExit(0);
    }
    return mixed;
  }

  @Test
  void everyRecordIsStructurallyValid() {
    assertValid(run().dump());
    assertValid(mixedInline().dump());
  }

  static void assertValid(JitDump d) {
    Map<JitDump.CodeLoad, Inline> all = inlineRecords(d);
    assertFalse(all.isEmpty(), "no inline records in " + d.path);
    for (Map.Entry<JitDump.CodeLoad, Inline> e : all.entrySet()) {
      JitDump.CodeLoad load = e.getKey();
      Inline in = e.getValue();
      String where = describe(load, in);
      assertTrue(in.functions.length >= 1, "no outer function: " + where);
      assertEquals(load.name.replaceFirst("\\(.*$", ""), in.function(0), "the first function is not the load's: " + where);
      for (int[] f : in.functions) {
        assertTrue(f[0] >= 0 && f[0] < in.names.size() && f[1] >= 0 && f[1] < in.files.size(), where);
        assertEquals(0, f[3], "start column: " + where);
        assertEquals(0, f[4], "flags: " + where);
      }
      for (int i = 0; i < in.calls.length; i++) {
        int[] c = in.calls[i];
        assertTrue(c[0] <= (i == 0 ? 0 : in.calls[i - 1][0] + 1), "call " + i + " breaks the DFS depth rule: " + where);
        assertTrue(c[1] >= 1, "call " + i + " has no ranges: " + where);
        assertTrue(c[2] >= 0 && c[2] < in.functions.length, "call " + i + " function index: " + where);
      }
      int[] parent = in.parents();
      for (int i = 0; i < in.calls.length; i++) {
        for (int r = in.rangeBegin[i]; r < in.rangeBegin[i] + in.calls[i][1]; r++) {
          long start = Integer.toUnsignedLong(in.ranges[r][0]);
          long size = Integer.toUnsignedLong(in.ranges[r][1]);
          assertTrue(size > 0 && start + size <= load.codeSize, "range outside the code: " + where);
          if (r > in.rangeBegin[i]) assertTrue(start >= in.ranges[r - 1][0] + (long) in.ranges[r - 1][1], "ranges unsorted: " + where);
          // A call's code lies inside its caller's.
          if (parent[i] >= 0) {
            for (long off = start; off < start + size; off += Math.max(1, size / 4)) {
              assertTrue(in.covers(parent[i], off), String.format("call %d at +0x%x outside its caller: %s", i, off, where));
            }
          }
        }
      }
      for (int k = 0; k < in.lines.length; k++) {
        int[] l = in.lines[k];
        assertTrue(l[1] >= 0 && l[1] < in.files.size(), where);
        assertTrue(Integer.toUnsignedLong(l[0]) < load.codeSize, "line record outside the code: " + where);
        if (k > 0) assertTrue(l[0] > in.lines[k - 1][0], "line records not ascending: " + where);
      }
    }
  }

  @Test
  void hotCallerTreeNamesABCWithTheirCallLines() {
    int aCall = SourceLines.line("InlineTree", "a-call");
    int bCall = SourceLines.line("InlineTree", "b-call");
    int cFirst = SourceLines.line("InlineTree", "c-first");
    String a = P + "InlineTree.a", b = P + "InlineTree.b", c = P + "InlineTree.c";
    boolean full = false;
    for (Map.Entry<JitDump.CodeLoad, Inline> e : loadsOfA().entrySet()) {
      Inline in = e.getValue();
      String where = describe(e.getKey(), in);
      assertEquals(a, in.function(0), where);
      assertEquals(FILE, in.functionFile(0), where);
      assertEquals(aCall, in.functions[0][2], "a()'s start line: " + where);
      int[] parent = in.parents();
      for (int i = 0; i < in.calls.length; i++) {
        String callee = in.function(in.calls[i][2]);
        String caller = parent[i] < 0 ? a : in.function(in.calls[parent[i]][2]);
        if (callee.equals(b)) {
          assertEquals(a, caller, "b() inlined into something else than a(): " + where);
          assertEquals(aCall, in.calls[i][3], "call line of b() in a(): " + where);
          assertEquals(bCall, in.functions[in.calls[i][2]][2], "b()'s start line: " + where);
        }
        if (callee.equals(c)) {
          assertEquals(b, caller, "c() inlined into something else than b(): " + where);
          assertEquals(bCall, in.calls[i][3], "call line of c() in b(): " + where);
          assertEquals(cFirst, in.functions[in.calls[i][2]][2], "c()'s start line: " + where);
          assertEquals(1, in.calls[i][0], "c() is not at depth 1: " + where);
          full = true;
        }
      }
    }
    assertTrue(full, "no compiled a() with b() and c() inlined:\n"
               + loadsOfA().entrySet().stream().map(e -> describe(e.getKey(), e.getValue())).reduce("", (x, y) -> x + y + "\n"));
  }

  @Test
  void addressInCsHotLoopResolvesToCBA() throws Exception {
    int aCall = SourceLines.line("InlineTree", "a-call");
    int bCall = SourceLines.line("InlineTree", "b-call");
    int cLoop = SourceLines.line("InlineTree", "c-loop");
    List<String> expected = Arrays.asList(P + "InlineTree.c " + FILE + ":" + cLoop, P + "InlineTree.b " + FILE + ":" + bCall,
                                          P + "InlineTree.a " + FILE + ":" + aCall);
    int checked = 0;
    long someAddress = 0;
    for (Map.Entry<JitDump.CodeLoad, Inline> e : loadsOfA().entrySet()) {
      JitDump.CodeLoad load = e.getKey();
      Inline in = e.getValue();
      for (int[] l : in.lines) {
        if (!in.files.get(l[1]).equals(FILE) || l[2] != cLoop) continue;
        long addr = load.codeAddr + Integer.toUnsignedLong(l[0]);
        assertEquals(expected, in.chain(l[0]), String.format("inline chain at 0x%x: %s", addr, describe(load, in)));
        // perf's DEBUG_INFO agrees on the innermost line.
        JitDump.DebugInfo debug = load.debugInfo;
        assertNotNull(debug, "no DEBUG_INFO for " + load);
        JitDump.DebugEntry row = debug.lookup(addr);
        assertNotNull(row, String.format("no DEBUG_INFO row at 0x%x", addr));
        assertEquals(FILE + ":" + cLoop, row.file + ":" + row.line, String.format("DEBUG_INFO at 0x%x", addr));
        someAddress = addr;
        checked++;
      }
    }
    assertTrue(checked > 0, "no code of c()'s loop line " + cLoop + " in any compiled a()");

    // The jitdump CLI reads the same chain from the record.
    ToolCheckTest.Result res = ToolCheckTest.jitdump("addr2line", run().dumpPath().toString(), String.format("0x%x", someAddress));
    assertEquals(0, res.exit, res.output);
    String flat = res.output.replace('\n', ' ');
    String want = "#0 \\S*InlineTree\\.c\\S* \\S*InlineTree\\.java:" + cLoop + "\\b.*#1 \\S*InlineTree\\.b\\S* \\S*InlineTree\\.java:"
        + bCall + "\\b.*#2 \\S*InlineTree\\.a\\S* \\S*InlineTree\\.java:" + aCall + "\\b";
    assertTrue(Pattern.compile(want).matcher(flat).find(), "jitdump addr2line output:\n" + res.output);
  }

  @Test
  void inlineIsOffByDefault() {
    JitDump d = Runs.mixed().dump();
    assertEquals(0, d.count(SAMPLY_DEBUG_INFO2), "a run without inline=on wrote samply inline records");
  }

  @Test
  void stripInlineMovesTheRecordsToASidecar() throws Exception {
    JitDump original = run().dump();
    byte[] bytes = Files.readAllBytes(original.path);
    Path dir = Env.work().resolve("inline-strip");
    Files.createDirectories(dir);
    Path copy = dir.resolve(original.path.getFileName());
    Files.write(copy, bytes);
    Files.deleteIfExists(dir.resolve(copy.getFileName() + ".inline"));

    ToolCheckTest.Result res = ToolCheckTest.jitdump("strip-inline", copy.toString());
    assertEquals(0, res.exit, "jitdump strip-inline:\n" + res.output);

    JitDump stripped = JitDump.read(copy);
    assertEquals(0, stripped.count(SAMPLY_DEBUG_INFO2), "inline records left in the stripped dump");
    assertEquals(original.records.size() - original.count(SAMPLY_DEBUG_INFO2), stripped.records.size());
    assertEquals(original.codeLoads().size(), stripped.codeLoads().size());
    assertEquals(original.count(JitDump.CODE_DEBUG_INFO), stripped.count(JitDump.CODE_DEBUG_INFO));

    JitDump sidecar = JitDump.read(dir.resolve(copy.getFileName() + ".inline"));
    byte[] side = Files.readAllBytes(sidecar.path);
    assertArrayEquals(Arrays.copyOf(bytes, original.headerTotalSize), Arrays.copyOf(side, sidecar.headerTotalSize), "sidecar header");
    Map<JitDump.CodeLoad, Inline> before = inlineRecords(original);
    List<JitDump.Record> records = sidecar.records;
    assertEquals(2 * before.size(), records.size(), "sidecar is not (inline record, CODE_LOAD) pairs");
    int i = 0;
    for (Map.Entry<JitDump.CodeLoad, Inline> e : before.entrySet()) {
      JitDump.Record inl = records.get(i++);
      JitDump.Record load = records.get(i++);
      assertEquals(SAMPLY_DEBUG_INFO2, inl.id);
      assertTrue(load instanceof JitDump.CodeLoad, "record after an inline record in the sidecar is not a CODE_LOAD");
      assertArrayEquals(slice(bytes, e.getValue().fileOffset, e.getValue().totalSize), slice(side, inl.fileOffset, inl.totalSize));
      assertArrayEquals(slice(bytes, e.getKey().fileOffset, e.getKey().totalSize), slice(side, load.fileOffset, load.totalSize));
    }
    assertEquals(0, ToolCheckTest.jitdump("check", copy.toString()).exit);
    assertEquals(0, ToolCheckTest.jitdump("check", sidecar.path.toString()).exit);
  }

  static byte[] slice(byte[] b, long offset, int size) {
    return Arrays.copyOfRange(b, (int) offset, (int) offset + size);
  }
}
