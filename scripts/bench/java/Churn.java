import java.io.InputStream;
import java.util.function.IntUnaryOperator;

/**
 * Class churn for a fixed time at a fixed rate, for scripts/bench/churn-soak and the session
 * tests (scripts/tests): every class is a fresh copy of Template defined by its own throwaway loader,
 * called until HotSpot compiles its methods, then dropped, so later GCs unload the class and its
 * code. Each copy has new jmethodIDs: a steady stream of CompiledMethodLoad and
 * CompiledMethodUnload events, and of the per-method memory HotSpot keeps after a class unloads.
 * The rate is held (not "as fast as possible"), so JVMs compared side by side do the same work
 * whatever an agent costs them; "churn ready" when it begins, a line every 10 s says how far it got.
 * Usage: Churn SECONDS [CLASSES_PER_SECOND=750] [CALLS_PER_CLASS=300] [GC_EVERY=5000]
 */
public final class Churn {
  /** Small methods that get compiled separately (called from the interpreter). */
  public static final class Template implements IntUnaryOperator {
    public Template() {}

    private static int mix(int x) {
      return (x * 0x9E3779B1) ^ (x >>> 15);
    }

    private static int fold(int x, int y) {
      int s = x;
      for (int i = 0; i < 3; i++) s = s * 31 + (y ^ i);
      return s;
    }

    @Override
    public int applyAsInt(int x) {
      return ((x & 1) == 0 ? mix(x) : fold(x, x >>> 3)) + mix(x + 1) - fold(x, 7);
    }
  }

  /** Defines exactly one class, Template, itself; everything else comes from the parent. */
  static final class OneShotLoader extends ClassLoader {
    private final byte[] bytes;

    OneShotLoader(byte[] bytes) {
      super(Churn.class.getClassLoader());
      this.bytes = bytes;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (name.equals(Template.class.getName())) {
        synchronized (getClassLoadingLock(name)) {
          Class<?> c = findLoadedClass(name);
          return c != null ? c : defineClass(name, bytes, 0, bytes.length);
        }
      }
      return super.loadClass(name, resolve);
    }
  }

  public static void main(String[] args) throws Exception {
    final double seconds = Double.parseDouble(args[0]);
    final int rate = args.length > 1 ? Integer.parseInt(args[1]) : 750;
    final int calls = args.length > 2 ? Integer.parseInt(args[2]) : 300;
    final int gcEvery = args.length > 3 ? Integer.parseInt(args[3]) : 5000;
    final byte[] bytes;
    try (InputStream in = Churn.class.getResourceAsStream("Churn$Template.class")) {
      bytes = in.readAllBytes();
    }
    System.out.println("churn ready");
    final long t0 = System.nanoTime();
    final long end = t0 + (long) (seconds * 1e9);
    long classes = 0;
    long sink = 0;
    long nextReport = t0 + 10_000_000_000L;
    for (long now = t0; now < end; now = System.nanoTime()) {
      // Classes due by now at the rate; at most a second's worth of catching up at once.
      final long due = (long) ((now - t0) / 1e9 * rate);
      if (classes >= due) {
        Thread.sleep(5);
        continue;
      }
      final long batch = Math.min(due - classes, rate);
      for (long k = 0; k < batch; k++, classes++) {
        final Class<?> c = new OneShotLoader(bytes).loadClass(Template.class.getName());
        final IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
        for (int i = 0; i < calls; i++) sink += op.applyAsInt(i + (int) classes);
        if (gcEvery > 0 && (classes + 1) % gcEvery == 0) System.gc();
      }
      if (now >= nextReport) {
        System.out.println("churn t=" + (now - t0) / 1_000_000_000L + " classes=" + classes);
        nextReport += 10_000_000_000L;
      }
    }
    System.out.println("churn done s=" + (System.nanoTime() - t0) / 1_000_000_000L + " classes=" + classes
        + " sink=" + sink);
  }
}
