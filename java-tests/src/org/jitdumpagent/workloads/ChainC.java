package org.jitdumpagent.workloads;

public final class ChainC {
  private ChainC() {}

  public static int c(int x) {
    return Leaf.mix(x); // @line:c-body
  }
}
