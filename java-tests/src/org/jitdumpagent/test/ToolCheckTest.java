package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.Env;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** `jitdump check` (build/jitdump/tool/jitdump) accepts the agent's real dumps. */
class ToolCheckTest {
  static final class Result {
    final int exit;
    final String output;

    Result(int exit, String output) {
      this.exit = exit;
      this.output = output;
    }
  }

  static Result jitdump(String... args) throws Exception {
    Path tool = Env.tool();
    assertTrue(Files.isExecutable(tool), "the jitdump tool " + tool + " does not exist; build jitdump/tool first");
    java.util.List<String> cmd = new java.util.ArrayList<>();
    cmd.add(tool.toString());
    cmd.addAll(java.util.Arrays.asList(args));
    Path out = Files.createTempFile(Env.work(), "jitdump-tool", ".txt");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("jitdump " + String.join(" ", args) + " hung");
    }
    return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
  }

  static void assertChecks(AgentRun r) throws Exception {
    Result res = jitdump("check", r.dumpPath().toString());
    assertEquals(0, res.exit, "jitdump check " + r.dumpPath() + " failed:\n" + res.output);
  }

  @Test
  void checkAcceptsNormalExitDump() throws Exception {
    assertChecks(Runs.mixed());
  }

  @Test
  void checkAcceptsSystemExitDump() throws Exception {
    assertChecks(Runs.mixedJvmNamesSystemExit());
  }

  @Test
  void checkRejectsACorruptedDump() throws Exception {
    // Proves the check can fail: same dump with its magic destroyed.
    byte[] bytes = Files.readAllBytes(Runs.mixed().dumpPath());
    bytes[0] ^= 0x5a;
    Path bad = Env.work().resolve("corrupted-magic.dump");
    Files.write(bad, bytes);
    Result res = jitdump("check", bad.toString());
    assertNotEquals(0, res.exit, "jitdump check accepted a file with a bad magic:\n" + res.output);
  }
}
