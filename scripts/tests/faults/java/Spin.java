// A service that stays busy: hot methods called in a loop for SECONDS, so a profile taken while
// it runs has compiled Java in every sample. Prints READY once it has run a second.
//   java Spin SECONDS
public class Spin {
  static long leaf(long x) { return x * 6364136223846793005L + 1442695040888963407L; }

  static long middle(long x) {
    long s = 0;
    for (int i = 0; i < 64; i++) s += leaf(x + i) >>> 7;
    return s;
  }

  public static void main(String[] args) {
    final long end = System.nanoTime() + Long.parseLong(args[0]) * 1_000_000_000L;
    final long ready = System.nanoTime() + 1_000_000_000L;
    boolean said = false;
    long sum = 0;
    while (System.nanoTime() < end) {
      for (int i = 0; i < 10_000; i++) sum += middle(sum + i);
      if (!said && System.nanoTime() > ready) {
        System.out.println("READY");
        System.out.flush();
        said = true;
      }
    }
    System.out.println("RESULT " + (sum & 1));
  }
}
