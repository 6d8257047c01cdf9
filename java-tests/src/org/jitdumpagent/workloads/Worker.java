package org.jitdumpagent.workloads;

/** Run from many threads at once. */
public final class Worker {
  private Worker() {}

  public static long churn(int id, int n) {
    long acc = id;
    for (int i = 0; i < n; i++) {
      StringBuilder sb = new StringBuilder();
      sb.append(id).append(':').append(i);
      acc += sb.length() * 31L + step(acc);
    }
    return acc;
  }

  static long step(long v) {
    return (v >>> 5) ^ (v * 0x9E3779B97F4A7C15L);
  }

  /** Standalone: a short single-threaded run. */
  public static void main(String[] args) {
    System.out.println(churn(1, 20_000));
  }
}
