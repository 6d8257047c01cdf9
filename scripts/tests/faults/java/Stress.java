// Stress workload for the agent: many threads, class-unloading churn, deoptimization storms.
//
//   java [-Xcomp] Stress SECONDS THREADS [GATE]
//
// Each thread loops until SECONDS have passed:
//  - churn: defines the class Stress$Payload again in a fresh class loader, calls its methods
//    (new code to compile: with -Xcomp every method of every copy is compiled on first call),
//    then drops the loader, so GC unloads the classes and their compiled code (unload events);
//  - deopt storm: a call site that was monomorphic for a while suddenly sees other receiver
//    types (uncommon traps, "made not entrant"), and newly loaded subclasses break class
//    hierarchy assumptions of compiled code;
//  - plain arithmetic so the JIT keeps recompiling at higher tiers.
// With GATE, prints READY after the first second and waits for GATE to exist before going on
// (a test attaches the agent in between). Prints "DONE <copies> <checksum>" at the end.
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicLong;

public class Stress {
  // Loaded again and again, each time in its own loader: a new class with new methods.
  public static class Payload {
    public static long a(long x) { return x * 31 + 1; }
    public static long b(long x) { return (x ^ (x >>> 3)) + a(x); }
    public static long c(long x) { long s = 0; for (int i = 0; i < 8; i++) s += b(x + i); return s; }
    public static long d(long x) { return Long.rotateLeft(c(x), 7) - 3; }
    public static long e(long x) { return d(x) % 1000003 + Long.bitCount(x); }
    // Hot enough for the JIT without -Xcomp: a..e get compiled in every copy.
    public static long run(long x) { for (int i = 0; i < 2500; i++) x = e(x + i); return x; }
  }

  static final byte[] PAYLOAD = load();

  static byte[] load() {
    try (InputStream in = Stress.class.getResourceAsStream("Stress$Payload.class")) {
      return in.readAllBytes();
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  static final class OneShotLoader extends ClassLoader {
    OneShotLoader() { super(Stress.class.getClassLoader()); }
    Class<?> define() { return defineClass("Stress$Payload", PAYLOAD, 0, PAYLOAD.length); }
  }

  static long churn(long seed) throws Exception {
    Class<?> c = new OneShotLoader().define();
    long acc = seed;
    for (String m : new String[] {"a", "b", "c", "d", "e", "run"}) {
      acc += (long) c.getMethod(m, long.class).invoke(null, acc);
    }
    return acc;
  }

  // Deoptimization storm: Shape.area() call sites see one type for a while, then many.
  abstract static class Shape { abstract long area(long k); }
  static final class Sq extends Shape { long area(long k) { return k * k; } }
  static final class Rect extends Shape { long area(long k) { return k * (k + 1); } }
  static final class Tri extends Shape { long area(long k) { return k * (k + 1) / 2; } }
  static final class Hex extends Shape { long area(long k) { return 6 * k * k; } }

  static long sum(Shape[] shapes, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += shapes[i % shapes.length].area(i);
    return s;
  }

  static long storm(int round) {
    Shape[] mono = {new Sq()};
    Shape[] poly = {new Sq(), new Rect(), new Tri(), new Hex()};
    long s = sum(mono, 20000);          // compiled for one receiver
    s += sum(round % 2 == 0 ? poly : new Shape[] {new Rect()}, 2000);  // uncommon trap, deopt
    return s;
  }

  public static void main(String[] args) throws Exception {
    final long seconds = Long.parseLong(args[0]);
    final int threads = Integer.parseInt(args[1]);
    final String gate = args.length > 2 ? args[2] : null;
    final AtomicLong copies = new AtomicLong();
    final AtomicLong checksum = new AtomicLong();
    if (gate != null) {
      long until = System.nanoTime() + 1_000_000_000L;
      int r = 0;
      while (System.nanoTime() < until) checksum.addAndGet(churn(r++) + storm(r));
      System.out.println("READY");
      System.out.flush();
      java.nio.file.Path g = java.nio.file.Paths.get(gate);
      for (int i = 0; i < 12000 && !java.nio.file.Files.exists(g); i++) Thread.sleep(5);
    }
    final long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    Thread[] pool = new Thread[threads];
    for (int t = 0; t < threads; t++) {
      final int id = t;
      pool[t] = new Thread(() -> {
        try {
          long local = 0;
          for (int r = 0; System.nanoTime() < deadline; r++) {
            local += churn(r * 131 + id);
            copies.incrementAndGet();
            if (r % 8 == 0) local += storm(r + id);
            if (r % 64 == 0) System.gc();  // unload the loaders dropped so far
          }
          checksum.addAndGet(local);
        } catch (Exception e) {
          e.printStackTrace();
          System.exit(3);
        }
      }, "stress-" + t);
      pool[t].start();
    }
    for (Thread t : pool) t.join();
    System.gc();
    System.out.println("DONE " + copies.get() + " " + checksum.get());
  }
}
