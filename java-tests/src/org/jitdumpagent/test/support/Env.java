package org.jitdumpagent.test.support;

import java.nio.file.Files;
import java.nio.file.Path;

/** Paths handed to the suite by java-tests/run.sh as system properties. */
public final class Env {
  private Env() {}

  private static String prop(String name) {
    String v = System.getProperty(name);
    if (v == null || v.isEmpty()) {
      throw new IllegalStateException("system property " + name + " is not set; run the suite through java-tests/run.sh");
    }
    return v;
  }

  /** build/agent/libjitdumpagent.so */
  public static Path agent() {
    Path p = Path.of(prop("jitdump.agent"));
    if (!Files.isRegularFile(p)) throw new IllegalStateException("agent library not found: " + p);
    return p;
  }

  /** build/jitdump/tool/jitdump; may not exist yet (tests that need it fail). */
  public static Path tool() {
    return Path.of(prop("jitdump.tool"));
  }

  /** The JDK the child JVMs run on. */
  public static Path jdk() {
    return Path.of(prop("jitdump.jdk"));
  }

  public static Path java() {
    return jdk().resolve("bin/java");
  }

  /** Per-run scratch directory, emptied by run.sh. */
  public static Path work() {
    return Path.of(prop("jitdump.work"));
  }

  /** Compiled test and workload classes (the child JVMs' class path). */
  public static Path classes() {
    return Path.of(prop("jitdump.classes"));
  }

  /** java-tests/src, to read workload sources. */
  public static Path sources() {
    return Path.of(prop("jitdump.src"));
  }

  /** Feature version of the target JDK (17, 25, ...), from its release file. */
  public static int jdkFeature() {
    try {
      for (String line : Files.readAllLines(jdk().resolve("release"))) {
        if (line.startsWith("JAVA_VERSION=")) {
          String v = line.substring("JAVA_VERSION=".length()).replace("\"", "");
          return Integer.parseInt(v.split("[.+-]")[0]);
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot read " + jdk().resolve("release"), e);
    }
    throw new IllegalStateException("no JAVA_VERSION in " + jdk().resolve("release"));
  }
}
