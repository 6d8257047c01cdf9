package org.jitdumpagent.workloads;

public final class ChainC {
  private ChainC() {}

  public static int c(int x) {
    return x ^ (x >>> 3); // @line:c-body
  }
}
