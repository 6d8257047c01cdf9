#include "jitdump/report/profile_json.h"

#include <nlohmann/json.hpp>

namespace jitdump::report {
namespace {

std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Writes "KEY": [ITEM, ...] with one item per line.
template <typename T, typename ToJson>
void WriteArray(std::ostream& out, const char* key, const std::vector<T>& items, ToJson to_json) {
  out << '"' << key << "\":[";
  for (size_t i = 0; i < items.size(); ++i) out << (i ? ",\n" : "\n") << Dump(to_json(items[i]));
  out << "\n]";
}

}  // namespace

void WriteProfileJson(const Profile& profile, std::ostream& out) {
  out << "{";
  WriteArray(out, "functions", profile.functions, [](const Function& f) {
    return nlohmann::json{{"name", f.name}, {"file", f.file}, {"kind", FrameKindName(f.kind)}};
  });
  out << ",\n";
  WriteArray(out, "mappings", profile.mappings, [](const Mapping& m) {
    return nlohmann::json{{"file", m.file}, {"start", m.start}, {"limit", m.limit}, {"offset", m.offset}};
  });
  out << ",\n";
  WriteArray(out, "locations", profile.locations, [](const Location& l) {
    nlohmann::json lines = nlohmann::json::array();
    for (const Line& line : l.lines) lines.push_back({{"function", line.function}, {"line", line.line}});
    return nlohmann::json{{"address", l.address}, {"mapping", l.mapping}, {"lines", std::move(lines)}};
  });
  out << ",\n";
  WriteArray(out, "samples", profile.samples, [&](const Sample& s) {
    return nlohmann::json{{"locations", s.locations}, {"process", s.process}, {"thread", profile.threads[s.thread]},
                          {"count", s.count}, {"nanos", s.nanos}};
  });
  out << ",\n";
  WriteArray(out, "processes", profile.processes, [](const Process& p) {
    return nlohmann::json{{"pid", p.pid}, {"command", p.command}, {"dump", p.dump}, {"dump_pid", p.dump_pid},
                          {"executable", p.executable}};
  });
  out << ",\n\"period_ns\":" << profile.period_ns << ",\"start_ns\":" << profile.start_ns
      << ",\"end_ns\":" << profile.end_ns << "}\n";
}

}  // namespace jitdump::report
