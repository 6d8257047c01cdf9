package report;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The report tests' workload with known inlining: callee() is called from two callers, and only
 * inliningCaller() inlines it. HotSpot would inline a method this small everywhere, so the tests
 * start the JVM with a compiler directive that forbids inlining callee() into otherCaller()
 * (two-callers.directives). Both loops are hot, so both shapes are sampled. The tests find the
 * lines by their markers, so keep each marker on the line it describes.
 *
 *   java -XX:+UnlockDiagnosticVMOptions -XX:CompilerDirectivesFile=two-callers.directives
 *        -cp classes report.TwoCallers [cpu-seconds]
 *
 * It runs for that many seconds of its own CPU time, giving up after ten times that in wall time.
 */
public final class TwoCallers {
  private static volatile long sink;

  static long callee(long acc, int i) {
    return (acc * 40503L + i) / 9 + (acc * 17 + i) % 32749 + acc / 11 / 13 + 1; // MARK: callee
  }

  static long inliningCaller(long seed, int n) {
    long acc = seed | 1;
    for (int i = 0; i < n; i++) {
      acc = callee(acc, i); // MARK: inlining call
    }
    return acc;
  }

  static long otherCaller(long seed, int n) {
    long acc = seed | 3;
    for (int i = 0; i < n; i++) {
      acc = callee(acc, i); // MARK: other call
    }
    return acc;
  }

  public static void main(String[] args) {
    double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4;
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    long cpuEnd = cpu.getCurrentThreadCpuTime() + (long) (seconds * 1e9);
    long wallEnd = System.nanoTime() + (long) (seconds * 10e9);
    long s = 0;
    long rounds = 0;
    do {
      s += inliningCaller(rounds, 100_000);
      s += otherCaller(rounds, 100_000);
      rounds++;
    } while (cpu.getCurrentThreadCpuTime() < cpuEnd && System.nanoTime() < wallEnd);
    sink = s;
    System.out.println("TwoCallers: " + rounds + " rounds");
  }
}
