// Which dump describes a process when: markers, late attach, exits and execs (pid reuse), and
// where its dump is: named by a container's pid, or in a jit-<pid>-N subdirectory (JVMs with one
// pid sharing a directory).
#include "jitdump/report/process_map.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <random>

#include "cpp-tests/temp_dir_test.h"
#include "jitdump/report/dump_locator.h"

namespace jitdump::report {
namespace {

ScriptEvent Mmap(int64_t pid, uint64_t time, std::string path) {
  ScriptEvent e;
  e.kind = ScriptEventKind::kMmap;
  e.pid = e.tid = pid;
  e.time_ns = time;
  e.path = std::move(path);
  return e;
}

ScriptEvent Task(ScriptEventKind kind, int64_t pid, uint64_t time, bool exec = false, std::string comm = "") {
  ScriptEvent e;
  e.kind = kind;
  e.pid = e.tid = pid;
  e.time_ns = time;
  e.exec = exec;
  e.comm = std::move(comm);
  return e;
}

TEST(ProcessMap, DumpFileNames) {
  uint32_t pid = 0;
  ASSERT_TRUE(DumpFileName("/run/jit/jit-1234.dump", &pid));
  EXPECT_EQ(pid, 1234u);
  ASSERT_TRUE(DumpFileName("/tmp/jit-1.dump (deleted)", &pid));
  EXPECT_EQ(pid, 1u);
  EXPECT_FALSE(DumpFileName("/run/jit/jit-12a.dump", &pid));
  EXPECT_FALSE(DumpFileName("/run/jit/jit-1234.dump.inline", &pid));
  EXPECT_FALSE(DumpFileName("/usr/lib/libjvm.so", &pid));
}

TEST(ProcessMap, MarkerFromTheRecording) {
  ProcessMap map;
  map.OnEvent(Mmap(100, 5, "/usr/lib/libc.so.6"));
  map.OnEvent(Mmap(100, 10, "/run/jit/jit-100.dump"));
  ASSERT_EQ(map.markers().size(), 1u);
  EXPECT_EQ(map.MarkerFor(100, 20), 0);
  EXPECT_EQ(map.MarkerFor(100, std::nullopt), 0);
  EXPECT_EQ(map.MarkerFor(101, 20), -1);
}

TEST(ProcessMap, LateAttachCoversEarlierSamples) {
  ProcessMap map;
  map.OnEvent(Task(ScriptEventKind::kComm, 100, 1, true, "java"));
  map.OnEvent(Mmap(100, 50, "/tmp/x/jit-100.dump"));  // attached at 50
  EXPECT_EQ(map.MarkerFor(100, 20), 0);
  EXPECT_EQ(map.CommandOf(100), "java");
}

TEST(ProcessMap, PidReuseAndExec) {
  ProcessMap map;
  map.OnEvent(Mmap(100, 10, "/a/jit-100.dump"));
  map.OnEvent(Task(ScriptEventKind::kExit, 100, 20));  // the first JVM exits
  // pid 100 again: a shell that execs java at 40, whose agent attaches at 60.
  map.OnEvent(Task(ScriptEventKind::kComm, 100, 40, true, "java"));
  map.OnEvent(Mmap(100, 60, "/b/jit-100.dump"));
  EXPECT_EQ(map.MarkerFor(100, 15), 0);
  EXPECT_EQ(map.MarkerFor(100, 25), -1);  // the shell before exec: no JVM
  EXPECT_EQ(map.MarkerFor(100, 45), 1);   // the new JVM before its late attach
  EXPECT_EQ(map.MarkerFor(100, 70), 1);
}

TEST(ProcessMap, TwoJvms) {
  ProcessMap map;
  map.OnEvent(Mmap(100, 10, "/run/jit/jit-100.dump"));
  map.OnEvent(Mmap(200, 12, "/run/jit/jit-200.dump"));
  EXPECT_EQ(map.markers()[static_cast<size_t>(map.MarkerFor(100, 30))].path, "/run/jit/jit-100.dump");
  EXPECT_EQ(map.markers()[static_cast<size_t>(map.MarkerFor(200, 30))].path, "/run/jit/jit-200.dump");
}

TEST(ProcessMap, ARepeatedMarkerOfOneImageIsKeptOnce) {
  ProcessMap map;
  map.OnEvent(Mmap(100, 0, "/run/jit/jit-100.dump"));   // perf synthesized it when it started
  map.OnEvent(Mmap(100, 10, "/run/jit/jit-100.dump"));  // and recorded the agent's mmap too
  EXPECT_EQ(map.markers().size(), 1u);
  map.OnEvent(Task(ScriptEventKind::kComm, 100, 20, true, "java"));
  map.OnEvent(Mmap(100, 30, "/run/jit/jit-100.dump"));  // after an exec: a new image's marker
  EXPECT_EQ(map.markers().size(), 2u);
}

// A process that re-execs itself, mapping its dump each time: every sample finds the marker of
// its own image, and the lookups stay cheap (thousands of markers: the index is searched, not
// scanned).
TEST(ProcessMap, ThousandsOfExecsOfOnePid) {
  ProcessMap map;
  constexpr uint64_t kImages = 20000;
  for (uint64_t i = 0; i < kImages; ++i) {
    map.OnEvent(Task(ScriptEventKind::kComm, 100, 100 * i + 1, true, "svc"));
    map.OnEvent(Mmap(100, 100 * i + 50, "/home/a/jit-100.dump"));
  }
  ASSERT_EQ(map.markers().size(), kImages);
  for (uint64_t i = 0; i < kImages; ++i) {
    EXPECT_EQ(map.MarkerFor(100, 100 * i + 60), static_cast<int64_t>(i));
    EXPECT_EQ(map.MarkerFor(100, 100 * i + 20), static_cast<int64_t>(i));  // before its marker: late attach
  }
  EXPECT_EQ(map.MarkerFor(100, std::nullopt), static_cast<int64_t>(kImages - 1));
}

// MarkerSpanFor's stretch: MarkerFor gives its marker at every time in [from, until), and the
// bounds are times of the pid's events (a marker, exit or exec), not cut short anywhere else.
// Random histories of two pids: markers (repeated and late ones), exits, execs and a dump found
// without a marker.
TEST(ProcessMap, MarkerSpansHoldTheirAnswer) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 300; ++round) {
    ProcessMap map;
    std::vector<uint64_t> events;  // every time an event had, for the check below
    uint64_t time = 0;
    const int n = 1 + static_cast<int>(random() % 12);
    for (int e = 0; e < n; ++e) {
      time += random() % 40;
      const int64_t pid = 100 + static_cast<int64_t>(random() % 2);
      switch (random() % 5) {
        case 0:
        case 1:
          map.OnEvent(Mmap(pid, time, "/d" + std::to_string(random() % 2) + "/jit-" + std::to_string(pid) + ".dump"));
          break;
        case 2:
          map.OnEvent(Task(ScriptEventKind::kExit, pid, time));
          break;
        case 3:
          map.OnEvent(Task(ScriptEventKind::kComm, pid, time, true, "java"));
          break;
        default:
          if (random() % 4 == 0) map.AddMarker(static_cast<uint32_t>(pid), static_cast<uint32_t>(pid), "/found/jit.dump");
          break;
      }
      events.push_back(time);
    }
    for (uint32_t pid : {100u, 101u, 102u}) {
      for (uint64_t t = 0; t <= time + 50; ++t) {
        const ProcessMap::MarkerSpan span = map.MarkerSpanFor(pid, t);
        ASSERT_EQ(span.marker, map.MarkerFor(pid, t)) << "round " << round << " pid " << pid << " time " << t;
        ASSERT_LE(span.from, t);
        ASSERT_GT(span.until, t);
        // The whole stretch, within the times the events span (beyond them nothing changes).
        const uint64_t last = std::min(span.until, time + 60);
        for (uint64_t u = span.from; u < last; ++u) {
          ASSERT_EQ(map.MarkerFor(pid, u), span.marker) << "round " << round << " pid " << pid << " time " << u;
        }
        // Its bounds are times of events (0 and the end aside): a stretch cut short elsewhere
        // would only cost lookups, but its bounds would not be the ones MarkerFor's answer has.
        if (span.from != 0) {
          ASSERT_NE(std::find(events.begin(), events.end(), span.from), events.end());
        }
        if (span.until != UINT64_MAX) {
          ASSERT_NE(std::find(events.begin(), events.end(), span.until), events.end());
        }
      }
    }
  }
}

TEST(DumpLocator, ContainerDumpsByHostOrNamespacePid) {
  // A JVM that is pid 1 in its container and 4321 on the host: perf records the host pid and
  // the path the JVM used.
  DumpMarker marker{4321, 1, 10, "/tmp/jit-1.dump"};
  const std::vector<std::string> candidates = DumpCandidates(marker, {"/collected"});
  const std::vector<std::string> want = {"/collected/jit-4321.dump", "/collected/jit-1.dump", "/tmp/jit-1.dump",
                                         "/proc/4321/root/tmp/jit-1.dump"};
  EXPECT_EQ(candidates, want);
  EXPECT_TRUE(AcceptsDump(marker, 1));     // a plain copy: the header keeps the container pid
  EXPECT_TRUE(AcceptsDump(marker, 4321));  // collect watch rewrites it to the host pid
  EXPECT_FALSE(AcceptsDump(marker, 77));   // /tmp/jit-1.dump on the host is someone else's
}

TEST(DumpLocator, SamePidSubdirectoryFirst) {
  // The second JVM with pid 1 in a shared directory wrote jit-1-2/jit-1.dump: in a --dumps
  // directory, the flat jit-1.dump (header pid 1 too) is most likely the first JVM's.
  DumpMarker marker{4321, 1, 10, "/jit/jit-1-2/jit-1.dump"};
  const std::vector<std::string> want = {"/a/jit-1-2/jit-1.dump", "/b/jit-1-2/jit-1.dump", "/a/jit-4321.dump",
                                         "/a/jit-1.dump",         "/b/jit-4321.dump",      "/b/jit-1.dump",
                                         "/jit/jit-1-2/jit-1.dump", "/proc/4321/root/jit/jit-1-2/jit-1.dump"};
  EXPECT_EQ(DumpCandidates(marker, {"/a", "/b"}), want);
  EXPECT_EQ(SamePidSubdirectory("/jit/jit-1-9/jit-1.dump", 1), "jit-1-9");
  EXPECT_EQ(SamePidSubdirectory("jit-1-2/jit-1.dump", 1), "jit-1-2");
  EXPECT_EQ(SamePidSubdirectory("/jit/jit-1.dump", 1), "");
  EXPECT_EQ(SamePidSubdirectory("/jit/jit-1-1/jit-1.dump", 1), "");   // the agent starts at 2
  EXPECT_EQ(SamePidSubdirectory("/jit/jit-1-10/jit-1.dump", 1), "");  // and stops at 9
  EXPECT_EQ(SamePidSubdirectory("/jit/jit-2-2/jit-1.dump", 1), "");   // another pid's directory
  EXPECT_EQ(SamePidSubdirectory("/jit/xjit-1-2/jit-1.dump", 1), "");
}

class DumpsInDirectoriesTest : public TempDirTest {
 protected:
  void Dir(const std::string& name) { ASSERT_EQ(mkdir((dir_ + "/" + name).c_str(), 0755), 0); }
};

TEST_F(DumpsInDirectoriesTest, FlatAndSamePidSubdirectories) {
  Write("jit-1.dump", "");
  Dir("jit-1-3");
  Write("jit-1-3/jit-1.dump", "");
  Dir("jit-1-2");
  Write("jit-1-2/jit-1.dump", "");
  Dir("jit-7-2");  // only a subdirectory's dump for pid 7
  Write("jit-7-2/jit-7.dump", "");
  Dir("jit-8-2");  // no dump inside, or not a pid's own name: nothing
  Dir("jit-9-2");
  Write("jit-9-2/jit-1.dump", "");
  Dir("jit-5-1");
  Write("jit-5-1/jit-5.dump", "");
  Write("jit-6-2", "");  // a file, not a directory
  const std::vector<FoundDump> found = DumpsInDirectories({dir_});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].pid, 1u);
  EXPECT_EQ(found[0].path, dir_ + "/jit-1.dump");
  EXPECT_EQ(found[0].others, (std::vector<std::string>{dir_ + "/jit-1-2/jit-1.dump", dir_ + "/jit-1-3/jit-1.dump"}));
  EXPECT_EQ(found[1].pid, 7u);
  EXPECT_EQ(found[1].path, dir_ + "/jit-7-2/jit-7.dump");
  EXPECT_TRUE(found[1].others.empty());
}

TEST_F(DumpsInDirectoriesTest, TheFirstDirectoryWins) {
  Dir("one");
  Dir("two");
  Write("two/jit-1.dump", "");
  Dir("two/jit-1-2");
  Write("two/jit-1-2/jit-1.dump", "");
  Dir("one/jit-1-2");
  Write("one/jit-1-2/jit-1.dump", "");
  const std::vector<FoundDump> found = DumpsInDirectories({dir_ + "/one", dir_ + "/two"});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, dir_ + "/one/jit-1-2/jit-1.dump");
  EXPECT_TRUE(found[0].others.empty());
}

// pprof's header names the program (pprof_writer.cc): the executable each process ran.
TEST(ProcessMap, ExecutableIsTheFirstProgramMappedAfterExec) {
  ProcessMap map;
  auto exec_mmap = [](int64_t pid, uint64_t time, std::string path, std::string prot = "r-xp") {
    ScriptEvent e = Mmap(pid, time, std::move(path));
    e.prot = std::move(prot);
    return e;
  };
  map.OnEvent(exec_mmap(5, 1, "/usr/bin/dash"));
  map.OnEvent(exec_mmap(5, 2, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
  EXPECT_EQ(map.ExecutableOf(5), "/usr/bin/dash");
  // exec java: the JVM's launcher, then its interpreter and libraries (a data mapping first).
  map.OnEvent(Task(ScriptEventKind::kComm, 5, 3, true, "java"));
  map.OnEvent(exec_mmap(5, 4, "/usr/lib/jvm/java-17/bin/java", "r--p"));
  map.OnEvent(exec_mmap(5, 4, "//anon"));
  map.OnEvent(exec_mmap(5, 4, "/tmp/jit-5.dump"));
  map.OnEvent(exec_mmap(5, 4, "/usr/lib/jvm/java-17/bin/java"));
  map.OnEvent(exec_mmap(5, 5, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
  EXPECT_EQ(map.ExecutableOf(5), "/usr/lib/jvm/java-17/bin/java");
  // A child forked without exec runs its parent's program.
  ScriptEvent fork = Task(ScriptEventKind::kFork, 6, 6);
  fork.ppid = fork.ptid = 5;
  map.OnEvent(fork);
  EXPECT_EQ(map.ExecutableOf(6), "/usr/lib/jvm/java-17/bin/java");
  EXPECT_EQ(map.ExecutableOf(7), "");
}

}  // namespace
}  // namespace jitdump::report
