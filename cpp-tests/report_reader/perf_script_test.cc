// The perf script text parser: every shape perf 6.1 prints (with and without call chains,
// padded and spaced comms, the side-band events) and the streaming that counts one sample per
// header, never one per call-chain frame.
#include "jitdump/report/perf_script.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jitdump::report {
namespace {

class Collect : public ScriptSink {
 public:
  void OnSample(const ScriptSample& sample) override { samples.push_back(sample); }
  void OnEvent(const ScriptEvent& event) override { events.push_back(event); }
  std::vector<ScriptSample> samples;
  std::vector<ScriptEvent> events;
};

Collect Parse(const std::string& text, uint64_t* unrecognized = nullptr) {
  Collect sink;
  ScriptParser parser(sink);
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      if (pos < text.size()) parser.Feed(text.substr(pos));
      break;
    }
    parser.Feed(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  parser.Finish();
  if (unrecognized) *unrecognized = parser.unrecognized_lines();
  return sink;
}

TEST(SampleTime, SecondsAndFraction) {
  uint64_t ns = 0;
  ASSERT_TRUE(ParseSampleTime("3380.714312671:", &ns));
  EXPECT_EQ(ns, 3380714312671u);
  ASSERT_TRUE(ParseSampleTime("1.5:", &ns));
  EXPECT_EQ(ns, 1500000000u);
  EXPECT_FALSE(ParseSampleTime("1.5", &ns));        // the colon is part of the field
  EXPECT_FALSE(ParseSampleTime("1234/1235", &ns));  // a pid/tid
  EXPECT_FALSE(ParseSampleTime("1.1234567890:", &ns));
}

TEST(FrameLine, AddressSymbolDso) {
  ScriptFrame f;
  ASSERT_TRUE(ParseFrameLine("\t    7f1f7cee240a [unknown] (/tmp/perf-27174.map)", &f));
  EXPECT_EQ(f.addr, 0x7f1f7cee240au);
  EXPECT_EQ(f.sym, "[unknown]");
  EXPECT_EQ(f.dso, "/tmp/perf-27174.map");
  ASSERT_TRUE(ParseFrameLine("\t          82aef2 JavaCalls::call_helper+0x1c (/usr/lib/jvm/x/libjvm.so)", &f));
  EXPECT_EQ(f.sym, "JavaCalls::call_helper");
  EXPECT_EQ(f.addr, 0x82aef2u);
  // Symbols with spaces and parentheses; a DSO perf marks deleted.
  ASSERT_TRUE(ParseFrameLine("7f00 demo.Demo.leaf(long, int) (/tmp/perf-1.map)", &f));
  EXPECT_EQ(f.sym, "demo.Demo.leaf(long, int)");
  EXPECT_EQ(f.dso, "/tmp/perf-1.map");
  ASSERT_TRUE(ParseFrameLine("7f00 operator() (/usr/lib/libx.so (deleted))", &f));
  EXPECT_EQ(f.sym, "operator()");
  EXPECT_EQ(f.dso, "/usr/lib/libx.so (deleted)");
  // Without a DSO field, an argument list stays part of the symbol.
  ASSERT_TRUE(ParseFrameLine("10090 Outer.run(int)", &f));
  EXPECT_EQ(f.sym, "Outer.run(int)");
  EXPECT_EQ(f.dso, "");
  ASSERT_TRUE(ParseFrameLine("ffffffffc0a01234 ext4_map_blocks ([ext4])", &f));
  EXPECT_EQ(f.dso, "[ext4]");
  EXPECT_FALSE(ParseFrameLine("java 123/123 1.0:", &f));
}

TEST(ScriptParser, CallChainSampleCountsOnce) {
  // The -g shape: a header, then the chain. perf-java once fed perf script without -G to a
  // counter that took every frame line for a sample (0.00% source lines).
  const Collect c = Parse(
      "java 27174/27176  3381.901254271:    1001001 cpu-clock: \n"
      "\t    7f1f7cee240a [unknown] (/tmp/perf-27174.map)\n"
      "\t    7f1f7c94132f [unknown] (/tmp/perf-27174.map)\n"
      "\t          82aef2 JavaCalls::call_helper (/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so)\n"
      "\n"
      "C2 CompilerThre 27174/27190  3381.902252519:    1001001 cpu-clock: \n"
      "\tffffffff8225f2d9 pvm_irq_enable ([kernel.kallsyms])\n"
      "\t           20ca3 mmap64 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
      "\n");
  ASSERT_EQ(c.samples.size(), 2u);
  const ScriptSample& s = c.samples[0];
  EXPECT_EQ(s.comm, "java");
  EXPECT_EQ(s.pid, 27174u);
  EXPECT_EQ(s.tid, 27176u);
  EXPECT_EQ(s.time_ns, 3381901254271u);
  EXPECT_EQ(s.period, 1001001u);
  EXPECT_EQ(s.event, "cpu-clock");
  EXPECT_TRUE(s.call_chain);
  ASSERT_EQ(s.frames.size(), 3u);
  EXPECT_EQ(s.frames[0].addr, 0x7f1f7cee240au);
  EXPECT_EQ(s.frames[2].sym, "JavaCalls::call_helper");
  EXPECT_EQ(c.samples[1].comm, "C2 CompilerThre");  // a comm with a space
  EXPECT_EQ(c.samples[1].tid, 27190u);
  ASSERT_EQ(c.samples[1].frames.size(), 2u);
  EXPECT_EQ(c.samples[1].frames[0].dso, "[kernel.kallsyms]");
}

TEST(ScriptParser, FlatSamplesWithPaddedComm) {
  // Without -g perf pads the comm on the left and prints the ip on the header line; jitdump fold
  // once found no sample in it.
  uint64_t unrecognized = 99;
  const Collect c = Parse(
      "            java 27228/27228  3389.130970399:    1001001 cpu-clock:      7f200b6693e0 update_active (/usr/lib/ld.so)\n"
      " C2 CompilerThre 27228/27240  3389.131977072:    1001001 cpu-clock:  ffffffff8133ca22 __ptep_modify ([kernel.kallsyms])\n"
      "            java 27228/27230  3392.988870003:    1001001 cpu-clock:      7f1ff4ee2841 [unknown] (/tmp/perf-27228.map)\n",
      &unrecognized);
  EXPECT_EQ(unrecognized, 0u);
  ASSERT_EQ(c.samples.size(), 3u);
  for (const ScriptSample& s : c.samples) {
    EXPECT_FALSE(s.call_chain);
    ASSERT_EQ(s.frames.size(), 1u);
    EXPECT_EQ(s.period, 1001001u);
  }
  EXPECT_EQ(c.samples[0].comm, "java");
  EXPECT_EQ(c.samples[0].frames[0].addr, 0x7f200b6693e0u);
  EXPECT_EQ(c.samples[0].frames[0].sym, "update_active");
  EXPECT_EQ(c.samples[1].comm, "C2 CompilerThre");
  EXPECT_EQ(c.samples[2].frames[0].dso, "/tmp/perf-27228.map");
  EXPECT_EQ(c.samples[2].time_ns, 3392988870003u);
}

TEST(ScriptParser, DefaultOutputAndPidOnlyShapes) {
  const Collect c = Parse(
      "java  4242/4243 [000]   100.000000:          1 cpu-clock:u:\n"
      "\t           10048 Outer.run+0x48 (/tmp/jitted-4242-1.so)\n"
      "\n"
      "java 4242/4243\n"
      "\t10090 Outer.run\n"
      "\n"
      "java 4242/4243 100a4 [unknown]\n"
      "worker 7 4242/4250 [001] 5.000000001: 1 cpu-clock: 20010 fn (/tmp/perf-4242.map)\n");
  ASSERT_EQ(c.samples.size(), 4u);
  EXPECT_EQ(c.samples[0].event, "cpu-clock:u");
  EXPECT_EQ(c.samples[0].time_ns, 100000000000u);
  EXPECT_FALSE(c.samples[1].time_ns.has_value());
  EXPECT_EQ(c.samples[1].frames[0].addr, 0x10090u);
  EXPECT_EQ(c.samples[2].frames[0].addr, 0x100a4u);
  EXPECT_FALSE(c.samples[2].call_chain);
  // "worker 7": a thread name holding a number is not taken for the pid.
  EXPECT_EQ(c.samples[3].comm, "worker 7");
  EXPECT_EQ(c.samples[3].pid, 4242u);
  EXPECT_EQ(c.samples[3].tid, 4250u);
}

TEST(ScriptParser, ChainReplacesTheHeaderFrame) {
  const Collect c = Parse("java 1/2 1.0: 1 cpu-clock: 10 a (/x)\n\t20 b (/x)\n\t30 c (/x)\n");
  ASSERT_EQ(c.samples.size(), 1u);
  ASSERT_EQ(c.samples[0].frames.size(), 2u);
  EXPECT_EQ(c.samples[0].frames[0].sym, "b");
  EXPECT_TRUE(c.samples[0].call_chain);
}

TEST(ScriptParser, FramesOfOneSampleDoNotLeakIntoTheNext) {
  // The parser reuses frame buffers between samples; a short sample after a long one must see
  // only its own frames.
  const Collect c = Parse("a 1/1 1.0: 1 e:\n\t1 x (/a)\n\t2 y (/a)\n\t3 z (/a)\n\nb 1/1 2.0: 1 e:\n\t4 w (/a)\n");
  ASSERT_EQ(c.samples.size(), 2u);
  ASSERT_EQ(c.samples[1].frames.size(), 1u);
  EXPECT_EQ(c.samples[1].frames[0].sym, "w");
}

TEST(EventLine, Mmap2MarkerAndKernelMmap) {
  ScriptEvent e;
  ASSERT_TRUE(ParseEventLine("java 30580/30582  3491.738415123: PERF_RECORD_MMAP2 30580/30582: [0x7fb49376b000(0x1000) @ 0 "
                             "fe:00 10961953 2975019037]: r-xp /tmp/rc/jjit/jit-30580.dump",
                             &e));
  EXPECT_EQ(e.kind, ScriptEventKind::kMmap);
  EXPECT_EQ(e.pid, 30580);
  EXPECT_EQ(e.tid, 30582);
  EXPECT_EQ(e.time_ns, 3491738415123u);
  EXPECT_EQ(e.start, 0x7fb49376b000u);
  EXPECT_EQ(e.len, 0x1000u);
  EXPECT_EQ(e.prot, "r-xp");
  EXPECT_EQ(e.path, "/tmp/rc/jjit/jit-30580.dump");
  // The pid,tid,time prefix of the side-band pass, a build id, a path with a space.
  ASSERT_TRUE(ParseEventLine("30580/30580  3491.7: PERF_RECORD_MMAP2 30580/30580: [0x1000(0x2000) @ 0x3000 "
                             "<0123abcd>]: r-xp /tmp/a dir/jit-7.dump",
                             &e));
  EXPECT_EQ(e.pgoff, 0x3000u);
  EXPECT_EQ(e.path, "/tmp/a dir/jit-7.dump");
  ASSERT_TRUE(ParseEventLine("    0/0         0.000000000: PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1276508) @ "
                             "0xffffffff81000000]: x [kernel.kallsyms]_text",
                             &e));
  EXPECT_EQ(e.pid, -1);
  EXPECT_EQ(e.time_ns, 0u);
  EXPECT_EQ(e.path, "[kernel.kallsyms]_text");
}

TEST(EventLine, CommForkExit) {
  ScriptEvent e;
  ASSERT_TRUE(ParseEventLine("30580/30580  3491.705916364: PERF_RECORD_COMM exec: javac:30580/30580", &e));
  EXPECT_EQ(e.kind, ScriptEventKind::kComm);
  EXPECT_TRUE(e.exec);
  EXPECT_EQ(e.comm, "javac");
  EXPECT_EQ(e.pid, 30580);
  ASSERT_TRUE(ParseEventLine("30580/30583  3491.740237: PERF_RECORD_COMM: C2 Compiler:Thread:30580/30583", &e));
  EXPECT_FALSE(e.exec);
  EXPECT_EQ(e.comm, "C2 Compiler:Thread");
  EXPECT_EQ(e.tid, 30583);
  ASSERT_TRUE(ParseEventLine("30580/30582  3491.738533: PERF_RECORD_FORK(30580:30583):(30580:30582)", &e));
  EXPECT_EQ(e.kind, ScriptEventKind::kFork);
  EXPECT_EQ(e.pid, 30580);
  EXPECT_EQ(e.tid, 30583);
  EXPECT_EQ(e.ptid, 30582);
  ASSERT_TRUE(ParseEventLine("30580/30580  3499.9: PERF_RECORD_EXIT(30580:30580):(30579:30579)", &e));
  EXPECT_EQ(e.kind, ScriptEventKind::kExit);
  EXPECT_EQ(e.ppid, 30579);
  EXPECT_FALSE(ParseEventLine("java 1/1 1.0: PERF_RECORD_LOST lost 3", &e));
}

TEST(ScriptParser, EventsEndASampleAndReachTheSink) {
  const Collect c = Parse(
      "java 5/5 1.0: 1 cpu-clock:\n"
      "\t10 a (/x)\n"
      "java 5/5 1.5: PERF_RECORD_MMAP2 5/6: [0x1000(0x1000) @ 0 00:00 0 0]: r-xp /tmp/jit-5.dump\n"
      "\t20 b (/x)\n");
  ASSERT_EQ(c.samples.size(), 1u);
  EXPECT_EQ(c.samples[0].frames.size(), 1u);  // the stray frame after the event is no sample's
  ASSERT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.events[0].path, "/tmp/jit-5.dump");
}

}  // namespace
}  // namespace jitdump::report
