// Fault-test workload: deterministic arithmetic spread over many small methods and classes so
// the JIT compiles a steady stream of them. Prints one RESULT line whose value depends only on
// the arguments, so a test can tell the program's own output is intact.
//   java Work ROUNDS [END [GATE]]
//     END:  return (default) | exit (System.exit(0)) | halt (Runtime.halt(0)) | sleep (wait to be killed)
//     GATE: after phase 1 print READY, wait until the file GATE exists, then run phase 2: methods
//           that were never called before, so they are compiled (and written) after the gate.
import java.util.ArrayList;
import java.util.List;

public class Work {
  interface Step { long apply(long x); }

  static final class A implements Step { public long apply(long x) { return x * 31 + 7; } }
  static final class B implements Step { public long apply(long x) { return (x ^ (x >>> 7)) + 3; } }
  static final class C implements Step { public long apply(long x) { return Long.rotateLeft(x, 5) - 11; } }
  static final class D implements Step { public long apply(long x) { return x % 1000003 + (x << 2); } }
  static final class E implements Step { public long apply(long x) { return mix(x, 17); } }

  static long mix(long x, int k) {
    for (int i = 0; i < k; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    return x;
  }

  static long strings(int round) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 20; i++) sb.append(round * i).append(',');
    return sb.toString().hashCode();
  }

  static long collections(int round) {
    List<Integer> list = new ArrayList<>();
    for (int i = 0; i < 50; i++) list.add((round * 7 + i) % 97);
    list.sort(null);
    long s = 0;
    for (int v : list) s = s * 3 + v;
    return s;
  }

  public static long run(int rounds) {
    Step[] steps = {new A(), new B(), new C(), new D(), new E()};
    long acc = 1;
    for (int r = 0; r < rounds; r++) {
      for (Step s : steps) acc = s.apply(acc);
      acc += strings(r) + collections(r);
    }
    return acc;
  }

  // Phase 2: fresh code for the JIT.
  static final class P implements Step { public long apply(long x) { return x * 1103515245L + 12345; } }
  static final class Q implements Step { public long apply(long x) { return (x >>> 3) ^ (x * 2654435761L); } }
  static final class R implements Step { public long apply(long x) { return Long.reverse(x) + 99; } }

  static long phase2(int rounds) {
    Step[] steps = {new P(), new Q(), new R()};
    long acc = 7;
    for (int r = 0; r < rounds; r++) {
      for (Step s : steps) acc = s.apply(acc);
      acc += Long.toString(acc, 36).length() + new java.util.TreeMap<Long, Long>(java.util.Map.of(acc, (long) r)).size();
    }
    return acc;
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
    String end = args.length > 1 ? args[1] : "return";
    long result = run(rounds);
    System.out.println("RESULT " + rounds + " " + result);
    System.out.flush();
    if (args.length > 2) {
      System.out.println("READY");
      System.out.flush();
      java.nio.file.Path gate = java.nio.file.Paths.get(args[2]);
      for (int i = 0; i < 6000 && !java.nio.file.Files.exists(gate); i++) Thread.sleep(10);
      System.out.println("RESULT2 " + phase2(rounds));
      System.out.flush();
    }
    switch (end) {
      case "exit": System.exit(0); break;
      case "halt": Runtime.getRuntime().halt(0); break;
      case "sleep": System.out.println("SLEEPING"); System.out.flush(); Thread.sleep(600_000); break;
      default: break;
    }
  }
}
