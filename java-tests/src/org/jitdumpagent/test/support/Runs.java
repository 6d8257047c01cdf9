package org.jitdumpagent.test.support;

/**
 * Child JVM runs shared by several test classes: each runs once per suite (per JDK), lazily.
 * A failed launch is remembered and rethrown, so every dependent test fails with the same cause.
 */
public final class Runs {
  private Runs() {}

  public static final String PKG = "org.jitdumpagent.workloads.";

  /** Keeps the methods the tests name out of their callers, so each gets its own code load. */
  public static final String[] COMPILE_COMMANDS = {
    "-XX:CompileCommand=quiet",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.HotLoop::spin",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.ChainA::a",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Leaf::mix",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Names::arrays",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Names$Point::<init>",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Mixed::mayThrow",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Mixed::lambda$*",
    "-XX:CompileCommand=dontinline,org.jitdumpagent.workloads.Unicode::*",
  };

  private static final class Lazy {
    private final java.util.function.Supplier<AgentRun> launch;
    private AgentRun run;
    private RuntimeException launchFailure;
    private Error launchError;

    Lazy(java.util.function.Supplier<AgentRun> launch) {
      this.launch = launch;
    }

    synchronized AgentRun get() {
      if (run == null && launchFailure == null && launchError == null) {
        try {
          run = launch.get();
        } catch (RuntimeException e) {
          launchFailure = e;
        } catch (Error e) {
          launchError = e;
        }
      }
      if (launchFailure != null) throw launchFailure;
      if (launchError != null) throw launchError;
      return run;
    }
  }

  private static final Lazy MIXED = new Lazy(() -> AgentRun.spec("mixed-java-names")
      .jvm(COMPILE_COMMANDS).main(PKG + "Mixed").run().expectExit(0));

  private static final Lazy MIXED_JVM_EXIT = new Lazy(() -> AgentRun.spec("mixed-jvm-names-system-exit")
      .options("names=jvm").jvm(COMPILE_COMMANDS).main(PKG + "Mixed", "exit").run().expectExit(0));

  private static final Lazy MIXED_SIMPLE = new Lazy(() -> AgentRun.spec("mixed-simple-names")
      .options("names=simple").jvm(COMPILE_COMMANDS).main(PKG + "Mixed").run().expectExit(0));

  /** Mixed with default options (names=java, lines=on), returning from main. */
  public static AgentRun mixed() {
    return MIXED.get();
  }

  /** Mixed with names=jvm, ending in System.exit(0). */
  public static AgentRun mixedJvmNamesSystemExit() {
    return MIXED_JVM_EXIT.get();
  }

  /** Mixed with names=simple. */
  public static AgentRun mixedSimpleNames() {
    return MIXED_SIMPLE.get();
  }
}
