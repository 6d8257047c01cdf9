import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

// A steady workload for the integration tests: warms up a few methods, prints "ready", then
// keeps them hot until the stop file exists or the time limit passes.
//   java Workload MILLIS [STOP_FILE]
public class Workload {
  static int mix(int x) { return (x * 0x9E3779B1) ^ (x >>> 15); }

  static long sumMixed(int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += mix(i);
    return s;
  }

  static int mapWork(Map<Integer, Integer> map, int n) {
    int hits = 0;
    for (int i = 0; i < n; i++) {
      map.merge(i & 1023, 1, Integer::sum);
      if (map.get(i & 511) != null) hits++;
    }
    return hits;
  }

  static String stringWork(int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) sb.append(i % 10);
    return sb.toString();
  }

  public static void main(String[] args) throws Exception {
    final long limit = System.currentTimeMillis() + Long.parseLong(args[0]);
    final Path stop = args.length > 1 ? Path.of(args[1]) : null;
    long sink = 0;
    Map<Integer, Integer> map = new HashMap<>();
    long warmEnd = System.currentTimeMillis() + Math.min(700, Long.parseLong(args[0]) / 2);
    while (System.currentTimeMillis() < warmEnd) {
      sink += sumMixed(5000) + mapWork(map, 2000) + stringWork(200).length();
    }
    System.out.println("ready " + ProcessHandle.current().pid());
    System.out.flush();
    int round = 0;
    while (System.currentTimeMillis() < limit) {
      sink += sumMixed(5000) + mapWork(map, 2000) + stringWork(200).length();
      if ((++round & 15) == 0 && stop != null && Files.exists(stop)) break;
    }
    System.out.println("done " + (sink & 1));
  }
}
