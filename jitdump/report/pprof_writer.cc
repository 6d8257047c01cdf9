#include "jitdump/report/pprof_writer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <deque>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jitdump/report/profile_check.h"
#include "profile.pb.h"  // generated at build time from pprof's own profile.proto

namespace jitdump::report {
namespace {

namespace pb = perftools::profiles;
using google::protobuf::io::CodedOutputStream;

// pprof refers to strings by their index in one table whose entry 0 is "". The views point into
// the Profile (or at literals), which outlives the writer.
class StringTable {
 public:
  StringTable() { Index(""); }
  int64_t Index(std::string_view text) {
    const auto [it, inserted] = ids_.try_emplace(text, static_cast<int64_t>(strings_.size()));
    if (inserted) strings_.push_back(text);
    return it->second;
  }
  const std::vector<std::string_view>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string_view, int64_t> ids_;
  std::vector<std::string_view> strings_;
};

// The profile is written as a sequence of partial pb::Profile messages, each holding a slice of
// one repeated field. Concatenated protobuf messages parse as one merged message (repeated
// fields append), so readers see a single profile while the writer never holds more than one
// slice: a recording of millions of samples is not duplicated in memory as protobuf objects.
class ChunkWriter {
 public:
  explicit ChunkWriter(CodedOutputStream& out) : out_(out) {}
  pb::Profile& chunk() { return chunk_; }
  // Writes the chunk once it holds `limit` entries (0: now) and starts a new one.
  void FlushEvery(int size, int limit) {
    if (size < limit) return;
    chunk_.SerializeToCodedStream(&out_);
    chunk_.Clear();
  }
  void Flush() { FlushEvery(0, 0); }

 private:
  CodedOutputStream& out_;
  pb::Profile chunk_;
};

constexpr int kChunkEntries = 4096;

struct MappingResolution {
  bool functions = false;
  bool filenames = false;
  bool line_numbers = false;
};

// What the locations of each mapping carry: pprof symbolizes a mapping again (from the binary
// on disk) only when none of functions, file names and line numbers is marked present.
std::vector<MappingResolution> ResolutionByMapping(const Profile& profile) {
  std::vector<MappingResolution> resolved(profile.mappings.size());
  for (const Location& location : profile.locations) {
    MappingResolution& r = resolved[location.mapping];
    for (const Line& line : location.lines) {
      r.functions = true;
      if (!profile.functions[line.function].file.empty()) r.filenames = true;
      if (line.line != 0) r.line_numbers = true;
    }
  }
  return resolved;
}

void WriteHeader(const Profile& profile, StringTable& strings, ChunkWriter& writer) {
  pb::Profile& p = writer.chunk();
  bool timed = false;
  for (const Sample& sample : profile.samples) timed = timed || sample.nanos != 0;
  auto add_type = [&](pb::ValueType* type, std::string_view name, std::string_view unit) {
    type->set_type(strings.Index(name));
    type->set_unit(strings.Index(unit));
  };
  add_type(p.add_sample_type(), "samples", "count");
  add_type(p.add_sample_type(), "cpu", "nanoseconds");
  add_type(p.mutable_period_type(), "cpu", "nanoseconds");
  p.set_period(static_cast<int64_t>(profile.period_ns));
  p.set_default_sample_type(strings.Index(timed ? "cpu" : "samples"));
  // perf's clock is not wall-clock time, so time_nanos stays unset; the span is still a duration.
  if (profile.end_ns > profile.start_ns) p.set_duration_nanos(static_cast<int64_t>(profile.end_ns - profile.start_ns));
  writer.Flush();
}

void WriteSamples(const Profile& profile, StringTable& strings, ChunkWriter& writer) {
  const int64_t thread_key = strings.Index("thread");
  const int64_t pid_key = strings.Index("pid");
  for (const Sample& sample : profile.samples) {
    pb::Sample* s = writer.chunk().add_sample();
    for (uint32_t location : sample.locations) s->add_location_id(location + 1);
    s->add_value(static_cast<int64_t>(sample.count));
    s->add_value(static_cast<int64_t>(sample.nanos));
    if (!sample.thread.empty()) {
      pb::Label* label = s->add_label();
      label->set_key(thread_key);
      label->set_str(strings.Index(sample.thread));
    }
    if (sample.process < profile.processes.size()) {
      pb::Label* label = s->add_label();
      label->set_key(pid_key);
      label->set_num(profile.processes[sample.process].pid);
    }
    writer.FlushEvery(writer.chunk().sample_size(), kChunkEntries);
  }
  writer.Flush();
}

// pprof takes its first mapping for the profiled program ("File: java" in its header), so the
// sampled JVM's executable goes first: the executable of the JVM with the most samples (of the
// process with the most samples when no process has a dump). Without one, the first mapping
// would be whatever DSO a sample met first (ld-linux-x86-64.so.2, [kernel.kallsyms]).
std::string_view MainExecutable(const Profile& profile) {
  std::vector<uint64_t> counts(profile.processes.size());
  for (const Sample& sample : profile.samples) {
    if (sample.process < counts.size()) counts[sample.process] += sample.count;
  }
  const Process* best = nullptr;
  uint64_t best_count = 0;
  for (const bool jvms_only : {true, false}) {
    for (size_t i = 0; i < profile.processes.size(); ++i) {
      const Process& p = profile.processes[i];
      if (p.executable.empty() || (jvms_only && p.dump.empty())) continue;
      if (best == nullptr || counts[i] > best_count) {
        best = &p;
        best_count = counts[i];
      }
    }
    if (best != nullptr) break;
  }
  return best == nullptr ? std::string_view() : std::string_view(best->executable);
}

// pprof's mapping ids: ids[i] for Profile::mappings[i] (0 for mapping 0, "no mapping": a
// location there has no mapping_id, as pprof expects), the main executable's id 1. `extra` is
// the executable when no location lies in it (the launcher of a JVM rarely has samples): it
// gets id 1 of its own.
struct MappingOrder {
  std::vector<uint64_t> ids;
  size_t first = 0;        // the Profile mapping written first, 0: none (or `extra`)
  std::string_view extra;  // a mapping of its own for the executable, written first
};

MappingOrder OrderMappings(const Profile& profile) {
  MappingOrder order;
  order.ids.resize(profile.mappings.size());
  const std::string_view main = MainExecutable(profile);
  for (size_t i = 1; i < profile.mappings.size() && !main.empty(); ++i) {
    if (profile.mappings[i].file == main) {
      order.first = i;
      break;
    }
  }
  if (!main.empty() && order.first == 0) order.extra = main;
  uint64_t next = order.first != 0 || !order.extra.empty() ? 2 : 1;
  for (size_t i = 1; i < profile.mappings.size(); ++i) order.ids[i] = i == order.first ? 1 : next++;
  return order;
}

void WriteMappings(const Profile& profile, const MappingOrder& order, StringTable& strings, ChunkWriter& writer) {
  const std::vector<MappingResolution> resolved = ResolutionByMapping(profile);
  if (!order.extra.empty()) {
    pb::Mapping* m = writer.chunk().add_mapping();
    m->set_id(1);
    m->set_filename(strings.Index(order.extra));
  }
  auto write = [&](size_t i) {
    const Mapping& mapping = profile.mappings[i];
    pb::Mapping* m = writer.chunk().add_mapping();
    m->set_id(order.ids[i]);
    m->set_memory_start(mapping.start);
    m->set_memory_limit(mapping.limit);
    m->set_file_offset(mapping.offset);
    m->set_filename(strings.Index(mapping.file));
    m->set_has_functions(resolved[i].functions);
    m->set_has_filenames(resolved[i].filenames);
    m->set_has_line_numbers(resolved[i].line_numbers);
    // Inline chains come from the same source as the functions (the dump's inline records).
    m->set_has_inline_frames(resolved[i].functions);
    writer.FlushEvery(writer.chunk().mapping_size(), kChunkEntries);
  };
  if (order.first != 0) write(order.first);
  for (size_t i = 1; i < profile.mappings.size(); ++i) {
    if (i != order.first) write(i);
  }
  writer.Flush();
}

void WriteLocations(const Profile& profile, const MappingOrder& order, ChunkWriter& writer) {
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const Location& location = profile.locations[i];
    pb::Location* l = writer.chunk().add_location();
    l->set_id(i + 1);
    l->set_mapping_id(order.ids[location.mapping]);
    l->set_address(location.address);
    for (const Line& line : location.lines) {
      pb::Line* pl = l->add_line();
      pl->set_function_id(line.function + 1);
      pl->set_line(line.line);
    }
    writer.FlushEvery(writer.chunk().location_size(), kChunkEntries);
  }
  writer.Flush();
}

void WriteFunctions(const Profile& profile, StringTable& strings, std::deque<std::string>& owned,
                    ChunkWriter& writer) {
  for (size_t i = 0; i < profile.functions.size(); ++i) {
    const Function& function = profile.functions[i];
    pb::Function* f = writer.chunk().add_function();
    f->set_id(i + 1);
    // system_name stays empty: pprof treats a function whose name equals its system name as
    // not yet demangled and, finding "::" or "[]" in it, cuts the parameter list off ("main"
    // for main(java.lang.String[])), merging overloads. Java names here are final.
    // An interpreted Java frame (named by the stack walk) says so: pprof shows a frame's kind
    // nowhere else, and the same method's compiled frames are a function of their own.
    if (function.kind == FrameKind::kInterpreted && !function.file.empty()) {
      owned.push_back(function.name + " [interpreted]");
      f->set_name(strings.Index(owned.back()));
    } else {
      f->set_name(strings.Index(function.name));
    }
    f->set_filename(strings.Index(function.file));
    writer.FlushEvery(writer.chunk().function_size(), kChunkEntries);
  }
  writer.Flush();
}

// One comment per process, so a reader can tell which JVMs and dumps the profile covers.
void WriteComments(const Profile& profile, StringTable& strings, std::vector<std::string>& owned,
                   ChunkWriter& writer) {
  owned.reserve(profile.processes.size());
  for (const Process& process : profile.processes) {
    owned.push_back("pid " + std::to_string(process.pid) + " " + process.command +
                    (process.dump.empty() ? std::string() : " dump " + process.dump));
    writer.chunk().add_comment(strings.Index(owned.back()));
  }
  writer.Flush();
}

// Last, once every other field has interned its strings.
void WriteStrings(const StringTable& strings, ChunkWriter& writer) {
  for (std::string_view text : strings.strings()) {
    writer.chunk().add_string_table(std::string(text));
    writer.FlushEvery(writer.chunk().string_table_size(), kChunkEntries);
  }
  writer.Flush();
}

}  // namespace

Status WritePprof(const Profile& profile, std::ostream& out) {
  if (Status checked = CheckProfile(profile); !checked.ok()) return checked;
  google::protobuf::io::OstreamOutputStream raw(&out);
  google::protobuf::io::GzipOutputStream::Options options;
  options.format = google::protobuf::io::GzipOutputStream::GZIP;
  // zlib's fastest level: 3-4x less CPU than its default for a file ~15% larger (a profile of
  // 88k samples: 1.1 -> 1.3 MB); a profile is written once and read a few times.
  options.compression_level = 1;
  google::protobuf::io::GzipOutputStream gzip(&raw, options);
  bool coded_error = false;
  {
    CodedOutputStream coded(&gzip);
    ChunkWriter writer(coded);
    StringTable strings;
    std::vector<std::string> comments;  // owns the comment texts the string table points at
    std::deque<std::string> names;      // and the names made here (stable addresses)
    WriteHeader(profile, strings, writer);
    WriteSamples(profile, strings, writer);
    const MappingOrder order = OrderMappings(profile);
    WriteMappings(profile, order, strings, writer);
    WriteLocations(profile, order, writer);
    WriteFunctions(profile, strings, names, writer);
    WriteComments(profile, strings, comments, writer);
    WriteStrings(strings, writer);
    coded.Trim();
    coded_error = coded.HadError();
  }
  if (!gzip.Close() || coded_error) return Status::Error("pprof: compressing the profile failed", 0);
  if (!out.flush()) return Status::Error("pprof: writing the profile failed", 0);
  return Status::Ok();
}

}  // namespace jitdump::report
