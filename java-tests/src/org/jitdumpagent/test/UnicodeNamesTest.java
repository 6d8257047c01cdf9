package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.jitdumpagent.test.support.AgentRun;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** Method names outside ASCII are written as UTF-8 (the parser decodes names as UTF-8). */
class UnicodeNamesTest {
  @Test
  void bmpCharactersInJavaNames() {
    JitDump d = Runs.mixed().dump();
    String name = Runs.PKG + "Unicode.gr\u00f6\u00dfe(int)";
    assertFalse(d.loadsNamed(name).isEmpty(), "no load named " + name + d.describe("Unicode"));
  }

  @Test
  void bmpCharactersInJvmNames() {
    JitDump d = Runs.mixedJvmNamesSystemExit().dump();
    String name = "Lorg/jitdumpagent/workloads/Unicode;gr\u00f6\u00dfe(I)I";
    assertFalse(d.loadsNamed(name).isEmpty(), "no load named " + name + d.describe("Unicode"));
  }

  @Test
  // JVMTI hands out modified UTF-8 (a surrogate pair as two 3-byte sequences); the agent must
  // write standard UTF-8 (f0 9d 92 9c for U+1D49C).
  void supplementaryCharactersAreUtf8() {
    AgentRun r = AgentRun.spec("unicode-supplementary").jvm(Runs.COMPILE_COMMANDS)
        .main(Runs.PKG + "Unicode", "supp").run().expectExit(0);
    String name = Runs.PKG + "Unicode.\uD835\uDC9C(int)";
    assertFalse(r.dump().loadsNamed(name).isEmpty(), "no load named " + name + r.dump().describe("Unicode"));
  }
}
