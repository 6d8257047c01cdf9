package org.jitdumpagent.workloads;

/**
 * Deoptimization, twice over:
 * - class hierarchy change: total() is compiled while Square is the only Shape, so C2 binds
 *   s.area() to Square by CHA; loading Circle invalidates that dependency.
 * - uncommon trap: branchy() is compiled having never seen a negative argument; one arrives.
 * Both methods are then run again until they are recompiled.
 */
public final class Deopt {
  private Deopt() {}

  public abstract static class Shape {
    public abstract int area();
  }

  public static final class Square extends Shape {
    final int s;

    public Square(int s) {
      this.s = s;
    }

    @Override
    public int area() {
      return s * s;
    }
  }

  public static int total(Shape[] shapes) {
    int t = 0;
    for (Shape s : shapes) t += s.area();
    return t;
  }

  public static int branchy(int x) {
    if (x < 0) return slow(x);
    return x + 1;
  }

  static int slow(int x) {
    return -x * 2;
  }

  public static void main(String[] args) throws Exception {
    Shape[] squares = {new Square(1), new Square(2), new Square(3), new Square(4)};
    long sink = 0;
    for (int i = 0; i < 60_000; i++) {
      sink += total(squares);
      sink += branchy(i);
    }
    Thread.sleep(300);  // let C2 finish
    System.out.println("phase 1 done");
    // Class hierarchy change: a second Shape subclass appears.
    Shape circle = (Shape) Class.forName(Deopt.class.getName() + "$Circle").getDeclaredConstructor().newInstance();
    Shape[] mixed = {squares[0], circle, squares[1], circle};
    sink += total(mixed);
    // Uncommon trap: the branch never taken so far.
    sink += branchy(-5);
    for (int i = 0; i < 60_000; i++) {
      sink += total(mixed);
      sink += branchy(i - 30_000);
    }
    Thread.sleep(300);
    System.out.println("sink " + sink);
  }

  /** Loaded only by name, after phase 1. */
  public static final class Circle extends Shape {
    public Circle() {}

    @Override
    public int area() {
      return 3;
    }
  }
}
