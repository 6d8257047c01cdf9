import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.IntUnaryOperator;

// Compiles code of many classes defined by throwaway class loaders, drops them and collects
// them, so HotSpot unloads their compiled code; then waits.
//   java Unload LOADERS GO_FILE STOP_FILE
// Prints "loaded N" when every class has compiled code, waits for GO_FILE, collects, prints
// "ready" and waits for STOP_FILE.
public class Unload {
  public static final class Worker implements IntUnaryOperator {
    @Override
    public int applyAsInt(int x) {
      int s = x;
      for (int i = 0; i < 64; i++) s = s * 31 + (i ^ (s >>> 7));
      return s;
    }
  }

  static final class Throwaway extends ClassLoader {
    private final byte[] bytes;
    Throwaway(byte[] bytes) { super(null); this.bytes = bytes; }
    @Override
    protected Class<?> findClass(String name) throws ClassNotFoundException {
      if (!name.equals("Unload$Worker")) throw new ClassNotFoundException(name);
      return defineClass(name, bytes, 0, bytes.length);
    }
  }

  static int drive(IntUnaryOperator op, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += op.applyAsInt(i);
    return s;
  }

  public static void main(String[] args) throws Exception {
    final int loaders = Integer.parseInt(args[0]);
    final Path go = Path.of(args[1]);
    final Path stop = Path.of(args[2]);
    byte[] bytes;
    try (InputStream in = Unload.class.getResourceAsStream("Unload$Worker.class")) {
      bytes = in.readAllBytes();
    }
    long sink = 0;
    for (int i = 0; i < loaders; i++) {
      Class<?> c = new Throwaway(bytes).loadClass("Unload$Worker");
      IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
      sink += drive(op, 3000);
    }
    System.out.println("loaded " + loaders + " " + (sink & 1));
    System.out.flush();
    while (!Files.exists(go)) Thread.sleep(20);
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    // Let the service thread deliver the unload events.
    Thread.sleep(500);
    System.out.println("ready " + ProcessHandle.current().pid());
    System.out.flush();
    while (!Files.exists(stop)) Thread.sleep(20);
    System.out.println("done");
  }
}
