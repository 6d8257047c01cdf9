/**
 * Class churn for a fixed time at a fixed rate, for scripts/bench/churn-soak and the lifecycle
 * tests: every class is a fresh copy of ScaleGen's Template defined by its own throwaway loader,
 * called until HotSpot compiles its methods, then dropped, so later GCs unload the class and its
 * code. Each copy has new jmethodIDs: a steady stream of CompiledMethodLoad and
 * CompiledMethodUnload events, and of the per-method memory HotSpot keeps after a class unloads.
 * The rate is held (not "as fast as possible"), so JVMs compared side by side do the same work
 * whatever an agent costs them; a line every 10 s says how far it got.
 * Usage: Churn SECONDS [CLASSES_PER_SECOND=750] [CALLS_PER_CLASS=300] [GC_EVERY=5000]
 */
public final class Churn {
  public static void main(String[] args) throws Exception {
    final double seconds = Double.parseDouble(args[0]);
    final int rate = args.length > 1 ? Integer.parseInt(args[1]) : 750;
    final int calls = args.length > 2 ? Integer.parseInt(args[2]) : 300;
    final int gcEvery = args.length > 3 ? Integer.parseInt(args[3]) : 5000;
    final byte[] bytes;
    try (java.io.InputStream in = ScaleGen.class.getResourceAsStream("ScaleGen$Template.class")) {
      bytes = in.readAllBytes();
    }
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
        final Class<?> c = new ScaleGen.OneShotLoader(bytes).loadClass(ScaleGen.Template.class.getName());
        final java.util.function.IntUnaryOperator op =
            (java.util.function.IntUnaryOperator) c.getDeclaredConstructor().newInstance();
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
