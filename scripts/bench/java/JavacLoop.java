import java.nio.file.Files;
import java.nio.file.Path;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * javac inside a JVM that was already running, for scripts/bench/after-visit: prints "ready",
 * waits for GATE to exist (the benchmark visits the JVM with the agent meanwhile, or not), then
 * runs javac with JAVAC_ARGS ROUNDS times, with the JDK's compiler in this JVM (javax.tools), and
 * prints "done". The JIT compiles javac's code while it runs, so the HotSpot threads that post
 * compile events do their work in the measured phase.
 * Usage: JavacLoop GATE ROUNDS JAVAC_ARGS...
 */
public final class JavacLoop {
  public static void main(String[] args) throws Exception {
    final Path gate = Path.of(args[0]);
    final int rounds = Integer.parseInt(args[1]);
    final String[] javacArgs = java.util.Arrays.copyOfRange(args, 2, args.length);
    final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    System.out.println("ready");
    System.out.flush();
    while (!Files.exists(gate)) Thread.sleep(20);
    for (int i = 0; i < rounds; i++) {
      final int rc = javac.run(null, null, null, javacArgs);
      if (rc != 0) throw new IllegalStateException("javac exit " + rc);
    }
    System.out.println("done");
  }
}
