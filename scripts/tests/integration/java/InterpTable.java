import java.io.InputStream;
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.nio.file.Files;
import java.nio.file.Path;

// The method table's workload (test_method_table.py), run interpreted (-Xint):
//   java InterpTable table            calls outer -> middle -> inner for a while
//   java InterpTable churn N          defines InterpTable$Victim N times through throwaway class
//                                     loaders, runs it, drops it and collects, so HotSpot unloads
//                                     it (and reuses its methods' memory)
//   java InterpTable wait STOP_FILE   calls outer -> middle -> inner until STOP_FILE exists (prints
//                                     "ready PID" first): a JVM to attach to
//   java -javaagent:JAR InterpTable redefine CLASSFILE
//                                     runs InterpTable$Victim, redefines it with CLASSFILE (the
//                                     test compiles another version of it), runs it again
//   java -javaagent:JAR InterpTable redefine-exit CLASSFILE
//                                     the same, but exits right after the redefinition (before
//                                     the agent's next periodic sweep)
// Prints "vm <java.vm.version>" first.
public class InterpTable {
  static long sink;
  static Instrumentation instrumentation;

  // Self-contained: the throwaway loaders define it alone.
  public static class Victim {
    static long total;

    public static void work(int n) {
      for (int i = 0; i < n; i++) total += i;
    }
  }

  public static void premain(String options, Instrumentation inst) {
    instrumentation = inst;
  }

  static void outer(int n) {
    for (int i = 0; i < n; i++) {
      sink += i * 31;
    }
    middle(n);
  }

  static void middle(int n) {
    for (int i = 0; i < n; i++) {
      sink ^= i;
    }
    inner(n);
  }

  static void inner(int n) {
    for (int i = 0; i < n; i++) {
      sink += i % 7;
      sink *= 3;
    }
  }

  static void churn(int rounds) throws Exception {
    final byte[] bytes;
    try (InputStream in = InterpTable.class.getResourceAsStream("InterpTable$Victim.class")) {
      bytes = in.readAllBytes();
    }
    for (int i = 0; i < rounds; i++) {
      ClassLoader loader = new ClassLoader(null) {
        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
          if (!name.equals("InterpTable$Victim")) throw new ClassNotFoundException(name);
          return defineClass(name, bytes, 0, bytes.length);
        }
      };
      loader.loadClass("InterpTable$Victim").getMethod("work", int.class).invoke(null, 100);
      loader = null;
      System.gc();
      Thread.sleep(200);
    }
  }

  static void runFor(long millis) {
    final long end = System.nanoTime() + millis * 1_000_000L;
    while (System.nanoTime() < end) Victim.work(1000);
  }

  public static void main(String[] args) throws Exception {
    System.out.println("vm " + System.getProperty("java.vm.version"));
    switch (args[0]) {
      case "table":
        for (int i = 0; i < 200; i++) outer(50);
        Victim.work(10);
        break;
      case "churn":
        churn(Integer.parseInt(args[1]));
        // Long enough for the agent's sweep (every 2 s) to see the last ones go.
        System.gc();
        Thread.sleep(4500);
        break;
      case "wait":
        System.out.println("ready " + ProcessHandle.current().pid());
        while (!Files.exists(Path.of(args[1]))) outer(50);
        break;
      case "redefine":
        // The old version runs long enough for the agent to have written it.
        runFor(1500);
        instrumentation.redefineClasses(new ClassDefinition(Victim.class, Files.readAllBytes(Path.of(args[1]))));
        runFor(3000);
        break;
      case "redefine-exit":
        runFor(1500);
        instrumentation.redefineClasses(new ClassDefinition(Victim.class, Files.readAllBytes(Path.of(args[1]))));
        runFor(50);
        break;
      default:
        throw new IllegalArgumentException(args[0]);
    }
    System.out.println("done " + sink);
  }
}
