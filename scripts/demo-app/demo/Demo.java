package demo;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;

/**
 * The bundled demo for scripts/demo and the perf test suite: a few seconds of hot, JIT-compiled
 * Java with small methods HotSpot inlines. Lines marked "HOT:" are where the time goes by
 * construction (a chain of dependent long divisions costs far more than the loop around it);
 * the tests find them by that marker, so keep each marker on the line it describes.
 *
 *   java -cp classes demo.Demo [seconds]
 *
 * It runs for that many seconds of its own CPU time (so a busy machine gives the profiler the
 * same number of cpu-clock samples, only later), giving up after ten times that in wall time.
 */
public final class Demo {
  private static volatile long sink;

  // Compiled on its own: the loop body's cost is on one line.
  static long divideChain(long seed, int n) {
    long acc = seed | 1;
    for (int i = 0; i < n; i++) {
      acc = (acc * 2654435761L + i) / 7 + (acc * 31 + i) % 65521 + acc / 3 / 5 + 1; // HOT: divideChain
    }
    return acc;
  }

  // Small enough to be inlined into inlinedCaller: its samples land in the caller's code.
  static long leaf(long acc, int i) {
    return (acc * 40503L + i) / 9 + (acc * 17 + i) % 32749 + acc / 11 / 13 + 1; // HOT: leaf
  }

  static long inlinedCaller(long seed, int n) {
    long acc = seed | 1;
    for (int i = 0; i < n; i++) {
      acc = leaf(acc, i);
    }
    return acc;
  }

  // isPrime is inlined into countPrimes, as in perf's own demo.
  static boolean isPrime(int n) {
    if (n < 2) return false;
    for (int d = 2; d * d <= n; d++) {
      if (n % d == 0) return false;
    }
    return true;
  }

  static int countPrimes(int from, int to) {
    int count = 0;
    for (int n = from; n < to; n++) {
      if (isPrime(n)) count++;
    }
    return count;
  }

  static int hashStrings(int n) {
    int h = 0x811c9dc5;
    for (int i = 0; i < n; i++) {
      String s = "item-" + i;
      for (int j = 0; j < s.length(); j++) {
        h = (h ^ s.charAt(j)) * 16777619;
      }
    }
    return h;
  }

  static long sortRandom(int n, long seed) {
    int[] a = new int[n];
    long x = seed;
    for (int i = 0; i < n; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
      a[i] = (int) (x >>> 33);
    }
    Arrays.sort(a);
    return a[n / 2];
  }

  public static void main(String[] args) {
    double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 5;
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
    long cpuEnd = cpu.getCurrentThreadCpuTime() + (long) (seconds * 1e9);
    long wallEnd = System.nanoTime() + (long) (seconds * 10e9);
    long rounds = 0;
    long s = 0;
    do {
      s += divideChain(rounds, 200_000);
      s += inlinedCaller(rounds, 200_000);
      s += countPrimes(1, 20_000);
      s += hashStrings(5_000);
      s += sortRandom(20_000, rounds);
      rounds++;
    } while (cpu.getCurrentThreadCpuTime() < cpuEnd && System.nanoTime() < wallEnd);
    sink = s;
    System.out.println("demo: " + rounds + " rounds in " + seconds + " s of CPU time");
  }
}
