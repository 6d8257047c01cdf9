import java.io.InputStream;
import java.util.function.IntUnaryOperator;

/**
 * Scaling workload for scripts/bench/run: defines many small classes, each through its own
 * throwaway class loader, calls them until HotSpot compiles their methods, then drops the
 * loader so later GCs unload the classes and their code. Every copy is a distinct class with
 * distinct jmethodIDs, so each compile is a new CompiledMethodLoad (about 4 per class with
 * -Xbatch -XX:TieredStopAtLevel=1) and each unloaded class a CompiledMethodUnload.
 * Usage: ScaleGen CLASSES [CALLS_PER_CLASS=300] [GC_EVERY=5000]
 */
public final class ScaleGen {
  /** The template: small methods that get compiled separately (called from the interpreter). */
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

    private static int pick(int x) {
      return (x & 1) == 0 ? mix(x) : fold(x, x >>> 3);
    }

    @Override
    public int applyAsInt(int x) {
      return pick(x) + mix(x + 1) - fold(x, 7);
    }
  }

  /** Defines exactly one class, Template, itself; everything else comes from the parent. */
  static final class OneShotLoader extends ClassLoader {
    private final byte[] bytes;

    OneShotLoader(byte[] bytes) {
      super(ScaleGen.class.getClassLoader());
      this.bytes = bytes;
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (name.equals(Template.class.getName())) {
        synchronized (getClassLoadingLock(name)) {
          Class<?> c = findLoadedClass(name);
          if (c == null) c = defineClass(name, bytes, 0, bytes.length);
          return c;
        }
      }
      return super.loadClass(name, resolve);
    }
  }

  public static void main(String[] args) throws Exception {
    final int classes = Integer.parseInt(args[0]);
    final int calls = args.length > 1 ? Integer.parseInt(args[1]) : 300;
    final int gcEvery = args.length > 2 ? Integer.parseInt(args[2]) : 5000;
    byte[] bytes;
    try (InputStream in = ScaleGen.class.getResourceAsStream("ScaleGen$Template.class")) {
      bytes = in.readAllBytes();
    }
    long sink = 0;
    final long t0 = System.nanoTime();
    for (int k = 0; k < classes; k++) {
      Class<?> c = new OneShotLoader(bytes).loadClass(Template.class.getName());
      IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
      for (int i = 0; i < calls; i++) sink += op.applyAsInt(i + k);
      if (gcEvery > 0 && (k + 1) % gcEvery == 0) System.gc();
    }
    final long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.println("scalegen classes=" + classes + " ms=" + ms + " sink=" + sink);
  }
}
