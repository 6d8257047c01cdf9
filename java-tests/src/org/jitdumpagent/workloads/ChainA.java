package org.jitdumpagent.workloads;

/**
 * Head of an inlining chain across three classes: a() calls ChainB.b() calls ChainC.c(), each
 * one line; b() and c() call the out-of-line Leaf.mix(), so their lines survive inlining.
 */
public final class ChainA {
  private ChainA() {}

  public static int a(int x) {
    return ChainB.b(x) + 1; // @line:a-body
  }
}
