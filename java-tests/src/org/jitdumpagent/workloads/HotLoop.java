package org.jitdumpagent.workloads;

/** A pure arithmetic hot loop: no calls, so every line in its code belongs to spin(). */
public final class HotLoop {
  private HotLoop() {}

  public static int spin(int n) {
    int acc = 1; // @line:spin-first
    for (int i = 0; i < n; i++) {
      acc = acc * 31 + (i ^ (acc >>> 7)); // @line:spin-loop
    }
    return acc; // @line:spin-last
  }
}
