// `jitdump perfdata PERF.DATA`: a perf recording read without perf (jitdump/perfdata/): its
// header, events, features, record counts and damage; with --records every record in time
// order. What scripts and tests read instead of parsing perf.data again; the JSON members are
// a contract: add, never rename or drop.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "jitdump/perfdata/address_spaces.h"
#include "jitdump/perfdata/format.h"
#include "jitdump/perfdata/reader.h"
#include "jitdump/tool/command.h"
#include "jitdump/tool/json_output.h"
#include "jitdump/unwind/dwarf_unwinder.h"

namespace jitdump::tool {
namespace {

namespace pd = jitdump::perfdata;

constexpr char kUsage[] =
    "usage: jitdump perfdata [--json] [--records] [--no-samples] PERF.DATA\n"
    "Reads a perf recording without perf: a perf.data file, what `perf inject` writes, a\n"
    "`perf record -z` recording, or a stream (`perf record -o - ... | jitdump perfdata -`; PERF.DATA\n"
    "'-' is standard input). Prints the header (mode, byte order), every event (name, type, config,\n"
    "sample_type, read_format, clock, ids), the features (hostname, os release, perf version, arch,\n"
    "cpus, cmdline, clock data, build ids, compression), the records by type, and what was damaged,\n"
    "with the byte offset.\n"
    "  --records      also every record in time order, one JSON object per line before the summary\n"
    "                 (which comes last); samples with their call chain, registers and stack size\n"
    "  --no-samples   leave samples out of --records (the side-band records only; faster)\n"
    "  --unwind       with --records: each --call-graph dwarf sample's user frames, unwound from its\n"
    "                 registers and stack bytes (\"unwound\": pcs, callers one byte before their\n"
    "                 return address)\n"
    "exit status: 0 read to the end, 1 damaged (everything before the damage was read), 2 unreadable\n";

constexpr OptionSpec kOptions[] = {{"--records", ""}, {"--no-samples", ""}, {"--unwind", ""}};

std::string HexString(std::span<const uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  }
  return out;
}

std::string SampleTypeText(uint64_t type) {
  static const char* const kNames[] = {"IP",          "TID",        "TIME",         "ADDR",          "READ",
                                       "CALLCHAIN",   "ID",         "CPU",          "PERIOD",        "STREAM_ID",
                                       "RAW",         "BRANCH_STACK", "REGS_USER",  "STACK_USER",    "WEIGHT",
                                       "DATA_SRC",    "IDENTIFIER", "TRANSACTION",  "REGS_INTR",     "PHYS_ADDR",
                                       "AUX",         "CGROUP",     "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT"};
  std::string out;
  for (size_t bit = 0; bit < 64; ++bit) {
    if (!(type >> bit & 1)) continue;
    if (!out.empty()) out += '|';
    out += bit < std::size(kNames) ? kNames[bit] : "bit" + std::to_string(bit);
  }
  return out;
}

// A process or thread id as the kernel means it and perf prints it: a pid_t, where -1 is a task
// the kernel could no longer name (a sample taken while the task exits).
int32_t PidT(uint32_t id) { return static_cast<int32_t>(id); }

Json SampleIdJson(const pd::SampleId& id) {
  Json out = Json::object();
  if (id.has_tid()) {
    out["pid"] = PidT(id.pid);
    out["tid"] = PidT(id.tid);
  }
  if (id.has_time()) out["time"] = id.time;
  if (id.fields & pd::kSampleCpu) out["cpu"] = id.cpu;
  return out;
}

// Prints records as JSON lines (or text) and counts them by type.
class Printer : public pd::RecordSink {
 public:
  Printer(const pd::PerfDataReader& reader, bool print, bool json, bool unwind)
      : reader_(reader), print_(print), json_(json), unwind_(unwind), unwinder_(spaces_, reader.recording()) {}

  std::map<std::string, uint64_t> counts;

  void OnSample(const pd::Sample& s) override {
    ++counts["SAMPLE"];
    if (!print_) return;
    Json j = {{"type", "SAMPLE"}, {"event", reader_.recording().events[s.event].name}};
    if (s.has(pd::kSampleTid)) {
      j["pid"] = PidT(s.pid);
      j["tid"] = PidT(s.tid);
    }
    if (s.has(pd::kSampleTime)) j["time"] = s.time;
    if (s.has(pd::kSampleCpu)) j["cpu"] = s.cpu;
    j["cpumode"] = s.cpumode();
    if (s.has(pd::kSampleIp)) j["ip"] = s.ip;
    j["period"] = s.period;
    if (s.has(pd::kSampleAddr)) j["addr"] = s.addr;
    if (s.has(pd::kSampleCallchain)) {
      Json chain = Json::array();
      for (size_t i = 0; i < s.callchain.size(); ++i) chain.push_back(s.callchain[i]);
      j["callchain"] = std::move(chain);
    }
    if (s.has(pd::kSampleRegsUser)) {
      Json regs = Json::array();
      for (size_t i = 0; i < s.regs_user.values.size(); ++i) regs.push_back(s.regs_user.values[i]);
      j["regs_user"] = {{"abi", s.regs_user.abi}, {"mask", s.regs_user.mask}, {"values", std::move(regs)}};
    }
    if (s.has(pd::kSampleStackUser)) {
      j["stack_user"] = {{"size", s.stack_user.data.size()}, {"dyn_size", s.stack_user.dyn_size}};
    }
    if (unwind_ && unwinder_.CanUnwind(s)) {
      std::vector<uint64_t> pcs;
      unwinder_.Unwind(s, &pcs);
      j["unwound"] = pcs;
    }
    if (s.has(pd::kSampleBranchStack)) j["branch_stack"] = s.branch_stack.nr;
    if (s.has(pd::kSampleRaw)) j["raw_size"] = s.raw.size();
    if (s.has(pd::kSampleWeight | pd::kSampleWeightStruct)) j["weight"] = s.weight;
    if (s.has(pd::kSampleDataSrc)) j["data_src"] = s.data_src;
    if (s.has(pd::kSamplePhysAddr)) j["phys_addr"] = s.phys_addr;
    Emit(std::move(j));
  }
  void OnMmap(const pd::Mmap& m) override {
    spaces_.OnMmap(m);
    ++counts[m.mmap2 ? "MMAP2" : "MMAP"];
    if (!print_) return;
    Json j = {{"type", m.mmap2 ? "MMAP2" : "MMAP"},
              {"pid", PidT(m.pid)},
              {"tid", PidT(m.tid)},
              {"start", m.start},
              {"len", m.len},
              {"pgoff", m.pgoff},
              {"prot", m.prot},
              {"cpumode", m.cpumode()},
              {"filename", std::string(m.filename)}};
    if (!m.build_id.empty()) j["build_id"] = HexString(m.build_id);
    j["sample_id"] = SampleIdJson(m.sample_id);
    Emit(std::move(j));
  }
  void OnComm(const pd::Comm& c) override {
    spaces_.OnComm(c);
    ++counts["COMM"];
    if (!print_) return;
    Emit({{"type", "COMM"},
          {"pid", PidT(c.pid)},
          {"tid", PidT(c.tid)},
          {"exec", c.exec},
          {"comm", std::string(c.comm)},
          {"sample_id", SampleIdJson(c.sample_id)}});
  }
  void OnTask(const pd::Task& t) override {
    spaces_.OnTask(t);
    ++counts[t.fork ? "FORK" : "EXIT"];
    if (!print_) return;
    Emit({{"type", t.fork ? "FORK" : "EXIT"},
          {"pid", PidT(t.pid)},
          {"ppid", PidT(t.ppid)},
          {"tid", PidT(t.tid)},
          {"ptid", PidT(t.ptid)},
          {"time", t.time},
          {"sample_id", SampleIdJson(t.sample_id)}});
  }
  void OnLost(const pd::Lost& l) override {
    ++counts[l.samples ? "LOST_SAMPLES" : "LOST"];
    if (!print_) return;
    Emit({{"type", l.samples ? "LOST_SAMPLES" : "LOST"}, {"lost", l.lost}, {"sample_id", SampleIdJson(l.sample_id)}});
  }
  void OnThrottle(const pd::Throttle& t) override {
    ++counts[t.unthrottle ? "UNTHROTTLE" : "THROTTLE"];
    if (!print_) return;
    Emit({{"type", t.unthrottle ? "UNTHROTTLE" : "THROTTLE"}, {"time", t.time}, {"id", t.id}});
  }
  void OnOther(const pd::RawRecord& r) override { ++counts["type " + std::to_string(r.header.type)]; }

 private:
  void Emit(Json j) {
    if (json_) {
      std::fputs(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str(), stdout);
      std::fputc('\n', stdout);
    } else {
      std::printf("%s\n", Shown(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).c_str());
    }
  }

  const pd::PerfDataReader& reader_;
  bool print_;
  bool json_;
  bool unwind_;
  pd::AddressSpaces spaces_;
  unwind::DwarfUnwinder unwinder_;
};

Json EventJson(const pd::Event& e) {
  Json ids = Json::array();
  for (size_t i = 0; i < e.ids.size() && i < 64; ++i) ids.push_back(e.ids[i]);
  return {{"name", e.name},
          {"type", e.attr.type},
          {"config", e.attr.config},
          {"sample_type", SampleTypeText(e.attr.sample_type)},
          {"read_format", e.attr.read_format},
          {"freq", e.attr.freq()},
          {"sample_period", e.attr.sample_period},
          {"sample_id_all", e.attr.sample_id_all()},
          {"use_clockid", e.attr.use_clockid()},
          {"clockid", e.attr.clockid},
          {"sample_regs_user", e.attr.sample_regs_user},
          {"sample_stack_user", e.attr.sample_stack_user},
          {"ids", e.ids.size()},
          {"first_ids", std::move(ids)}};
}

Json FeaturesJson(const pd::Features& f) {
  Json present = Json::array();
  for (size_t i = 0; i < f.present.size(); ++i) {
    if (f.present[i]) present.push_back(i);
  }
  Json build_ids = Json::array();
  for (const pd::BuildIdEntry& b : f.build_ids) {
    build_ids.push_back({{"pid", b.pid}, {"kernel", b.cpumode == pd::kCpumodeKernel}, {"build_id", HexString(b.id)},
                         {"filename", b.filename}});
  }
  Json out = {{"present", std::move(present)}, {"hostname", f.hostname}, {"os_release", f.os_release},
              {"perf_version", f.version},     {"arch", f.arch},         {"nr_cpus_online", f.nr_cpus_online},
              {"cmdline", f.cmdline},           {"build_ids", std::move(build_ids)}};
  if (f.clock_resolution_ns) out["clock_resolution_ns"] = *f.clock_resolution_ns;
  if (f.clock_data) {
    out["clock_data"] = {{"clockid", f.clock_data->clockid},
                         {"wall_clock_ns", f.clock_data->wall_clock_ns},
                         {"clockid_time_ns", f.clock_data->clockid_time_ns}};
  }
  if (f.first_sample_time) out["sample_time"] = {*f.first_sample_time, *f.last_sample_time};
  if (f.compression) {
    out["compression"] = {{"type", f.compression->type}, {"level", f.compression->level},
                          {"ratio", f.compression->ratio}, {"mmap_len", f.compression->mmap_len}};
  }
  return out;
}

int RunPerfData(const Invocation& in) {
  const std::string& path = in.operands[0];
  std::string error;
  std::unique_ptr<pd::PerfDataReader> reader = pd::PerfDataReader::Open(path, &error);
  if (!reader) {
    std::fprintf(stderr, "jitdump: %s\n", Shown(error).c_str());
    return kExitUsage;
  }
  const bool records = in.Flag("--records");
  Printer printer(*reader, records, in.json, in.Flag("--unwind"));
  pd::ReadOptions options;
  options.samples = !in.Flag("--no-samples");
  options.other_records = true;
  reader->Read(printer, options);
  const pd::Recording& rec = reader->recording();
  const pd::ReadStats& st = reader->stats();
  Json events = Json::array();
  for (const pd::Event& e : rec.events) events.push_back(EventJson(e));
  Json counts = Json::object();
  for (const auto& [type, n] : printer.counts) counts[type] = n;
  const std::vector<std::string> warnings = reader->warnings();
  Json summary = {{"file", path},
                  {"mode", rec.pipe ? "pipe" : "file"},
                  {"cross_endian", rec.swap},
                  {"size", rec.file_size},
                  {"data_offset", rec.data_offset},
                  {"data_size", rec.data_size},
                  {"events", std::move(events)},
                  {"features", FeaturesJson(rec.features)},
                  {"counts", std::move(counts)},
                  {"stats",
                   {{"records", st.records},
                    {"samples", st.samples},
                    {"bad_records", st.bad_records},
                    {"unknown_id", st.unknown_id},
                    {"rounds", st.rounds},
                    {"compressed", st.compressed},
                    {"decompressed_bytes", st.decompressed_bytes},
                    {"lost", st.lost},
                    {"lost_samples", st.lost_samples},
                    {"throttled", st.throttled},
                    {"out_of_order", st.out_of_order},
                    {"sort_overflows", st.sort_overflows}}},
                  {"truncated", st.truncated},
                  {"warnings", warnings}};
  if (in.json) {
    PrintJson(std::move(summary));
  } else {
    std::printf("%s: %s mode%s, %zu event%s, %" PRIu64 " records (%" PRIu64 " samples)\n", Shown(path).c_str(),
                rec.pipe ? "pipe" : "file", rec.swap ? ", other byte order" : "", rec.events.size(),
                rec.events.size() == 1 ? "" : "s", st.records, st.samples);
    for (const pd::Event& e : rec.events) {
      std::printf("  event %s: type %u config %" PRIu64 " sample_type %s%s\n", Shown(e.name).c_str(), e.attr.type,
                  e.attr.config, SampleTypeText(e.attr.sample_type).c_str(),
                  e.attr.use_clockid() ? (" clockid " + std::to_string(e.attr.clockid)).c_str() : "");
    }
    const pd::Features& f = rec.features;
    if (!f.hostname.empty()) std::printf("  host %s, %s %s\n", Shown(f.hostname).c_str(), Shown(f.os_release).c_str(),
                                         Shown(f.arch).c_str());
    if (!f.version.empty()) std::printf("  perf %s\n", Shown(f.version).c_str());
    if (!f.cmdline.empty()) {
      std::string cmd;
      for (const std::string& a : f.cmdline) cmd += (cmd.empty() ? "" : " ") + a;
      std::printf("  cmdline %s\n", Shown(cmd).c_str());
    }
    if (!f.build_ids.empty()) std::printf("  %zu build ids\n", f.build_ids.size());
    if (f.compression) std::printf("  compressed (zstd level %u)\n", f.compression->level);
    for (const auto& [type, n] : printer.counts) std::printf("  %-14s %" PRIu64 "\n", type.c_str(), n);
  }
  for (const std::string& w : warnings) std::fprintf(stderr, "jitdump: %s: warning: %s\n", Shown(path).c_str(), Shown(w).c_str());
  return st.truncated ? kExitInvalid : kExitOk;
}

}  // namespace

extern const Command kPerfDataCommand{
    .name = "perfdata",
    .synopsis = "perfdata PERF.DATA",
    .summary = "a perf recording read without perf: events, features, records, damage",
    .usage = kUsage,
    .json = JsonMode::kOptional,
    .min_operands = 1,
    .max_operands = 1,
    .operands = "exactly one PERF.DATA",
    .options = kOptions,
    .run = RunPerfData,
};

}  // namespace jitdump::tool
