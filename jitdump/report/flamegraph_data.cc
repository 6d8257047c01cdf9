#include "jitdump/report/flamegraph_data.h"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitdump::report {
namespace {

// A JSON string literal (nlohmann escapes it; bytes that are not UTF-8 become U+FFFD) with '<'
// written as \u003c: inside a <script> element "</script" or "<!--" would end or bend it.
std::string ScriptSafeJson(std::string_view text) {
  // Most names are printable ASCII with nothing to escape: quoted as they are, without building a
  // JSON value (nlohmann's output for them is exactly this).
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<';
  });
  if (plain) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    out += text;
    out += '"';
    return out;
  }
  const std::string json = nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

// A JSON array of the frame table (thousands of entries, not millions: plain JSON).
class ArrayWriter {
 public:
  ArrayWriter(std::ostream& out, std::string_view key) : out_(out) { out_ << '"' << key << "\":["; }
  ~ArrayWriter() { out_ << ']'; }
  void Number(int64_t value) {
    char buffer[24];
    char* p = buffer;
    if (!first_) *p++ = ',';
    first_ = false;
    p = std::to_chars(p, buffer + sizeof buffer, value).ptr;
    out_.write(buffer, p - buffer);
  }
  void String(std::string_view text) {
    if (!first_) out_ << ',';
    first_ = false;
    out_ << ScriptSafeJson(text);
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

// A column of numbers packed into one JSON string (flamegraph_data.h), several times smaller
// than a JSON array of decimals.
class PackedWriter {
 public:
  PackedWriter(std::ostream& out, std::string_view key) : out_(out) { out_ << '"' << key << "\":\""; }
  ~PackedWriter() {
    Flush();
    out_ << '"';
  }
  void Unsigned(uint64_t value) {
    // At most 13 digits of 5 bits; the buffer always has room for them.
    while (value >= 32) {
      buffer_[size_++] = kPackAlphabet[32 + (value & 31)];
      value >>= 5;
    }
    buffer_[size_++] = kPackAlphabet[value];
    if (size_ >= sizeof buffer_ - 16) Flush();
  }
  void Signed(int64_t value) {
    Unsigned(value < 0 ? ~(static_cast<uint64_t>(value) << 1) : static_cast<uint64_t>(value) << 1);
  }

 private:
  void Flush() {
    out_.write(buffer_, static_cast<std::streamsize>(size_));
    size_ = 0;
  }
  std::ostream& out_;
  char buffer_[1 << 16];
  size_t size_ = 0;
};

const char* const kKinds[] = {"root",        "process", "thread", "compiled", "inlined",
                              "interpreted", "stub",    "native", "kernel",   "unknown"};

int KindIndex(std::string_view kind) {
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    if (kind == kKinds[i]) return static_cast<int>(i);
  }
  return static_cast<int>(std::size(kKinds)) - 1;
}

void WriteProcesses(const Profile& profile, std::ostream& out) {
  out << "\"processes\":[";
  for (size_t i = 0; i < profile.processes.size(); ++i) {
    const Process& p = profile.processes[i];
    out << (i ? "," : "") << "{\"pid\":" << p.pid << ",\"command\":" << ScriptSafeJson(p.command)
        << ",\"dump\":" << ScriptSafeJson(p.dump) << '}';
  }
  out << ']';
}

void WriteFrames(const FlameTree& tree, std::ostream& out) {
  std::vector<std::string_view> files{""};
  std::unordered_map<std::string_view, int64_t> file_ids{{"", 0}};
  std::vector<int64_t> file_of;
  file_of.reserve(tree.frames.size());
  for (const FlameFrame& frame : tree.frames) {
    const auto [it, inserted] = file_ids.try_emplace(frame.file, static_cast<int64_t>(files.size()));
    if (inserted) files.push_back(frame.file);
    file_of.push_back(it->second);
  }
  {
    ArrayWriter kinds(out, "kinds");
    for (const char* kind : kKinds) kinds.String(kind);
  }
  out << ',';
  {
    ArrayWriter names(out, "files");
    for (std::string_view file : files) names.String(file);
  }
  out << ",\"frames\":{";
  {
    ArrayWriter names(out, "name");
    for (const FlameFrame& frame : tree.frames) names.String(frame.name);
  }
  out << ',';
  {
    ArrayWriter file(out, "file");
    for (int64_t id : file_of) file.Number(id);
  }
  out << ',';
  {
    ArrayWriter kind(out, "kind");
    for (const FlameFrame& frame : tree.frames) kind.Number(KindIndex(frame.kind));
  }
  out << '}';
}

// A node's "line" entry (flamegraph_data.h): the line itself when it holds all the samples.
int64_t LineCode(const FlameTree& tree, const FlameNode& node) {
  if (node.line_count == 0) return 0;
  const FlameLine& only = tree.lines[node.first_line];
  if (node.line_count == 1 && only.samples == node.total) return only.line;
  return -static_cast<int64_t>(node.line_count);
}

void WriteNodes(const FlameTree& tree, std::ostream& out) {
  size_t more = 0;
  for (const FlameNode& node : tree.nodes) {
    if (LineCode(tree, node) < 0) more += node.line_count;
  }
  out << "\"nodes\":{\"count\":" << tree.nodes.size() << ',';
  {
    PackedWriter frame(out, "frame");
    for (const FlameNode& node : tree.nodes) frame.Unsigned(node.frame);
  }
  out << ',';
  {
    PackedWriter depth(out, "depth");
    int64_t previous = 0;
    for (const FlameNode& node : tree.nodes) {
      depth.Signed(static_cast<int64_t>(node.depth) - previous);
      previous = node.depth;
    }
  }
  out << ',';
  {
    PackedWriter total(out, "total");
    for (const FlameNode& node : tree.nodes) total.Unsigned(node.total);
  }
  out << ',';
  {
    PackedWriter line(out, "line");
    for (const FlameNode& node : tree.nodes) line.Signed(LineCode(tree, node));
  }
  out << ",\"more_count\":" << more << ',';
  {
    PackedWriter line(out, "more_line");
    for (const FlameNode& node : tree.nodes) {
      if (LineCode(tree, node) >= 0) continue;
      for (uint32_t l = 0; l < node.line_count; ++l) line.Unsigned(tree.lines[node.first_line + l].line);
    }
  }
  out << ',';
  {
    PackedWriter samples(out, "more_samples");
    for (const FlameNode& node : tree.nodes) {
      if (LineCode(tree, node) >= 0) continue;
      for (uint32_t l = 0; l < node.line_count; ++l) samples.Unsigned(tree.lines[node.first_line + l].samples);
    }
  }
  out << '}';
}

}  // namespace

void WriteFlameGraphData(const Profile& profile, const FlameTree& tree, const FlameGraphOptions& options,
                         std::ostream& out) {
  const uint64_t total = tree.nodes.empty() ? 0 : tree.nodes[0].total;
  const uint64_t duration = profile.end_ns > profile.start_ns ? profile.end_ns - profile.start_ns : 0;
  out << "{\"version\":2,\"title\":" << ScriptSafeJson(options.title) << ",\"total\":" << total
      << ",\"period_ns\":" << profile.period_ns << ",\"duration_ns\":" << duration << ',';
  WriteProcesses(profile, out);
  out << ',';
  WriteFrames(tree, out);
  out << ',';
  WriteNodes(tree, out);
  out << '}';
}

}  // namespace jitdump::report
