// Writes the crafted jitdump files the CLI tests run on into DIR, plus DIR/manifest.json that
// names, for every corrupt file, the byte offset and message `jitdump check` must report, and
// the crafted perf.data files `jitdump perfdata` runs on.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cpp-tests/perfdata/perf_data_builder.h"
#include "cpp-tests/reader_test_builder.h"
#include "jitdump/write/method_table_file.h"

using jitdump::testing::Builder;

namespace {

bool Write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

struct Expect {
  std::string file;
  size_t offset;
  std::string text;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: cli_fixture_gen DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = true;
  std::vector<Expect> expects;

  {
    // A method table beside inline.dump: two classes, a method retired, its Method* reused, a
    // native method, and a control byte in a name. methods-cut.methods ends inside a record.
    const jitdump::MethodTableHeader header = jitdump::MakeMethodTableHeader(1234, 100);
    std::vector<uint8_t> t(reinterpret_cast<const uint8_t*>(&header),
                           reinterpret_cast<const uint8_t*>(&header) + sizeof header);
    jitdump::MethodTableLayout layout;
    layout.elf_machine = 62;
    layout.jvm_feature = 17;
    layout.method_slot = -3;
    layout.bcp_slot = -8;
    layout.complete_slot = -9;
    layout.bcp_register = jitdump::kPerfRegX86R13;
    layout.method_register = jitdump::kPerfRegX86Bx;
    layout.jvm_version = "17.0.21+2";
    ok &= jitdump::AppendLayoutRecord(t, 100, layout);
    ok &= jitdump::AppendClassRecord(t, {0, 1, "probe.Chain", "probe/Chain.java"});
    const jitdump::MethodTableLine lines[] = {{0, 31}, {7, 32}, {38, 31}};
    jitdump::MethodTableMethod m;
    m.serial = 1;
    m.method = 0x7f0000001000;
    m.code_base = 0x7f0000002000;
    m.code_size = 45;
    m.class_id = 1;
    m.name = "inner";
    m.descriptor = "(I)V";
    m.lines = lines;
    ok &= jitdump::AppendMethodRecord(t, m);
    jitdump::AppendRetireRecord(t, 500, 1, m.method);
    ok &= jitdump::AppendClassRecord(t, {700, 2, "java.lang.System", "java/lang/System.java"});
    jitdump::MethodTableMethod reused;
    reused.timestamp = 700;
    reused.serial = 2;
    reused.method = m.method;
    reused.class_id = 2;
    reused.flags = jitdump::kMethodNative;
    reused.name = "nano\x01Time";
    reused.descriptor = "()J";
    ok &= jitdump::AppendMethodRecord(t, reused);
    const size_t whole = t.size();
    const jitdump::MethodTableEndRecord end = jitdump::MakeEndRecord(900, {2, 2, 1, 0});
    t.insert(t.end(), reinterpret_cast<const uint8_t*>(&end), reinterpret_cast<const uint8_t*>(&end) + sizeof end);
    ok &= Write(dir + "/inline.dump.methods", t);
    t.resize(whole - 12);
    ok &= Write(dir + "/methods-cut.methods", t);
  }

  // Valid files.
  ok &= Write(dir + "/inline.dump", jitdump::testing::InlineExample(false).bytes());
  ok &= Write(dir + "/inline-be.dump", jitdump::testing::InlineExample(true).bytes());
  {
    Builder b;
    b.Header();
    b.Load(5, 0x1000, 0x100, 0, "old code");
    b.Load(6, 0x1040, 0x40, 1, "new code");
    const size_t last = b.Load(7, 0x3000, 0x80, 2, "cut");
    std::vector<uint8_t> bytes = b.bytes();
    bytes.resize(last + 30);
    ok &= Write(dir + "/truncated.dump", bytes);
  }

  {
    // Code cache reuse: two methods at the same address, one after the other (1 s and 2 s).
    Builder b;
    b.Header(1, 40, 500000000);
    b.Load(1000000000, 0x5000, 0x100, 0, "first");
    b.Load(2000000000, 0x5000, 0x100, 1, "second");
    ok &= Write(dir + "/reuse.dump", b.bytes());
  }

  {
    // Names JSON must escape: quotes, backslash, control bytes, invalid UTF-8, valid UTF-8.
    Builder b;
    b.Header();
    b.Load(5, 0x1000, 0x10, 0, "q\"b\\s\x01\t\xff\xc3(\xe2\x82\xac ok");
    ok &= Write(dir + "/oddname.dump", b.bytes());
  }
  {
    // Bytes that are not UTF-8 in every kind of string a dump holds, including sequences only a
    // loose check takes for UTF-8 (a surrogate, an overlong form, a code point past U+10FFFF):
    // every --json output must still be valid UTF-8.
    Builder b;
    b.Header();
    b.Samply(4, {"In\xffline.java"}, {"F\xfe"}, {{0, 0, 1, 0, 0}}, {}, {}, {{0, 0, 3, 0}});
    b.DebugInfo(5, 0x1000, {{0x1000, 7, 0, "S\xed\xa0\x80\xe0\x80\x80\xf4\x90\x80\x80.java"}});
    b.Load(6, 0x1000, 0x10, 0, "L\xc3(");
    b.Close(7);
    ok &= Write(dir + "/oddbytes.dump", b.bytes());
  }

  // Corrupt files, one defect each.
  {
    Builder b;
    b.Header();
    b.bytes()[1] = 'X';
    ok &= Write(dir + "/bad-magic.dump", b.bytes());
    expects.push_back({"bad-magic.dump", 0, "bad magic"});
  }
  {
    Builder b;
    b.Header();
    b.bytes().resize(30);
    ok &= Write(dir + "/short.dump", b.bytes());
    expects.push_back({"short.dump", 0, "too short"});
  }
  {
    Builder b;
    b.Header(2);
    b.Load(5, 0x1000, 0x10, 0, "f");
    ok &= Write(dir + "/version2.dump", b.bytes());
    expects.push_back({"version2.dump", 4, "perf 6.1 rejects version > 1"});
  }
  {
    Builder b;
    b.Header();
    b.Load(5, 0x1000, 0x10, 0, "f");
    const size_t at = b.Begin(0, 6);
    b.PatchU32(at + 4, 8);
    b.Zeros(40);
    ok &= Write(dir + "/size-below-16.dump", b.bytes());
    expects.push_back({"size-below-16.dump", at + 4, "smaller than 16"});
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.Load(5, 0x1000, 0x10, 0, "f");
    b.PatchU64(at + 40, 0x7fffffffffffull);
    ok &= Write(dir + "/code-size.dump", b.bytes());
    expects.push_back({"code-size.dump", at + 40, "code_size"});
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.DebugInfo(5, 0x1000, {{0x1000, 1, 0, "A.java"}});
    b.PatchU64(at + 24, 1000000);
    b.Load(6, 0x1000, 0x10, 0, "f");
    ok &= Write(dir + "/nr-entry.dump", b.bytes());
    expects.push_back({"nr-entry.dump", at + 24, "nr_entry"});
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.Begin(2, 5);
    b.U64(0x1000).U64(1).U64(0x1000).U32(3).U32(0).Raw("A.java");
    b.End(at);
    ok &= Write(dir + "/no-nul.dump", b.bytes());
    expects.push_back({"no-nul.dump", at + 48, "no NUL"});
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.DebugInfo(5, 0x1000, {{0x1000, 1, 0, "A.java"}, {0x0F00, 2, 0, "A.java"}});
    b.Load(6, 0x1000, 0x100, 0, "f");
    ok &= Write(dir + "/descending.dump", b.bytes());
    expects.push_back({"descending.dump", at + 32 + 23, "below the load's code_addr"});
  }
  {
    Builder b;
    b.Header();
    b.Load(5, 0x1000, 0x10, 3, "f");
    const size_t at = b.Load(6, 0x2000, 0x10, 3, "g");
    ok &= Write(dir + "/duplicate-index.dump", b.bytes());
    expects.push_back({"duplicate-index.dump", at + 48, "code_index 3 repeats"});
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.Samply(5, {"A.java"}, {"a", "b"}, {{0, 0, 1, 0, 0}, {1, 0, 1, 0, 0}},
                               {{0, 1, 1, 3, 0}, {2, 1, 1, 4, 0}}, {{0, 8}, {0, 4}}, {});
    b.Load(6, 0x1000, 0x100, 0, "a");
    ok &= Write(dir + "/samply-depth.dump", b.bytes());
    expects.push_back({"samply-depth.dump", at + 48 + 8 + 4 + 40 + 20, "deeper than previous"});
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.Samply(5, {"A.java"}, {"a", "b"}, {{0, 0, 1, 0, 0}, {1, 0, 1, 0, 0}},
                               {{0, 1, 9, 3, 0}}, {{0, 8}}, {});
    b.Load(6, 0x1000, 0x100, 0, "a");
    ok &= Write(dir + "/samply-index.dump", b.bytes());
    expects.push_back({"samply-index.dump", at + 48 + 8 + 4 + 40 + 8, "function_index 9 out of range"});
  }
  {
    Builder b;
    b.Header();
    const size_t at = b.Samply(5, {"A.java"}, {"a"}, {{0, 0, 1, 0, 0}}, {}, {}, {});
    b.PatchU32(at + 20, 4);  // file_list_size: "A.java\0" needs 8 (7 padded); claim 4
    ok &= Write(dir + "/samply-padding.dump", b.bytes());
    expects.push_back({"samply-padding.dump", at + 48, "samply file list"});
  }

  {
    // A system-wide recording's sample in a task that is exiting: the kernel could no longer
    // name its thread and wrote tid 0xffffffff, which perf script prints as -1.
    namespace pd = jitdump::perfdata;
    pd::testing::PerfDataBuilder b;
    b.AddEvent(pd::kSampleIp | pd::kSampleTid | pd::kSampleTime | pd::kSampleCpu | pd::kSamplePeriod, {}, "cpu-clock");
    b.Comm(4366, 4366, "java", true, {4366, 4366, 100, 0});
    pd::testing::SampleFields f;
    f.ip = 0x401000;
    f.pid = 4366;
    f.tid = 0xffffffff;
    f.time = 200;
    b.Sample(0, f);
    ok &= Write(dir + "/exiting-task.data", b.File());
  }

  std::string manifest = "[\n";
  for (size_t i = 0; i < expects.size(); ++i) {
    manifest += "  {\"file\": \"" + expects[i].file + "\", \"offset\": " + std::to_string(expects[i].offset) +
                ", \"text\": \"" + expects[i].text + "\"}" + (i + 1 < expects.size() ? ",\n" : "\n");
  }
  manifest += "]\n";
  std::ofstream(dir + "/manifest.json") << manifest;
  return ok ? 0 : 1;
}
