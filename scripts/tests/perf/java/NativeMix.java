package symbols;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.Deflater;

/**
 * The native-symbols test's workload: time in the JVM's own code (allocation and garbage
 * collection, the JIT compilers), in libc (string and memory copies), in JNI libraries (zlib
 * through Deflater, file checks through libnio) and in the kernel (system calls), so that a
 * recording has many distinct native addresses to name.
 *
 *   java -cp classes symbols.NativeMix [seconds]
 */
public final class NativeMix {
  private static volatile long sink;

  public static void main(String[] args) throws Exception {
    final long seconds = args.length > 0 ? Long.parseLong(args[0]) : 5;
    final long end = System.nanoTime() + seconds * 1_000_000_000L;
    final List<String> keep = new ArrayList<>();
    final Random random = new Random(42);
    final byte[] input = new byte[64 * 1024];
    final byte[] output = new byte[128 * 1024];
    long round = 0;
    while (System.nanoTime() < end) {
      StringBuilder text = new StringBuilder();
      for (int i = 0; i < 300; i++) {
        text.append(random.nextInt()).append(',');
      }
      String made = text.toString();
      keep.add(made);
      if (keep.size() > 30_000) {
        keep.clear();
      }
      random.nextBytes(input);
      Deflater deflater = new Deflater();
      deflater.setInput(input, 0, 4096 + (int) (round & 1023));
      deflater.finish();
      sink += deflater.deflate(output);
      deflater.end();
      sink += Files.exists(Path.of("/proc/self/nonexistent-" + (round & 15))) ? 1 : 0;
      if ((round & 63) == 0) {
        Thread.sleep(0, 1);
      }
      sink += made.hashCode();
      round++;
    }
    System.out.println("rounds " + round + " " + (sink & 1));
  }
}
