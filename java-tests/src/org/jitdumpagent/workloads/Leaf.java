package org.jitdumpagent.workloads;

/**
 * Kept out of line (the tests pass -XX:CompileCommand=dontinline for mix), so each call to it
 * from inlined code leaves a call site whose debug scope is the whole inline chain: the
 * callers' lines cannot be folded away by the compiler.
 */
public final class Leaf {
  private Leaf() {}

  public static int mix(int x) {
    return x ^ (x >>> 3);
  }
}
