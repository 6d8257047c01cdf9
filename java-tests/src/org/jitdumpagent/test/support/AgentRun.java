package org.jitdumpagent.test.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** One child JVM run with the agent: its command, exit code, output and output directory. */
public final class AgentRun {
  public final String name;
  public final Path dir;
  public final List<String> command;
  public final int exitCode;
  public final String stdout;
  public final String stderr;
  public final long millis;

  private AgentRun(String name, Path dir, List<String> command, int exitCode, String stdout, String stderr, long millis) {
    this.name = name;
    this.dir = dir;
    this.command = command;
    this.exitCode = exitCode;
    this.stdout = stdout;
    this.stderr = stderr;
    this.millis = millis;
  }

  /** Builds the command line for one child JVM. */
  public static final class Spec {
    private final String name;
    private String agentOptions = "";
    private boolean standardOptions = true;
    private final List<String> jvmArgs = new ArrayList<>();
    private String mainClass;
    private final List<String> args = new ArrayList<>();
    private long timeoutSeconds = 60;

    Spec(String name) {
      this.name = name;
    }

    /** Extra agent options, appended after dir= and stats=. */
    public Spec options(String options) {
      this.agentOptions = options;
      return this;
    }

    /** Pass exactly {@code options} (no dir=, stats=): for option-parsing tests. */
    public Spec rawOptions(String options) {
      this.agentOptions = options;
      this.standardOptions = false;
      return this;
    }

    public Spec jvm(String... a) {
      jvmArgs.addAll(Arrays.asList(a));
      return this;
    }

    public Spec main(String mainClass, String... a) {
      this.mainClass = mainClass;
      args.addAll(Arrays.asList(a));
      return this;
    }

    public Spec timeout(long seconds) {
      timeoutSeconds = seconds;
      return this;
    }

    public AgentRun run() {
      return AgentRun.execute(this);
    }
  }

  public static Spec spec(String name) {
    return new Spec(name);
  }

  private static AgentRun execute(Spec spec) {
    Path dir = Env.work().resolve(spec.name);
    try {
      deleteTree(dir);
      Files.createDirectories(dir);
      String opts = spec.standardOptions
          ? "dir=" + dir.resolve("out") + ",stats=" + dir.resolve("stats.json")
              + (spec.agentOptions.isEmpty() ? "" : "," + spec.agentOptions)
          : spec.agentOptions;
      List<String> cmd = new ArrayList<>();
      cmd.add(Env.java().toString());
      cmd.add("-agentpath:" + Env.agent() + (opts.isEmpty() ? "" : "=" + opts));
      cmd.add("-Xmx256m");
      cmd.addAll(spec.jvmArgs);
      cmd.add("-cp");
      cmd.add(Env.classes().toString());
      cmd.add(spec.mainClass);
      cmd.addAll(spec.args);
      Path out = dir.resolve("stdout.txt");
      Path err = dir.resolve("stderr.txt");
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
          .redirectOutput(out.toFile()).redirectError(err.toFile());
      pb.environment().remove("JITDUMPAGENT_OPTIONS");
      long start = System.nanoTime();
      Process p = pb.start();
      if (!p.waitFor(spec.timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
        throw new AssertionError("child JVM '" + spec.name + "' did not finish within " + spec.timeoutSeconds
                                 + " s: " + String.join(" ", cmd) + "\nstderr:\n" + Files.readString(err));
      }
      long millis = (System.nanoTime() - start) / 1_000_000;
      AgentRun r = new AgentRun(spec.name, dir, cmd, p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                                Files.readString(err, StandardCharsets.UTF_8), millis);
      System.out.printf("[run %s: exit %d in %d ms]%n", spec.name, r.exitCode, millis);
      return r;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) return;
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).collect(Collectors.toList())) {
        Files.delete(p);
      }
    }
  }

  /** Text for assertion messages. */
  public String describe() {
    return "run '" + name + "' (exit " + exitCode + "): " + String.join(" ", command) + "\n--- stdout:\n"
        + tail(stdout) + "--- stderr:\n" + tail(stderr);
  }

  private static String tail(String s) {
    return s.length() > 4000 ? "...\n" + s.substring(s.length() - 4000) : s;
  }

  /** Fails unless the child JVM exited with {@code code}. */
  public AgentRun expectExit(int code) {
    if (exitCode != code) throw new AssertionError("expected exit " + code + "\n" + describe());
    return this;
  }

  /** The one jit-<pid>.dump the run wrote. */
  public Path dumpPath() {
    Path out = dir.resolve("out");
    try (Stream<Path> s = Files.exists(out) ? Files.list(out) : Stream.empty()) {
      List<Path> dumps = s.filter(p -> p.getFileName().toString().matches("jit-\\d+\\.dump")).collect(Collectors.toList());
      if (dumps.size() != 1) throw new AssertionError("expected one jit-<pid>.dump in " + out + ", found " + dumps + "\n" + describe());
      return dumps.get(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private JitDump dump;

  public synchronized JitDump dump() {
    if (dump == null) {
      try {
        dump = JitDump.read(dumpPath());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return dump;
  }

  private Object stats;

  public synchronized Object stats() {
    if (stats == null) {
      Path p = dir.resolve("stats.json");
      try {
        if (!Files.exists(p)) throw new AssertionError("no stats file " + p + "\n" + describe());
        stats = Json.parse(Files.readString(p));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return stats;
  }

  public long stat(String path) {
    return Json.number(stats(), path);
  }
}
