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
    private boolean withAgent = true;

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

    /** Start the JVM without -agentpath (for late attach); options still name dir= and stats=. */
    public Spec noAgentPath() {
      withAgent = false;
      return this;
    }

    /** The option string the agent gets. */
    public String agentOptionString() {
      Path dir = Env.work().resolve(name);
      return standardOptions
          ? "dir=" + dir.resolve("out") + ",stats=" + dir.resolve("stats.json")
              + (agentOptions.isEmpty() ? "" : "," + agentOptions)
          : agentOptions;
    }

    public Spec timeout(long seconds) {
      timeoutSeconds = seconds;
      return this;
    }

    public AgentRun run() {
      return start().finish();
    }

    /** Starts the JVM and returns at once. */
    public Running start() {
      return AgentRun.launch(this);
    }
  }

  public static Spec spec(String name) {
    return new Spec(name);
  }

  /** A child JVM that is still running. */
  public static final class Running {
    final Spec spec;
    final Path dir;
    final List<String> cmd;
    final Process process;
    final long start;

    Running(Spec spec, Path dir, List<String> cmd, Process process, long start) {
      this.spec = spec;
      this.dir = dir;
      this.cmd = cmd;
      this.process = process;
      this.start = start;
    }

    public long pid() {
      return process.pid();
    }

    public Path dir() {
      return dir;
    }

    /** Waits (up to the timeout) until the child's stdout has a line equal to {@code line}. */
    public void awaitLine(String line) throws IOException, InterruptedException {
      long deadline = System.nanoTime() + spec.timeoutSeconds * 1_000_000_000L;
      while (System.nanoTime() < deadline) {
        if (Files.readAllLines(dir.resolve("stdout.txt")).contains(line)) return;
        if (!process.isAlive()) break;
        Thread.sleep(20);
      }
      process.destroyForcibly();
      throw new AssertionError("child JVM '" + spec.name + "' never printed '" + line + "'\nstdout:\n"
                               + Files.readString(dir.resolve("stdout.txt")) + "\nstderr:\n"
                               + Files.readString(dir.resolve("stderr.txt")));
    }

    /** Sends SIGTERM. */
    public void terminate() {
      process.destroy();
    }

    /** Waits for the JVM to exit (killing it after the timeout, which fails the test). */
    public AgentRun finish() {
      try {
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        if (!process.waitFor(spec.timeoutSeconds, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(10, TimeUnit.SECONDS);
          throw new AssertionError("child JVM '" + spec.name + "' did not finish within " + spec.timeoutSeconds
                                   + " s: " + String.join(" ", cmd) + "\nstderr:\n" + Files.readString(err));
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        AgentRun r = new AgentRun(spec.name, dir, cmd, process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
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
  }

  private static Running launch(Spec spec) {
    Path dir = Env.work().resolve(spec.name);
    try {
      deleteTree(dir);
      Files.createDirectories(dir);
      String opts = spec.agentOptionString();
      List<String> cmd = new ArrayList<>();
      cmd.add(Env.java().toString());
      if (spec.withAgent) cmd.add("-agentpath:" + Env.agent() + (opts.isEmpty() ? "" : "=" + opts));
      cmd.add("-Xmx256m");
      cmd.addAll(spec.jvmArgs);
      cmd.add("-cp");
      cmd.add(Env.classes().toString());
      cmd.add(spec.mainClass);
      cmd.addAll(spec.args);
      ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
          .redirectOutput(dir.resolve("stdout.txt").toFile()).redirectError(dir.resolve("stderr.txt").toFile());
      pb.environment().remove("JITDUMPAGENT_OPTIONS");
      return new Running(spec, dir, cmd, pb.start(), System.nanoTime());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
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
