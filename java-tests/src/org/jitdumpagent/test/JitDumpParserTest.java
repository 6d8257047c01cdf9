package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Json;
import org.junit.jupiter.api.Test;

/** The test suite's own jitdump reader (and JSON reader) on hand-built input, no JVM needed. */
class JitDumpParserTest {
  /** Builds records byte by byte, following the specification's field lists. */
  static final class Builder {
    final ByteOrder order;
    final ByteArrayOutputStream out = new ByteArrayOutputStream();

    Builder(ByteOrder order) {
      this.order = order;
      ByteBuffer h = buf(40);
      h.putInt(JitDump.MAGIC).putInt(1).putInt(40).putInt(62).putInt(0).putInt(4242).putLong(1000).putLong(0);
      add(h);
    }

    ByteBuffer buf(int n) {
      return ByteBuffer.allocate(n).order(order);
    }

    void add(ByteBuffer b) {
      out.write(b.array(), 0, b.position());
    }

    static byte[] cstr(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      return Arrays.copyOf(b, b.length + 1);
    }

    Builder codeLoad(long ts, long addr, int size, long index, String name) {
      byte[] n = cstr(name);
      int total = 16 + 40 + n.length + size;
      ByteBuffer b = buf(total);
      b.putInt(JitDump.CODE_LOAD).putInt(total).putLong(ts);
      b.putInt(4242).putInt(7).putLong(addr).putLong(addr).putLong(size).putLong(index);
      b.put(n);
      for (int i = 0; i < size; i++) b.put((byte) 0x90);
      add(b);
      return this;
    }

    Builder debugInfo(long ts, long addr, Object... entries) {  // (Long addr, Integer line, String file)*
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      for (int i = 0; i < entries.length; i += 3) {
        ByteBuffer e = buf(16);
        e.putLong((Long) entries[i]).putInt((Integer) entries[i + 1]).putInt(0);
        body.write(e.array(), 0, 16);
        byte[] f = cstr((String) entries[i + 2]);
        body.write(f, 0, f.length);
      }
      int total = 32 + body.size();
      ByteBuffer b = buf(total);
      b.putInt(JitDump.CODE_DEBUG_INFO).putInt(total).putLong(ts).putLong(addr).putLong(entries.length / 3);
      b.put(body.toByteArray());
      add(b);
      return this;
    }

    Builder raw(int id, int payload) {
      ByteBuffer b = buf(16 + payload);
      b.putInt(id).putInt(16 + payload).putLong(5);
      for (int i = 0; i < payload; i++) b.put((byte) i);
      add(b);
      return this;
    }

    Builder unwinding(long dataSize, long hdrSize, long mapped) {
      int total = 40 + (int) dataSize;
      ByteBuffer b = buf(total);
      b.putInt(JitDump.CODE_UNWINDING_INFO).putInt(total).putLong(6).putLong(dataSize).putLong(hdrSize).putLong(mapped);
      for (int i = 0; i < dataSize; i++) b.put((byte) 0);
      add(b);
      return this;
    }

    Builder move(long oldAddr, long newAddr, long size, long index) {
      ByteBuffer b = buf(64);
      b.putInt(JitDump.CODE_MOVE).putInt(64).putLong(7).putInt(4242).putInt(8).putLong(newAddr).putLong(oldAddr)
          .putLong(newAddr).putLong(size).putLong(index);
      add(b);
      return this;
    }

    byte[] bytes() {
      return out.toByteArray();
    }
  }

  static byte[] sample(ByteOrder order) {
    return new Builder(order)
        .debugInfo(10, 0x1000, 0x1000L, 5, "a/A.java", 0x1010L, 6, "a/B.java", 0x1020L, 7, "a/A.java")
        .codeLoad(10, 0x1000, 0x40, 1, "a.A.f(int)")
        .raw(827346259, 37)  // samply's DEBUG_INFO2: skipped by size
        .unwinding(24, 8, 24)
        .codeLoad(11, 0x2000, 0x10, 2, "stub")
        .move(0x2000, 0x3000, 0x10, 2)
        .raw(99, 0)
        .raw(JitDump.CODE_CLOSE, 0)
        .bytes();
  }

  @Test
  void parsesEveryRecordKind() {
    JitDump d = JitDump.parse(Path.of("sample"), sample(ByteOrder.LITTLE_ENDIAN));
    assertEquals(ByteOrder.LITTLE_ENDIAN, d.order);
    assertEquals(1, d.version);
    assertEquals(40, d.headerTotalSize);
    assertEquals(4242, d.pid);
    assertEquals(62, d.elfMach);
    assertEquals(8, d.records.size());
    assertEquals(0, d.trailingBytes);
    JitDump.CodeLoad f = (JitDump.CodeLoad) d.records.get(1);
    assertEquals("a.A.f(int)", f.name);
    assertEquals(0x1000, f.codeAddr);
    assertEquals(0x40, f.codeSize);
    assertEquals(0x40, f.codeBytes);
    assertEquals(1, f.codeIndex);
    assertEquals(7, f.tid);
    assertSame(d.records.get(0), f.debugInfo, "DEBUG_INFO just before the load is attached to it");
    assertEquals(827346259, d.records.get(2).id);
    JitDump.UnwindingInfo u = (JitDump.UnwindingInfo) d.records.get(3);
    assertEquals(24, u.unwindDataSize);
    assertEquals(8, u.ehFrameHdrSize);
    JitDump.CodeLoad stub = (JitDump.CodeLoad) d.records.get(4);
    assertNull(stub.debugInfo, "a load not preceded by DEBUG_INFO has none");
    JitDump.Move m = (JitDump.Move) d.records.get(5);
    assertEquals(0x2000, m.oldCodeAddr);
    assertEquals(0x3000, m.newCodeAddr);
    assertEquals(2, m.codeIndex);
    assertEquals(99, d.records.get(6).id);
    assertEquals(JitDump.CODE_CLOSE, d.records.get(7).id);
  }

  @Test
  void debugInfoAppliesUpToTheNextEntry() {
    JitDump d = JitDump.parse(Path.of("sample"), sample(ByteOrder.LITTLE_ENDIAN));
    JitDump.DebugInfo di = ((JitDump.CodeLoad) d.records.get(1)).debugInfo;
    assertNull(di.lookup(0xfff));
    assertEquals(5, di.lookup(0x1000).line);
    assertEquals(5, di.lookup(0x100f).line);
    assertEquals(6, di.lookup(0x1010).line);
    assertEquals("a/B.java", di.lookup(0x101f).file);
    assertEquals(7, di.lookup(0x103f).line);
  }

  @Test
  void readsBigEndianDumps() {
    JitDump d = JitDump.parse(Path.of("be"), sample(ByteOrder.BIG_ENDIAN));
    assertEquals(ByteOrder.BIG_ENDIAN, d.order);
    assertEquals("a.A.f(int)", ((JitDump.CodeLoad) d.records.get(1)).name);
    assertEquals(6, ((JitDump.CodeLoad) d.records.get(1)).debugInfo.lookup(0x1011).line);
  }

  @Test
  void truncatedLastRecordIsReportedNotParsed() {
    byte[] full = sample(ByteOrder.LITTLE_ENDIAN);
    JitDump d = JitDump.parse(Path.of("cut"), Arrays.copyOf(full, full.length - 20));
    assertTrue(d.trailingBytes > 0);
    assertEquals(6, d.records.size());
  }

  @Test
  void rejectsGarbage() {
    byte[] bad = sample(ByteOrder.LITTLE_ENDIAN);
    bad[0] = 'X';
    assertThrows(IllegalArgumentException.class, () -> JitDump.parse(Path.of("bad"), bad));
    byte[] tooSmall = sample(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer.wrap(tooSmall).order(ByteOrder.LITTLE_ENDIAN).putInt(44, 8);  // first record total_size < 16
    assertThrows(IllegalArgumentException.class, () -> JitDump.parse(Path.of("small"), tooSmall));
  }

  @Test
  void jsonReader() {
    Object o = Json.parse("{\"a\":{\"b\":12,\"c\":[1,2.5,\"x\\\"y\"],\"d\":true,\"e\":null},\"f\":\"\\u0041\"}\n");
    assertEquals(12, Json.number(o, "a.b"));
    assertEquals("A", ((java.util.Map<?, ?>) o).get("f"));
    assertThrows(AssertionError.class, () -> Json.number(o, "a.z"));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\":1,}"));
  }
}
