package org.jitdumpagent.test.support;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * An independent reader for perf's jitdump format, written from
 * tools/perf/Documentation/jitdump-specification.txt (not from the agent's C++ code).
 *
 * <p>File header (40 bytes): magic "JiTD" (0x4A695444 in the producer's byte order), version,
 * total_size, elf_mach, pad1, pid, timestamp, flags. Then records, each with a 16-byte header:
 * id, total_size (header included), timestamp. Unknown ids are skipped by total_size.
 */
public final class JitDump {
  public static final int MAGIC = 0x4A695444;
  public static final int CODE_LOAD = 0;
  public static final int CODE_MOVE = 1;
  public static final int CODE_DEBUG_INFO = 2;
  public static final int CODE_CLOSE = 3;
  public static final int CODE_UNWINDING_INFO = 4;

  /** Any record; subclasses carry the decoded payload. */
  public static class Record {
    public final int id;
    public final int totalSize;
    public final long timestamp;
    public final long fileOffset;

    Record(int id, int totalSize, long timestamp, long fileOffset) {
      this.id = id;
      this.totalSize = totalSize;
      this.timestamp = timestamp;
      this.fileOffset = fileOffset;
    }
  }

  public static final class CodeLoad extends Record {
    public final int pid;
    public final int tid;
    public final long vma;
    public final long codeAddr;
    public final long codeSize;
    public final long codeIndex;
    public final String name;
    public final int codeBytes;  // bytes of native code stored after the name
    public final int codeOffset;  // file offset of those bytes
    /**
     * The DEBUG_INFO this load takes, as perf does: the last one since the previous load (records
     * of other types in between, such as samply's inline record, do not clear it), when its
     * code_addr matches; else null.
     */
    public DebugInfo debugInfo;

    CodeLoad(Record h, int pid, int tid, long vma, long codeAddr, long codeSize, long codeIndex, String name,
             int codeBytes, int codeOffset) {
      super(h.id, h.totalSize, h.timestamp, h.fileOffset);
      this.pid = pid;
      this.tid = tid;
      this.vma = vma;
      this.codeAddr = codeAddr;
      this.codeSize = codeSize;
      this.codeIndex = codeIndex;
      this.name = name;
      this.codeBytes = codeBytes;
      this.codeOffset = codeOffset;
    }

    public long end() {
      return codeAddr + codeSize;
    }

    public boolean contains(long addr) {
      return Long.compareUnsigned(addr, codeAddr) >= 0 && Long.compareUnsigned(addr, end()) < 0;
    }

    @Override
    public String toString() {
      return String.format("CODE_LOAD[%d] %s @0x%x+%d", codeIndex, name, codeAddr, codeSize);
    }
  }

  public static final class DebugEntry {
    public final long addr;
    public final int line;
    public final int discrim;
    public final String file;

    DebugEntry(long addr, int line, int discrim, String file) {
      this.addr = addr;
      this.line = line;
      this.discrim = discrim;
      this.file = file;
    }

    @Override
    public String toString() {
      return String.format("0x%x %s:%d", addr, file, line);
    }
  }

  public static final class DebugInfo extends Record {
    public final long codeAddr;
    public final List<DebugEntry> entries;

    DebugInfo(Record h, long codeAddr, List<DebugEntry> entries) {
      super(h.id, h.totalSize, h.timestamp, h.fileOffset);
      this.codeAddr = codeAddr;
      this.entries = entries;
    }

    /**
     * The entry covering {@code addr}: entries are sorted by address and each applies from its
     * address up to the next entry's. Null before the first entry.
     */
    public DebugEntry lookup(long addr) {
      DebugEntry found = null;
      for (DebugEntry e : entries) {
        if (Long.compareUnsigned(e.addr, addr) <= 0) found = e; else break;
      }
      return found;
    }
  }

  public static final class Move extends Record {
    public final int pid;
    public final int tid;
    public final long vma;
    public final long oldCodeAddr;
    public final long newCodeAddr;
    public final long codeSize;
    public final long codeIndex;

    Move(Record h, int pid, int tid, long vma, long oldCodeAddr, long newCodeAddr, long codeSize, long codeIndex) {
      super(h.id, h.totalSize, h.timestamp, h.fileOffset);
      this.pid = pid;
      this.tid = tid;
      this.vma = vma;
      this.oldCodeAddr = oldCodeAddr;
      this.newCodeAddr = newCodeAddr;
      this.codeSize = codeSize;
      this.codeIndex = codeIndex;
    }
  }

  public static final class UnwindingInfo extends Record {
    public final long unwindDataSize;
    public final long ehFrameHdrSize;
    public final long mappedSize;

    UnwindingInfo(Record h, long unwindDataSize, long ehFrameHdrSize, long mappedSize) {
      super(h.id, h.totalSize, h.timestamp, h.fileOffset);
      this.unwindDataSize = unwindDataSize;
      this.ehFrameHdrSize = ehFrameHdrSize;
      this.mappedSize = mappedSize;
    }
  }

  public final Path path;
  public final ByteOrder order;
  public final int version;
  public final int headerTotalSize;
  public final int elfMach;
  public final int pid;
  public final long timestamp;
  public final long flags;
  public final List<Record> records;
  private final byte[] bytes;
  /** Bytes at the end that do not form a whole record (a crash mid-write); 0 for a clean file. */
  public final long trailingBytes;

  private JitDump(Path path, ByteOrder order, int version, int headerTotalSize, int elfMach, int pid, long timestamp,
                  long flags, List<Record> records, long trailingBytes, byte[] bytes) {
    this.path = path;
    this.order = order;
    this.version = version;
    this.headerTotalSize = headerTotalSize;
    this.elfMach = elfMach;
    this.pid = pid;
    this.timestamp = timestamp;
    this.flags = flags;
    this.records = Collections.unmodifiableList(records);
    this.trailingBytes = trailingBytes;
    this.bytes = bytes;
  }

  /** The native code stored in a load record. */
  public byte[] code(CodeLoad load) {
    return java.util.Arrays.copyOfRange(bytes, load.codeOffset, load.codeOffset + load.codeBytes);
  }

  public static JitDump read(Path path) throws IOException {
    return parse(path, Files.readAllBytes(path));
  }

  public static JitDump parse(Path path, byte[] bytes) {
    if (bytes.length < 40) throw new IllegalArgumentException(path + ": " + bytes.length + " bytes, no jitdump header");
    ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    int magic = b.getInt(0);
    ByteOrder order;
    if (magic == MAGIC) {
      order = ByteOrder.LITTLE_ENDIAN;
    } else if (Integer.reverseBytes(magic) == MAGIC) {
      order = ByteOrder.BIG_ENDIAN;
      b.order(order);
    } else {
      throw new IllegalArgumentException(String.format("%s: bad magic 0x%08x", path, magic));
    }
    int version = b.getInt(4);
    int headerSize = b.getInt(8);
    int elfMach = b.getInt(12);
    int pid = b.getInt(20);
    long timestamp = b.getLong(24);
    long flags = b.getLong(32);
    if (headerSize < 40 || headerSize > bytes.length) {
      throw new IllegalArgumentException(path + ": header total_size " + headerSize);
    }
    List<Record> records = new ArrayList<>();
    int pos = headerSize;
    DebugInfo pendingDebug = null;  // stashed until the next CODE_LOAD, like perf
    while (bytes.length - pos >= 16) {
      int id = b.getInt(pos);
      int size = b.getInt(pos + 4);
      long ts = b.getLong(pos + 8);
      if (size < 16) throw new IllegalArgumentException(path + ": record at " + pos + " has total_size " + size);
      if (size > bytes.length - pos) break;  // truncated last record
      Record h = new Record(id, size, ts, pos);
      int p = pos + 16;
      int end = pos + size;
      Record r;
      switch (id) {
        case CODE_LOAD: {
          need(path, pos, size, 16 + 40 + 1);
          int rpid = b.getInt(p);
          int tid = b.getInt(p + 4);
          long vma = b.getLong(p + 8);
          long codeAddr = b.getLong(p + 16);
          long codeSize = b.getLong(p + 24);
          long codeIndex = b.getLong(p + 32);
          int nameStart = p + 40;
          int nul = indexOfNul(bytes, nameStart, end);
          if (nul < 0) throw new IllegalArgumentException(path + ": CODE_LOAD at " + pos + " has no NUL in its name");
          String name = new String(bytes, nameStart, nul - nameStart, StandardCharsets.UTF_8);
          CodeLoad load = new CodeLoad(h, rpid, tid, vma, codeAddr, codeSize, codeIndex, name, end - (nul + 1), nul + 1);
          if (pendingDebug != null && pendingDebug.codeAddr == codeAddr) load.debugInfo = pendingDebug;
          pendingDebug = null;
          r = load;
          break;
        }
        case CODE_DEBUG_INFO: {
          need(path, pos, size, 32);
          long codeAddr = b.getLong(p);
          long n = b.getLong(p + 8);
          if (n < 0 || n > size) throw new IllegalArgumentException(path + ": DEBUG_INFO at " + pos + " nr_entry " + n);
          List<DebugEntry> entries = new ArrayList<>((int) n);
          int q = p + 16;
          for (long i = 0; i < n; i++) {
            if (end - q < 17) throw new IllegalArgumentException(path + ": DEBUG_INFO at " + pos + " overruns");
            long addr = b.getLong(q);
            int line = b.getInt(q + 8);
            int discrim = b.getInt(q + 12);
            int nul = indexOfNul(bytes, q + 16, end);
            if (nul < 0) throw new IllegalArgumentException(path + ": DEBUG_INFO at " + pos + " file name unterminated");
            entries.add(new DebugEntry(addr, line, discrim, new String(bytes, q + 16, nul - q - 16, StandardCharsets.UTF_8)));
            q = nul + 1;
          }
          pendingDebug = new DebugInfo(h, codeAddr, Collections.unmodifiableList(entries));
          r = pendingDebug;
          break;
        }
        case CODE_MOVE:
          need(path, pos, size, 64);
          r = new Move(h, b.getInt(p), b.getInt(p + 4), b.getLong(p + 8), b.getLong(p + 16), b.getLong(p + 24),
                       b.getLong(p + 32), b.getLong(p + 40));
          break;
        case CODE_UNWINDING_INFO:
          need(path, pos, size, 40);
          r = new UnwindingInfo(h, b.getLong(p), b.getLong(p + 8), b.getLong(p + 16));
          break;
        default:
          r = h;  // CLOSE and ids we do not know (e.g. samply's 827346259): header only
          break;
      }
      records.add(r);
      pos = end;
    }
    return new JitDump(path, order, version, headerSize, elfMach, pid, timestamp, flags, records, bytes.length - pos, bytes);
  }

  private static void need(Path path, int pos, int size, int min) {
    if (size < min) throw new IllegalArgumentException(path + ": record at " + pos + " is " + size + " bytes, needs " + min);
  }

  private static int indexOfNul(byte[] bytes, int from, int to) {
    for (int i = from; i < to; i++) if (bytes[i] == 0) return i;
    return -1;
  }

  public List<CodeLoad> codeLoads() {
    List<CodeLoad> out = new ArrayList<>();
    for (Record r : records) if (r instanceof CodeLoad) out.add((CodeLoad) r);
    return out;
  }

  public List<CodeLoad> loadsNamed(String name) {
    List<CodeLoad> out = new ArrayList<>();
    for (CodeLoad l : codeLoads()) if (l.name.equals(name)) out.add(l);
    return out;
  }

  public long count(int id) {
    return records.stream().filter(r -> r.id == id).count();
  }

  /** A short description of the first few loads whose name contains {@code part}, for messages. */
  public String describe(String part) {
    StringBuilder sb = new StringBuilder();
    int n = 0;
    for (CodeLoad l : codeLoads()) {
      if (l.name.contains(part) && n++ < 20) sb.append("\n  ").append(l);
    }
    return n == 0 ? "(no load names contain '" + part + "')" : sb.toString();
  }

  /** Dumps the file as text: `java ... JitDump file.dump` for exploring. */
  public static void main(String[] args) throws IOException {
    JitDump d = read(Path.of(args[0]));
    System.out.printf("version %d header %d pid %d flags %d records %d trailing %d%n", d.version, d.headerTotalSize,
                      d.pid, d.flags, d.records.size(), d.trailingBytes);
    for (Record r : d.records) {
      if (r instanceof CodeLoad) {
        System.out.println(r);
      } else if (r instanceof DebugInfo) {
        DebugInfo di = (DebugInfo) r;
        System.out.printf("DEBUG_INFO @0x%x %d entries%n", di.codeAddr, di.entries.size());
        if (args.length > 1) for (DebugEntry e : di.entries) System.out.println("    " + e);
      } else {
        System.out.println("record id " + r.id + " size " + r.totalSize);
      }
    }
  }
}
