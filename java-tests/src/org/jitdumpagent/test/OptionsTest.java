package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** A bad option is reported once, clearly; the JVM runs on unless `strict` is given. */
class OptionsTest {
  static List<String> linesMentioning(String text, String word) {
    return Arrays.stream(text.split("\n")).filter(l -> l.contains(word)).collect(Collectors.toList());
  }

  @Test
  void badValueIsReportedAndTheJvmRunsOn() throws Exception {
    AgentRun spec = AgentRun.spec("bad-option").options("names=bogus").main(Runs.PKG + "Worker").run();
    spec.expectExit(0);
    assertFalse(spec.stdout.isBlank(), "the workload did not run\n" + spec.describe());
    List<String> lines = linesMentioning(spec.stderr, "bogus");
    assertEquals(1, lines.size(), "expected one message naming the bad value\n" + spec.describe());
    String msg = lines.get(0);
    assertTrue(msg.contains("names"), "message does not name the option: " + msg);
    assertTrue(msg.contains("java") && msg.contains("jvm") && msg.contains("simple"),
               "message does not list the accepted values: " + msg);
    // The agent disabled itself: no dump and no stats.
    assertFalse(Files.exists(spec.dir.resolve("out")) && Files.list(spec.dir.resolve("out")).findAny().isPresent(),
                "a disabled agent still wrote output\n" + spec.describe());
  }

  @Test
  void unknownOptionIsReportedAndTheJvmRunsOn() {
    AgentRun r = AgentRun.spec("unknown-option").options("colour=blue").main(Runs.PKG + "Worker").run();
    r.expectExit(0);
    List<String> lines = linesMentioning(r.stderr, "colour");
    assertEquals(1, lines.size(), "expected one message naming the unknown option\n" + r.describe());
    assertTrue(lines.get(0).contains("names") && lines.get(0).contains("dir"), "message lists no known options: " + lines.get(0));
  }

  @Test
  void strictRefusesToStart() {
    AgentRun r = AgentRun.spec("bad-option-strict").options("names=bogus,strict").main(Runs.PKG + "Worker").run();
    assertNotEquals(0, r.exitCode, "strict with a bad option must stop the JVM\n" + r.describe());
    // Worker prints one number when it runs; HotSpot itself prints "Error occurred during initialization".
    assertTrue(Arrays.stream(r.stdout.split("\n")).noneMatch(l -> l.trim().matches("-?\\d+")),
               "the workload ran although the JVM should not have started\n" + r.describe());
    List<String> lines = linesMentioning(r.stderr, "bogus");
    assertEquals(1, lines.size(), "expected one message naming the bad value\n" + r.describe());
    assertTrue(lines.get(0).contains("names") && lines.get(0).contains("java, jvm, simple"), lines.get(0));
  }
}
