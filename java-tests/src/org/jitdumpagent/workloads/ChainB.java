package org.jitdumpagent.workloads;

public final class ChainB {
  private ChainB() {}

  public static int b(int x) {
    return ChainC.c(x) + Leaf.mix(x >>> 1); // @line:b-body
  }
}
