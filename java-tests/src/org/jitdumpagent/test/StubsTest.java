package org.jitdumpagent.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Collectors;
import org.jitdumpagent.test.support.JitDump;
import org.jitdumpagent.test.support.Runs;
import org.junit.jupiter.api.Test;

/** DynamicCodeGenerated blobs (interpreter, stubs, adapters) are code loads too. */
class StubsTest {
  static List<JitDump.CodeLoad> matching(JitDump d, java.util.function.Predicate<String> p) {
    return d.codeLoads().stream().filter(l -> p.test(l.name)).collect(Collectors.toList());
  }

  @Test
  void interpreterIsOneCodeLoad() {
    JitDump d = Runs.mixed().dump();
    List<JitDump.CodeLoad> interp = matching(d, n -> n.equals("Interpreter"));
    assertEquals(1, interp.size(), "loads named 'Interpreter':" + d.describe("Interp"));
    assertTrue(interp.get(0).codeSize > 10_000, "the template interpreter is large: " + interp.get(0));
    assertTrue(interp.get(0).debugInfo == null, "stubs have no source lines");
  }

  @Test
  void callStubAndAdaptersArePresent() {
    JitDump d = Runs.mixed().dump();
    assertTrue(!matching(d, n -> n.contains("call_stub")).isEmpty(), "no call_stub:" + d.describe("stub"));
    List<JitDump.CodeLoad> adapters = matching(d, n -> n.contains("adapters"));
    assertTrue(adapters.size() > 5, "expected many I2C/C2I adapters:" + d.describe("adapter"));
    for (JitDump.CodeLoad l : adapters) assertTrue(l.codeSize > 0, "empty adapter " + l);
  }

  @Test
  void namesAreCleanUtf8WithoutGeneratorPrefix() {
    for (JitDump.CodeLoad l : Runs.mixed().dump().codeLoads()) {
      assertTrue(!l.name.startsWith("Stub Generator "), "unstripped stub name " + l);
      assertTrue(l.name.chars().allMatch(c -> c >= 0x20 && c != 0x7f), "control character in name " + l);
      assertTrue(l.name.indexOf('\uFFFD') < 0, "name is not valid UTF-8: " + l);
    }
  }
}
