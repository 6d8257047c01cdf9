// Shared fixtures for the benchmark programs: realistic synthetic code loads shaped like the
// javac workload (hotspot-jvmti-semantics.md §9: 1.74 KB of code and ~50 PcDescs per load,
// names of ~100 bytes, package-relative source files), and a scratch directory.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "agent/core/code_event.h"
#include "agent/core/inline_tree.h"
#include "agent/core/line_map.h"
#include "agent/core/record_queue.h"

namespace bench {

// One synthetic compiled method: code bytes, name, PcDesc sites with 1-3 frame scope chains
// over a handful of methods, and the line rows the agent would derive from them.
struct SyntheticLoad {
  std::vector<uint8_t> code;
  std::string name;
  std::vector<jitdump_agent::Frame> frames;
  std::vector<jitdump_agent::PcSite> sites;
  std::vector<jitdump_agent::LineRow> rows;
  std::vector<jitdump::DebugEntry> entries;  // the rows as DEBUG_INFO entries
};

class Corpus {
 public:
  // `count` distinct loads of `code_size` bytes with `pcdescs` PcDescs each.
  Corpus(size_t count, size_t code_size, size_t pcdescs) {
    static const char* kFiles[] = {"java/util/HashMap.java", "java/util/concurrent/ConcurrentHashMap.java",
                                   "com/sun/tools/javac/comp/Attr.java", "java/lang/String.java",
                                   "com/sun/tools/javac/util/List.java", "java/util/ArrayList.java"};
    methods_.reserve(16);
    for (int m = 0; m < 16; ++m) {
      auto lines = std::make_unique<jitdump_agent::MethodLines>();
      lines->function = "com.sun.tools.javac.comp.Attr.method" + std::to_string(m);
      lines->file = kFiles[m % 6];
      std::vector<jitdump_agent::LineNumber> table;
      for (int b = 0; b < 64; ++b) table.push_back({b * 4, 100 + m * 50 + b});
      lines->lines = jitdump_agent::LineTable(std::move(table));
      methods_.push_back(std::move(lines));
    }
    loads_.resize(count);
    uint32_t seed = 12345;
    auto rnd = [&seed] {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 8) & 0xffffff;
    };
    for (size_t i = 0; i < count; ++i) {
      SyntheticLoad& l = loads_[i];
      l.code.assign(code_size, static_cast<uint8_t>(0x90 + (i & 7)));
      l.name = "com.sun.tools.javac.comp.Attr.visitMethodInvocation(com.sun.tools.javac.tree.JCTree$"
               "JCMethodInvocation) #" + std::to_string(i);
      const uint64_t start = CodeAddr(i);
      l.frames.reserve(pcdescs * 3);
      std::vector<std::pair<size_t, size_t>> spans;
      for (size_t p = 0; p < pcdescs; ++p) {
        const size_t depth = 1 + rnd() % 3;
        const size_t first = l.frames.size();
        for (size_t d = 0; d < depth; ++d) {
          l.frames.push_back({methods_[(i + d * 5 + (d == 0 ? p / 8 : 0)) % 16].get(),
                              static_cast<int64_t>(rnd() % 256)});
        }
        spans.push_back({first, depth});
      }
      for (size_t p = 0; p < pcdescs; ++p) {
        const uint64_t pc = start + (code_size * (p + 1)) / (pcdescs + 1);
        l.sites.push_back({pc, std::span<const jitdump_agent::Frame>(l.frames.data() + spans[p].first,
                                                                     spans[p].second)});
      }
      l.rows = jitdump_agent::BuildLineRows(start, start + code_size, l.sites);
      for (const auto& row : l.rows) l.entries.push_back({row.addr, row.line, 0, *row.file});
    }
  }

  // Addresses cycle through 4093 slots (a code cache being reused); 4093 is prime, so a slot is
  // never reused by the same load and the writer's duplicate check never fires.
  static uint64_t CodeAddr(size_t i) { return 0x7f0000000000ull + (i % kSlots) * 0x10000ull; }
  static constexpr size_t kSlots = 4093;
  const SyntheticLoad& operator[](size_t i) const { return loads_[i % loads_.size()]; }
  size_t size() const { return loads_.size(); }
  const jitdump_agent::MethodLines& root() const { return *methods_[0]; }

  // Load i as a callback that resolved it queues it: a named code event (nullptr when the
  // budget is full, counted by the queue).
  jitdump_agent::CodeEvent* Event(jitdump_agent::RecordQueue& queue, size_t i, uint64_t timestamp) const {
    const SyntheticLoad& l = (*this)[i];
    jitdump_agent::CodeBlob blob;
    blob.timestamp = timestamp;
    blob.tid = 2;
    blob.code_addr = CodeAddr(i);
    blob.code_size = l.code.size();
    blob.code = l.code.data();
    jitdump_agent::LoadNames names;
    names.name = l.name;
    names.perf_map_name = l.name;
    names.lines = l.entries;
    return jitdump_agent::NewNamedLoad(queue, jitdump_agent::EventKind::kCompiledLoad, blob, names);
  }

 private:
  std::vector<std::unique_ptr<jitdump_agent::MethodLines>> methods_;
  std::vector<SyntheticLoad> loads_;
};

// A fresh directory under $BENCH_TMPDIR (default /tmp), removed on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = getenv("BENCH_TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/jitdump-bench.XXXXXX";
    if (mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~ScratchDir() {
    if (!path_.empty()) (void)!system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace bench
