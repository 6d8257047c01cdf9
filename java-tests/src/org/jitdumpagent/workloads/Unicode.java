package org.jitdumpagent.workloads;

/**
 * Non-ASCII method names. JVMTI hands names over in modified UTF-8; a jitdump name should be
 * plain UTF-8. For characters in the Basic Multilingual Plane the two agree; a supplementary
 * character (here U+1D49C, MATHEMATICAL SCRIPT CAPITAL A) is a 6-byte surrogate pair in
 * modified UTF-8 but 4 bytes in UTF-8.
 * Usage: Unicode          runs größe() hot (BMP only)
 *        Unicode supp     also runs 𝒜() hot
 */
public final class Unicode {
  private Unicode() {}

  public static int größe(int x) {
    return x * 3 + 1;
  }

  public static int 𝒜(int x) {
    return x ^ 5;
  }

  public static long run(int n, boolean supplementary) {
    long s = 0;
    for (int i = 0; i < n; i++) {
      s += größe(i);
      if (supplementary) s += 𝒜(i);
    }
    return s;
  }

  public static void main(String[] args) throws Exception {
    System.out.println(run(300_000, args.length > 0 && args[0].equals("supp")));
    Thread.sleep(100);
  }
}
