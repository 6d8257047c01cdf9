package org.jitdumpagent.workloads;

/**
 * For InlineRecordTest (samply's inline record, agent option inline=on): a() calls b() calls
 * c(), and c() holds the hot loop. The test keeps a() out of main() (dontinline), so a() is
 * compiled on its own with b() and c() inlined into it. Each body statement is on its own
 * marked line; keep every "@line:" marker on the line it names.
 */
public final class InlineTree {
  private InlineTree() {}

  private static volatile int sink;

  static int c(int x, int n) {
    int r = x; // @line:c-first
    for (int i = 0; i < n; i++) {
      r = r * 31 + (r >>> 7) + i; // @line:c-loop
    }
    return r;
  }

  static int b(int x) {
    return c(x, 16 + (x & 15)) + 1; // @line:b-call
  }

  static int a(int x) {
    return b(x) ^ x; // @line:a-call
  }

  public static void main(String[] args) {
    int acc = 0;
    for (int i = 0; i < 6_000_000; i++) {
      acc += a(i);
    }
    sink = acc;
  }
}
