package org.jitdumpagent.workloads;

public final class ChainB {
  private ChainB() {}

  public static int b(int x) {
    return ChainC.c(x) * 3; // @line:b-body
  }
}
