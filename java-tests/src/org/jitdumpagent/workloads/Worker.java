package org.jitdumpagent.workloads;

import java.nio.file.Files;
import java.nio.file.Path;

/** Run from many threads at once by Mixed; standalone, a short single-threaded run. */
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

  /**
   * Worker                  prints one number and returns from main
   * Worker exit|halt        ... then System.exit(0) / Runtime.halt(0)
   * Worker wait FILE        warms up, prints "ready", waits (at most 20 s) until FILE exists,
   *                         works again, prints one number and returns
   * Worker sleep            warms up, prints "ready", sleeps 20 s (the test kills it first)
   */
  public static void main(String[] args) throws Exception {
    String mode = args.length > 0 ? args[0] : "";
    long result = churn(1, 20_000);
    if (mode.equals("wait") || mode.equals("sleep")) {
      result += HotLoop.spin(2_000_000);
      Thread.sleep(200);  // let the compiles be posted
      System.out.println("ready");
      System.out.flush();
      if (mode.equals("sleep")) {
        Thread.sleep(20_000);
        System.out.println("not killed");
        return;
      }
      Path file = Path.of(args[1]);
      for (int i = 0; i < 400 && !Files.exists(file); i++) Thread.sleep(50);
      result += churn(2, 20_000);
      Thread.sleep(200);
    }
    System.out.println(result);
    if (mode.equals("exit")) System.exit(0);
    if (mode.equals("halt")) Runtime.getRuntime().halt(0);
  }
}
