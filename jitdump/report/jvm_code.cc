#include "jitdump/report/jvm_code.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "jitdump/format/text.h"
#include "jitdump/read/decoder.h"
#include "jitdump/read/untrusted_file.h"
#include "jitdump/report/classify.h"

namespace jitdump::report {

namespace {

// Reads the dump at `path` within what is left of `budget`, its side records deferred while
// the budget lets files stay open: the file then stays open in *fd for DecodeDeferred (else *fd
// is -1). On failure `error` says why without a byte of the file: a file that is no jitdump is
// only called that (its first bytes could be anyone's secret, /etc/shadow's through a planted
// link if links were followed).
bool ReadDump(const std::string& path, DumpBudget* budget, JitDump* dump, int* fd, std::string* error,
              std::pair<uint64_t, uint64_t>* identity) {
  struct stat st {};
  if (const Status status = OpenUntrusted(path, fd, &st); !status.ok()) {
    *error = Printable(path) + ": " + status.ToString();
    return false;
  }
  if (identity != nullptr) *identity = {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  FileLimits limits;
  limits.defer_side_records = budget == nullptr || budget->kept_open < DumpBudget::kMaxKeptOpen;
  const bool limited = budget != nullptr && budget->limit != 0;
  if (limited) limits.memory = budget->DecoderLimit();
  uint64_t used = 0;
  const Status status = ParseFile(*fd, static_cast<uint64_t>(st.st_size), limits, dump, &used);
  if (!status.ok() || !dump->header_ok || !limits.defer_side_records) {
    ::close(*fd);
    *fd = -1;
  } else if (budget != nullptr) {
    ++budget->kept_open;
  }
  if (!status.ok()) {
    *error = Printable(path) + ": " + status.ToString();
    if (limited && std::string_view(status.operation()) == "over the memory budget") {
      *error += " (the report's dumps may take " + std::to_string(budget->limit >> 20) +
                " MiB decoded; give more with --dump-memory)";
    }
    return false;
  }
  if (!dump->header_ok) {
    *error = Printable(path) + ": not a jitdump";
    return false;
  }
  if (budget != nullptr) budget->used += used;
  return true;
}

}  // namespace

std::unique_ptr<JvmCode> JvmCode::Load(const std::string& path, DumpBudget* budget, std::string* error,
                                       std::pair<uint64_t, uint64_t>* identity) {
  JitDump dump;
  int fd = -1;
  if (!ReadDump(path, budget, &dump, &fd, error, identity)) return nullptr;
  std::unique_ptr<JvmCode> code = FromDump(path, std::move(dump), budget);
  code->dump_fd_ = fd;
  return code;
}

std::unique_ptr<JvmCode> JvmCode::FromDump(const std::string& path, JitDump dump, DumpBudget* budget) {
  std::unique_ptr<JitDump> sidecar = std::make_unique<JitDump>();
  int sidecar_fd = -1;
  std::string ignored;  // a missing or unreadable sidecar only means no inline records from it
  if (!ReadDump(path + ".inline", budget, sidecar.get(), &sidecar_fd, &ignored, nullptr)) sidecar.reset();
  std::unique_ptr<JvmCode> code(new JvmCode(path, std::move(dump), std::move(sidecar)));
  code->sidecar_fd_ = sidecar_fd;
  code->budget_ = budget;
  // The method table, read under the same budget (its decoded size is about its file size); a
  // missing or unreadable one only means interpreted frames stay anonymous.
  constexpr uint64_t kMaxTableBytes = 1ull << 30;
  uint64_t room = kMaxTableBytes;
  if (budget != nullptr && budget->limit != 0) room = budget->Left();
  auto table = std::make_unique<MethodTable>();
  if (LoadMethodTable(MethodTablePathFor(path), room, table.get(), &ignored) && table->header_ok) {
    if (budget != nullptr) budget->used += 2 * table->methods.size() * sizeof(TableMethod);
    code->methods_ = std::move(table);
  }
  return code;
}

JvmCode::JvmCode(std::string path, JitDump dump, std::unique_ptr<JitDump> sidecar)
    : path_(std::move(path)),
      dump_(std::move(dump)),
      sidecar_dump_(std::move(sidecar)),
      sidecar_(sidecar_dump_.get()),
      timeline_(dump_) {
  bool first = true;
  for (size_t i = 0; i < dump_.records.size(); ++i) {
    const LoadBody* load = dump_.records[i].load();
    if (load == nullptr) continue;
    by_code_index_[load->code_index] = i;
    if (load->code_size == 0) continue;
    const uint64_t end = load->code_addr + std::min(load->code_size, UINT64_MAX - load->code_addr);
    low_ = first ? load->code_addr : std::min(low_, load->code_addr);
    high_ = first ? end : std::max(high_, end);
    first = false;
  }
}

JvmCode::~JvmCode() {
  if (dump_fd_ >= 0) ::close(dump_fd_);
  if (sidecar_fd_ >= 0) ::close(sidecar_fd_);
}

void JvmCode::Decode(JitDump& dump, int fd, int64_t index) {
  if (index < 0 || fd < 0 || !dump.records[static_cast<size_t>(index)].deferred) return;
  const uint64_t room = budget_ != nullptr ? budget_->DecoderLimit() : 0;
  uint64_t used = 0;
  if (DecodeDeferred(fd, &dump, static_cast<size_t>(index), room, &used).ok()) {
    if (budget_ != nullptr) budget_->used += used;
  } else {
    ++undecoded_;
  }
}

void JvmCode::DecodeSideRecords(JitDump& dump, int fd, size_t load_index) {
  const LoadBody* load = dump.records[load_index].load();
  if (load == nullptr) return;
  Decode(dump, fd, load->inline_info);
  // FindLine takes the lines of a valid inline record that has some; only without them does it
  // read DEBUG_INFO (which a dump with inline records mostly never needs: most of its size).
  if (load->inline_info >= 0) {
    const Record& inline_record = dump.records[static_cast<size_t>(load->inline_info)];
    const InlineBody* info = inline_record.inline_info();
    if (inline_record.valid && info != nullptr && !info->lines.empty()) return;
  }
  Decode(dump, fd, load->debug_info);
}

int64_t JvmCode::LoadOfJittedElf(uint64_t code_index, uint64_t* addr) const {
  constexpr uint64_t kTextOffset = 0x80;
  const auto it = by_code_index_.find(code_index);
  if (it == by_code_index_.end()) return -1;
  const LoadBody& load = *dump_.records[it->second].load();
  if (*addr >= load.code_addr && *addr - load.code_addr < load.code_size) return static_cast<int64_t>(it->second);
  if (*addr < kTextOffset || *addr - kTextOffset >= load.code_size) return -1;
  *addr = load.code_addr + (*addr - kTextOffset);
  return static_cast<int64_t>(it->second);
}

int64_t JvmCode::SidecarCopy(size_t record) const {
  if (sidecar_.sidecar() == nullptr) return -1;
  if (sidecar_copies_.empty()) sidecar_copies_.assign(dump_.records.size(), kNotMatched);
  int64_t& copy = sidecar_copies_[record];
  if (copy == kNotMatched) copy = sidecar_.Match(dump_, record);
  return copy;
}

bool JvmCode::HasInlineRecord(size_t record) const {
  const LoadBody* load = dump_.records[record].load();
  return load != nullptr && (load->inline_info >= 0 || SidecarCopy(record) >= 0);
}

const std::vector<JitLine>& JvmCode::Chain(size_t record, uint64_t addr) {
  std::vector<JitLine>& out = lines_scratch_;
  out.clear();
  const LoadBody* load = dump_.records[record].load();
  if (load == nullptr) return out;
  const FrameKind kind = LoadKind(*load);
  if (kind != FrameKind::kCompiled) {
    out.push_back(JitLine{load->name, false, "", 0, kind});
    return out;
  }
  // The chain as views into the dumps, from the load's own inline record or its copy's in the
  // sidecar, decoded on their first use.
  std::vector<InlineFrameView>& chain = chain_scratch_;
  const int64_t copy = load->inline_info < 0 ? SidecarCopy(record) : -1;
  if (copy >= 0) {
    DecodeSideRecords(*sidecar_dump_, sidecar_fd_, static_cast<size_t>(copy));
    InlineChain(*sidecar_dump_, static_cast<size_t>(copy), addr, &chain);
  } else {
    DecodeSideRecords(dump_, dump_fd_, record);
    InlineChain(dump_, record, addr, &chain);
  }
  if (!chain.empty()) {
    for (size_t k = 0; k < chain.size(); ++k) {
      out.push_back(JitLine{chain[k].function, true, chain[k].file, chain[k].line,
                            k + 1 == chain.size() ? FrameKind::kCompiled : FrameKind::kInlined});
    }
    return out;
  }
  // No inline record (the agent's inline=off): DEBUG_INFO names the innermost frame's file and
  // line but not its method, so the line goes to the compiled method with that file.
  JitLine line{load->name, true, "", 0, FrameKind::kCompiled};
  if (copy >= 0) DecodeSideRecords(dump_, dump_fd_, record);
  std::string_view file;
  if (FindLine(dump_, record, addr, &file, &line.line)) line.file = file;
  out.push_back(line);
  return out;
}

}  // namespace jitdump::report
