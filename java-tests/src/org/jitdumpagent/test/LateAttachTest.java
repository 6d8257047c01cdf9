package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.Env;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** `jcmd <pid> JVMTI.agent_load`: code compiled before the attach is replayed into the dump. */
class LateAttachTest {
  static AgentRun run;
  static String jcmdOutput;

  @BeforeAll
  static void attach() throws Exception {
    AgentRun.Spec spec = AgentRun.spec("late-attach").noAgentPath();
    Path go = Env.work().resolve("late-attach-go");
    Files.deleteIfExists(go);
    AgentRun.Running running = spec.main(Runs.PKG + "Worker", "wait", go.toString()).start();
    running.awaitLine("ready");
    Path out = running.dir().resolve("jcmd.txt");
    Process jcmd = new ProcessBuilder(Env.jdk().resolve("bin/jcmd").toString(), Long.toString(running.pid()),
                                      "JVMTI.agent_load", Env.agent().toString(),
                                      // jcmd re-splits its arguments and would read key=value as its own option
                                      "\"" + spec.agentOptionString() + "\"")
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    boolean done = jcmd.waitFor(60, TimeUnit.SECONDS);
    if (!done) jcmd.destroyForcibly();
    jcmdOutput = Files.readString(out, StandardCharsets.UTF_8);
    Files.writeString(go, "go");
    run = running.finish();
    assertTrue(done && jcmd.exitValue() == 0, "jcmd failed:\n" + jcmdOutput + "\n" + run.describe());
    run.expectExit(0);
  }

  @Test
  void dumpBelongsToTheAttachedJvm() {
    JitDump d = run.dump();
    assertEquals("jit-" + d.pid + ".dump", run.dumpPath().getFileName().toString());
    assertEquals(JitDump.CODE_CLOSE, d.records.get(d.records.size() - 1).id, "CLOSE last");
  }

  @Test
  void jitdumpCheckAccepts() throws Exception {
    ToolCheckTest.assertChecks(run);
  }

  @Test
  void codeCompiledBeforeTheAttachIsReplayed() {
    JitDump d = run.dump();
    assertTrue(run.stat("events.replayed") > 0, "no replayed events: " + run.stats());
    assertFalse(d.loadsNamed("Interpreter").isEmpty(), "the interpreter (generated at startup) is missing");
    assertFalse(d.loadsNamed("call_stub").isEmpty() && d.codeLoads().stream().noneMatch(l -> l.name.contains("call_stub")),
                "call_stub is missing");
    var spin = d.loadsNamed(Runs.PKG + "HotLoop.spin(int)");
    assertFalse(spin.isEmpty(), "spin(), compiled before the attach, is missing" + d.describe("workloads"));
    for (JitDump.CodeLoad l : spin) assertNotNull(l.debugInfo, "replayed load without lines: " + l);
  }

  @Test
  void statsAgreeWithTheDump() {
    JitDump d = run.dump();
    assertEquals(d.count(JitDump.CODE_LOAD), run.stat("written.code_loads"));
    long events = run.stat("events.compiled_method_load") + run.stat("events.dynamic_code_generated");
    long lost = run.stat("lost.total");
    assertEquals(events, d.count(JitDump.CODE_LOAD) + lost + run.stat("events.duplicate_loads") + run.stat("events.empty_blobs"),
                 "stats: " + run.stats());
    assertEquals(0, lost, "stats: " + run.stats());
  }
}
