package org.jitdumpagent.workloads;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;

/**
 * The main workload: hot loops, an inlining chain across classes, lambdas, exceptions, array
 * and constructor names, and several threads. Runs about a second and exits normally.
 * Usage: Mixed [exit]   ("exit" ends with System.exit(0) instead of returning from main)
 */
public final class Mixed {
  public static final int THREADS = 8;

  private Mixed() {}

  static int chain(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += ChainA.a(i);
    return s;
  }

  static int lambdas(int n) {
    IntUnaryOperator f = x -> x * 7 + 3; // @line:lambda-body
    int s = 0;
    for (int i = 0; i < n; i++) s = f.applyAsInt(s ^ i);
    return s;
  }

  static int mayThrow(int x) {
    if (x % 3 == 0) throw new IllegalStateException("multiple of three"); // @line:throw
    return x;
  }

  static int exceptions(int n) {
    int caught = 0;
    for (int i = 0; i < n; i++) {
      try {
        caught += mayThrow(i) & 1;
      } catch (IllegalStateException e) {
        caught++;
      }
    }
    return caught;
  }

  static long threads() throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    long[] results = new long[THREADS];
    for (int t = 0; t < THREADS; t++) {
      final int id = t;
      Thread th = new Thread(() -> results[id] = Worker.churn(id, 30_000), "worker-" + t);
      threads.add(th);
      th.start();
    }
    long sum = 0;
    for (int t = 0; t < THREADS; t++) {
      threads.get(t).join();
      sum += results[t];
    }
    System.out.println("threads ok " + THREADS);
    return sum;
  }

  public static void main(String[] args) throws Exception {
    long sink = 0;
    for (int round = 0; round < 40; round++) {
      sink += HotLoop.spin(50_000);
      sink += chain(10_000);
      sink += lambdas(10_000);
      sink += exceptions(2_000);
      sink += Names.run(5_000);
      sink += Unicode.run(5_000, false);
    }
    sink += threads();
    System.out.println("sink " + sink);
    Thread.sleep(200);  // let the ServiceThread post the last loads
    if (args.length > 0 && args[0].equals("exit")) System.exit(0);
  }
}
