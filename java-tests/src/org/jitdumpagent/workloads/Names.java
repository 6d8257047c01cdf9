package org.jitdumpagent.workloads;

/** Methods whose rendered names exercise arrays, nested classes and constructors. */
public final class Names {
  private Names() {}

  /** A nested class with a hot constructor. */
  public static final class Point {
    final int x;
    final int y;

    public Point(int x, int y) {
      this.x = x;
      this.y = y;
    }
  }

  public static int arrays(String[] words, int[][] grid, long salt) {
    return words.length + grid.length + (int) salt;
  }

  public static int run(int n) {
    String[] words = {"a", "b"};
    int[][] grid = new int[2][2];
    int sum = 0;
    for (int i = 0; i < n; i++) {
      Point p = new Point(i, sum);
      sum += arrays(words, grid, p.x) + p.y;
    }
    return sum;
  }
}
