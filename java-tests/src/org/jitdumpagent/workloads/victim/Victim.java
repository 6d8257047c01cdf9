package org.jitdumpagent.workloads.victim;

import java.util.function.IntUnaryOperator;

/** Loaded only through Unload's throwaway class loader; compiled, then unloaded. */
public final class Victim implements IntUnaryOperator {
  @Override
  public int applyAsInt(int x) {
    int acc = x;
    for (int i = 0; i < 50; i++) acc = acc * 17 + i;
    return acc;
  }
}
