import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.IntSupplier;

/**
 * Makes HotSpot generate method-handle intrinsic nmethods (invokeBasic, linkToStatic,
 * linkToVirtual, linkToSpecial, linkToInterface) for several basic-type signatures, then waits
 * so `jcmd <pid> Compiler.codelist` can list them next to the agent's dump (docs/agent.md,
 * "Method names"; scripts/tests/integration/test_names.py). Usage:
 * java MhIntrinsics [seconds to wait [stop file: stop waiting once it exists]].
 */
public class MhIntrinsics {
  interface Shape { double area(double scale); }

  static final class Square implements Shape {
    final double side;
    Square(double side) { this.side = side; }
    public double area(double scale) { return side * side * scale; }
  }

  static class Base {
    long mix(long a, int b) { return a * 31 + b; }
  }

  static final class Derived extends Base {
    @Override long mix(long a, int b) { return a ^ b; }
    long viaSuper(MethodHandle special, long a, int b) throws Throwable {
      return (long) special.invokeExact(this, a, b);
    }
  }

  static int add(int a, int b) { return a + b; }
  static long addLong(long a, long b) { return a + b; }
  static Object pick(Object a, Object b, int which) { return which == 0 ? a : b; }
  static double scale(double x, float f) { return x * f; }

  public static void main(String[] args) throws Throwable {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    MethodHandles.Lookup lookup = MethodHandles.lookup();
    MethodHandle add = lookup.findStatic(MhIntrinsics.class, "add",
        MethodType.methodType(int.class, int.class, int.class));                       // linkToStatic
    MethodHandle addLong = lookup.findStatic(MhIntrinsics.class, "addLong",
        MethodType.methodType(long.class, long.class, long.class));
    MethodHandle pick = lookup.findStatic(MhIntrinsics.class, "pick",
        MethodType.methodType(Object.class, Object.class, Object.class, int.class));
    MethodHandle scale = lookup.findStatic(MhIntrinsics.class, "scale",
        MethodType.methodType(double.class, double.class, float.class));
    MethodHandle area = lookup.findVirtual(Shape.class, "area",
        MethodType.methodType(double.class, double.class));                            // linkToInterface
    MethodHandle mix = lookup.findVirtual(Base.class, "mix",
        MethodType.methodType(long.class, long.class, int.class));                     // linkToVirtual
    MethodHandle special = MethodHandles.privateLookupIn(Derived.class, lookup).findSpecial(Base.class, "mix",
        MethodType.methodType(long.class, long.class, int.class), Derived.class);      // linkToSpecial
    MethodHandle ctor = lookup.findConstructor(Square.class,
        MethodType.methodType(void.class, double.class));                              // linkToSpecial (<init>)
    MethodHandle bound = MethodHandles.insertArguments(add, 0, 7);                     // invokeBasic chains
    MethodHandle filtered = MethodHandles.filterReturnValue(add,
        lookup.findStatic(Integer.class, "valueOf", MethodType.methodType(Integer.class, int.class)));
    IntSupplier lambda = () -> 42;

    Shape sq = new Square(2);
    Derived d = new Derived();
    long acc = 0;
    for (int i = 0; i < 400_000; i++) {
      acc += (int) add.invokeExact(i, 3);
      acc += (long) addLong.invokeExact((long) i, 5L);
      acc += (Integer) (Object) pick.invokeExact((Object) Integer.valueOf(i), (Object) "x", 0);
      acc += (long) (double) scale.invokeExact((double) i, 0.5f);
      acc += (long) (double) area.invokeExact(sq, 1.5);
      acc += (long) mix.invokeExact((Base) d, (long) i, 2);
      acc += d.viaSuper(special, i, 3);
      acc += (long) ((Square) (Shape) ctor.invoke((double) (i & 7))).side;
      acc += (int) bound.invokeExact(i);
      acc += (Integer) filtered.invokeExact(i, 1);
      acc += lambda.getAsInt();
    }
    System.out.println("pid " + ProcessHandle.current().pid() + " acc " + acc);
    System.out.flush();
    java.io.File stop = args.length > 1 ? new java.io.File(args[1]) : null;
    for (long waited = 0; waited < seconds * 1000L && (stop == null || !stop.exists()); waited += 20) {
      Thread.sleep(20);
    }
  }
}
