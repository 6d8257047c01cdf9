// Writes perf.data files for the reader's tests, byte by byte from the kernel's and perf's
// layouts (perf_event.h, perf.data-file-format.txt), in either byte order, file or stream
// format: the shapes real perf writes and the damaged ones it never does.
#pragma once

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "jitdump/perfdata/attr.h"
#include "jitdump/perfdata/format.h"

namespace jitdump::perfdata::testing {

// Appends fields in one byte order.
class Bytes {
 public:
  explicit Bytes(bool big_endian = false) : big_(big_endian) {}
  std::vector<uint8_t> data;

  Bytes& U8(uint8_t v) {
    data.push_back(v);
    return *this;
  }
  Bytes& U16(uint16_t v) { return Put(v, 2); }
  Bytes& U32(uint32_t v) { return Put(v, 4); }
  Bytes& U64(uint64_t v) { return Put(v, 8); }
  Bytes& Raw(const std::vector<uint8_t>& bytes) {
    data.insert(data.end(), bytes.begin(), bytes.end());
    return *this;
  }
  // A NUL-terminated string padded to a multiple of 8 bytes (records' file names and comms).
  Bytes& PaddedString(const std::string& s) {
    data.insert(data.end(), s.begin(), s.end());
    data.push_back(0);
    while (data.size() % 8 != 0) data.push_back(0);
    return *this;
  }
  // perf_header_string: u32 length (NUL included, padded to 8), then the string.
  Bytes& HeaderString(const std::string& s) {
    const uint32_t len = static_cast<uint32_t>((s.size() + 1 + 7) / 8 * 8);
    U32(len);
    data.insert(data.end(), s.begin(), s.end());
    data.resize(data.size() + (len - s.size()), 0);
    return *this;
  }
  size_t size() const { return data.size(); }
  bool big() const { return big_; }

 private:
  Bytes& Put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) data.push_back(static_cast<uint8_t>(v >> (8 * (big_ ? n - 1 - i : i))));
    return *this;
  }
  bool big_;
};

// What a SAMPLE holds; the builder writes the fields its event's sample_type asks for.
struct SampleFields {
  uint64_t ip = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint64_t addr = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  uint64_t period = 1;
  std::vector<uint64_t> read;  // the words of the read_format, as they go
  std::vector<uint64_t> callchain;
  std::vector<uint8_t> raw;
  std::vector<uint64_t> branches;  // 3 words per entry
  uint64_t hw_index = 0;
  uint64_t regs_abi = 2;
  std::vector<uint64_t> regs_user;
  std::vector<uint8_t> stack;
  uint64_t stack_dyn_size = 0;
  uint64_t weight = 0;
  uint64_t data_src = 0;
  uint64_t transaction = 0;
  std::vector<uint64_t> regs_intr;
  uint64_t phys_addr = 0, cgroup = 0, data_page_size = 0, code_page_size = 0;
  std::vector<uint8_t> aux;
  uint16_t misc = kCpumodeUser;
};

// The sample_id trailer's fields for side-band records.
struct IdFields {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;
  uint32_t cpu = 0;
};

class PerfDataBuilder {
 public:
  explicit PerfDataBuilder(bool big_endian = false) : big_(big_endian) {}

  // An event with sample_type, sample_id_all and its ids; returns its index.
  size_t AddEvent(uint64_t sample_type, std::vector<uint64_t> ids = {}, std::string name = "",
                  uint64_t read_format = 0, uint64_t regs_user = 0, uint32_t type = kTypeSoftware, uint64_t config = 0,
                  bool sample_id_all = true, uint64_t branch_sample_type = 0, uint64_t regs_intr = 0) {
    EventSpec e;
    e.sample_type = sample_type;
    e.ids = std::move(ids);
    e.name = std::move(name);
    e.read_format = read_format;
    e.regs_user = regs_user;
    e.regs_intr = regs_intr;
    e.type = type;
    e.config = config;
    e.sample_id_all = sample_id_all;
    e.branch_sample_type = branch_sample_type;
    events_.push_back(std::move(e));
    return events_.size() - 1;
  }

  // The record bytes of a sample of `event`.
  std::vector<uint8_t> SampleRecord(size_t event, const SampleFields& f) const {
    const EventSpec& e = events_[event];
    const uint64_t t = e.sample_type;
    Bytes b(big_);
    const uint64_t id = e.ids.empty() ? 0 : e.ids[0];
    if (t & kSampleIdentifier) b.U64(id);
    if (t & kSampleIp) b.U64(f.ip);
    if (t & kSampleTid) b.U32(f.pid).U32(f.tid);
    if (t & kSampleTime) b.U64(f.time);
    if (t & kSampleAddr) b.U64(f.addr);
    if (t & kSampleId) b.U64(id);
    if (t & kSampleStreamId) b.U64(f.stream_id);
    if (t & kSampleCpu) b.U32(f.cpu).U32(0);
    if (t & kSamplePeriod) b.U64(f.period);
    if (t & kSampleRead) {
      for (uint64_t w : f.read) b.U64(w);
    }
    if (t & kSampleCallchain) {
      b.U64(f.callchain.size());
      for (uint64_t ip : f.callchain) b.U64(ip);
    }
    if (t & kSampleRaw) {
      b.U32(static_cast<uint32_t>(f.raw.size())).Raw(f.raw);
    }
    if (t & kSampleBranchStack) {
      b.U64(f.branches.size() / 3);
      if (e.branch_sample_type & kBranchHwIndex) b.U64(f.hw_index);
      for (uint64_t w : f.branches) b.U64(w);
    }
    if (t & kSampleRegsUser) {
      b.U64(f.regs_abi);
      if (f.regs_abi) {
        for (uint64_t r : f.regs_user) b.U64(r);
      }
    }
    if (t & kSampleStackUser) {
      b.U64(f.stack.size());
      if (!f.stack.empty()) b.Raw(f.stack).U64(f.stack_dyn_size);
    }
    if (t & (kSampleWeight | kSampleWeightStruct)) b.U64(f.weight);
    if (t & kSampleDataSrc) b.U64(f.data_src);
    if (t & kSampleTransaction) b.U64(f.transaction);
    if (t & kSampleRegsIntr) {
      b.U64(f.regs_abi);
      if (f.regs_abi) {
        for (uint64_t r : f.regs_intr) b.U64(r);
      }
    }
    if (t & kSamplePhysAddr) b.U64(f.phys_addr);
    if (t & kSampleCgroup) b.U64(f.cgroup);
    if (t & kSampleDataPageSize) b.U64(f.data_page_size);
    if (t & kSampleCodePageSize) b.U64(f.code_page_size);
    if (t & kSampleAux) b.U64(f.aux.size()).Raw(f.aux);
    return Wrap(kRecordSample, f.misc, b.data);
  }

  void Sample(size_t event, const SampleFields& f) { Append(SampleRecord(event, f)); }

  std::vector<uint8_t> Mmap2Record(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const std::string& name,
                                   IdFields id, uint32_t prot = 5, uint16_t misc = kCpumodeUser,
                                   const std::vector<uint8_t>& build_id = {}) const {
    Bytes b(big_);
    b.U32(pid).U32(id.tid ? id.tid : pid).U64(start).U64(len).U64(pgoff);
    if (!build_id.empty()) {
      misc |= kMiscMmapBuildId;
      b.U8(static_cast<uint8_t>(build_id.size())).U8(0).U16(0);
      std::vector<uint8_t> padded = build_id;
      padded.resize(20, 0);
      b.Raw(padded);
    } else {
      b.U32(8).U32(1).U64(1234).U64(0);
    }
    b.U32(prot).U32(2 /* MAP_PRIVATE */).PaddedString(name);
    Trailer(b, id);
    return Wrap(kRecordMmap2, misc, b.data);
  }
  void Mmap2(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const std::string& name, IdFields id,
             uint32_t prot = 5) {
    Append(Mmap2Record(pid, start, len, pgoff, name, id, prot));
  }
  void Mmap(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const std::string& name, IdFields id,
            uint16_t misc = kCpumodeUser) {
    Bytes b(big_);
    b.U32(pid).U32(pid).U64(start).U64(len).U64(pgoff).PaddedString(name);
    Trailer(b, id);
    Append(Wrap(kRecordMmap, misc, b.data));
  }
  void Comm(uint32_t pid, uint32_t tid, const std::string& comm, bool exec, IdFields id) {
    Bytes b(big_);
    b.U32(pid).U32(tid).PaddedString(comm);
    Trailer(b, id);
    Append(Wrap(kRecordComm, exec ? kMiscCommExec : 0, b.data));
  }
  void Task(bool fork, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid, IdFields id) {
    Bytes b(big_);
    b.U32(pid).U32(ppid).U32(tid).U32(ptid).U64(id.time);
    Trailer(b, id);
    Append(Wrap(fork ? kRecordFork : kRecordExit, 0, b.data));
  }
  void Lost(uint64_t lost, IdFields id) {
    Bytes b(big_);
    b.U64(events_.empty() || events_[0].ids.empty() ? 0 : events_[0].ids[0]).U64(lost);
    Trailer(b, id);
    Append(Wrap(kRecordLost, 0, b.data));
  }
  void FinishedRound() { Append(Wrap(kRecordFinishedRound, 0, {})); }
  void Raw(std::vector<uint8_t> record) { Append(std::move(record)); }

  // The records added from `first` on (indexes into records()) become one zstd stream cut into
  // COMPRESSED (or COMPRESSED2) records of at most `chunk` compressed bytes each.
  void CompressFrom(size_t first, bool v2 = false, size_t chunk = 200) {
    std::vector<uint8_t> plain;
    for (size_t i = first; i < records_.size(); ++i) plain.insert(plain.end(), records_[i].begin(), records_[i].end());
    records_.resize(first);
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    std::vector<uint8_t> out(ZSTD_compressBound(plain.size()) + 64);
    const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), plain.data(), plain.size());
    ZSTD_freeCCtx(cctx);
    out.resize(n);
    for (size_t pos = 0; pos < out.size(); pos += chunk) {
      const std::vector<uint8_t> piece(out.begin() + static_cast<std::ptrdiff_t>(pos),
                                       out.begin() + static_cast<std::ptrdiff_t>(std::min(out.size(), pos + chunk)));
      if (v2) {
        Bytes b(big_);
        b.U64(piece.size()).Raw(piece);
        while (b.size() % 8 != 0) b.U8(0);
        Append(Wrap(kRecordCompressed2, 0, b.data));
      } else {
        Append(Wrap(kRecordCompressed, 0, piece));
      }
    }
    compressed_ = true;
  }

  void SetFeature(uint32_t feature, std::vector<uint8_t> bytes) { features_[feature] = std::move(bytes); }
  void SetString(uint32_t feature, const std::string& s) {
    Bytes b(big_);
    b.HeaderString(s);
    SetFeature(feature, b.data);
  }
  const std::vector<std::vector<uint8_t>>& records() const { return records_; }

  std::vector<uint8_t> AttrBytes(size_t event) const {
    const EventSpec& e = events_[event];
    Bytes b(big_);
    b.U32(e.type).U32(attr_size_).U64(e.config).U64(4000).U64(e.sample_type).U64(e.read_format);
    uint64_t flags = (e.sample_id_all ? 1ull << 18 : 0) | 1ull << 25 /* use_clockid */ | 1ull << 23 /* mmap2 */;
    if (big_) {
      // A big-endian compiler fills each byte's bitfields from its top bit (perf's swap_bitfield).
      for (int i = 0; i < 8; ++i) {
        uint8_t byte = static_cast<uint8_t>(flags >> (8 * i)), rev = 0;
        for (int bit = 0; bit < 8; ++bit) rev |= static_cast<uint8_t>((byte >> bit & 1) << (7 - bit));
        b.U8(rev);
      }
    } else {
      b.U64(flags);
    }
    b.U32(0).U32(0).U64(0).U64(0).U64(e.branch_sample_type).U64(e.regs_user).U32(8192).U32(1 /* MONOTONIC */);
    b.U64(e.regs_intr).U32(0).U16(0).U16(0).U32(0).U32(0);
    b.data.resize(attr_size_, 0);  // an older perf's shorter attr, or a newer one's longer
    return b.data;
  }

  // The perf_event_attr size to write (PERF_ATTR_SIZE_VER0 64 ... VER6 120, perf 6.1's).
  void SetAttrSize(uint32_t size) { attr_size_ = size; }
  uint32_t attr_size() const { return attr_size_; }

  // The whole data section, as records.
  std::vector<uint8_t> Data() const {
    std::vector<uint8_t> out;
    for (const auto& r : records_) out.insert(out.end(), r.begin(), r.end());
    return out;
  }

  // perf.data in file format: header, attrs with their ids, data, feature sections.
  std::vector<uint8_t> File(bool zero_data_size = false) const {
    Bytes b(big_);
    const uint64_t attr_entry = attr_size_ + 16;
    const uint64_t attrs_offset = kHeaderSize;
    const uint64_t ids_offset = attrs_offset + attr_entry * events_.size();
    uint64_t ids_bytes = 0;
    for (const EventSpec& e : events_) ids_bytes += 8 * e.ids.size();
    const uint64_t data_offset = ids_offset + ids_bytes;
    const std::vector<uint8_t> data = Data();
    std::map<uint32_t, std::vector<uint8_t>> features = features_;
    if (HasNames()) features[kFeatEventDesc] = EventDesc();
    if (compressed_ && !features.count(kFeatCompressed)) {
      Bytes z(big_);
      z.U32(1).U32(1).U32(1).U32(8).U32(528384);
      features[kFeatCompressed] = z.data;
    }
    // Header.
    b.data.insert(b.data.end(), {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2'});
    if (big_) std::reverse(b.data.end() - 8, b.data.end());
    b.U64(kHeaderSize).U64(attr_entry).U64(attrs_offset).U64(attr_entry * events_.size());
    b.U64(data_offset).U64(zero_data_size ? 0 : data.size()).U64(0).U64(0);
    uint64_t bitmap[4] = {0, 0, 0, 0};
    for (const auto& [id, bytes] : features) bitmap[id / 64] |= 1ull << (id % 64);
    for (uint64_t w : bitmap) b.U64(w);
    // Attrs and their id sections.
    uint64_t next_ids = ids_offset;
    for (size_t i = 0; i < events_.size(); ++i) {
      b.Raw(AttrBytes(i)).U64(next_ids).U64(8 * events_[i].ids.size());
      next_ids += 8 * events_[i].ids.size();
    }
    for (const EventSpec& e : events_) {
      for (uint64_t id : e.ids) b.U64(id);
    }
    b.Raw(data);
    // Feature table, then the sections.
    uint64_t section = b.size() + 16 * features.size();
    for (const auto& [id, bytes] : features) {
      b.U64(section).U64(bytes.size());
      section += bytes.size();
    }
    for (const auto& [id, bytes] : features) b.Raw(bytes);
    return b.data;
  }

  // The stream format: a 16-byte header, HEADER_ATTR records, EVENT_UPDATE names, the features
  // as HEADER_FEATURE records, then the data.
  std::vector<uint8_t> Pipe() const {
    Bytes b(big_);
    b.data.insert(b.data.end(), {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2'});
    if (big_) std::reverse(b.data.end() - 8, b.data.end());
    b.U64(16);
    for (size_t i = 0; i < events_.size(); ++i) {
      Bytes body(big_);
      body.Raw(AttrBytes(i));
      for (uint64_t id : events_[i].ids) body.U64(id);
      b.Raw(Wrap(kRecordHeaderAttr, 0, body.data));
    }
    for (size_t i = 0; i < events_.size(); ++i) {
      if (events_[i].name.empty() || events_[i].ids.empty()) continue;
      Bytes body(big_);
      body.U64(kEventUpdateName).U64(events_[i].ids[0]).PaddedString(events_[i].name);
      b.Raw(Wrap(kRecordEventUpdate, 0, body.data));
    }
    std::map<uint32_t, std::vector<uint8_t>> features = features_;
    if (compressed_ && !features.count(kFeatCompressed)) {
      Bytes z(big_);
      z.U32(1).U32(1).U32(1).U32(8).U32(528384);
      features[kFeatCompressed] = z.data;
    }
    for (const auto& [id, bytes] : features) {
      Bytes body(big_);
      body.U64(id).Raw(bytes);
      while (body.size() % 8 != 0) body.U8(0);
      b.Raw(Wrap(kRecordHeaderFeature, 0, body.data));
    }
    b.Raw(Data());
    return b.data;
  }

  std::vector<uint8_t> Wrap(uint32_t type, uint16_t misc, const std::vector<uint8_t>& body) const {
    Bytes b(big_);
    b.U32(type).U16(misc).U16(static_cast<uint16_t>(8 + body.size())).Raw(body);
    return b.data;
  }

  static constexpr uint32_t kAttrSize = 120;   // PERF_ATTR_SIZE_VER6, perf 6.1's
  static constexpr uint64_t kHeaderSize = 104;

 private:
  struct EventSpec {
    uint64_t sample_type = 0;
    std::vector<uint64_t> ids;
    std::string name;
    uint64_t read_format = 0;
    uint64_t regs_user = 0;
    uint64_t regs_intr = 0;
    uint32_t type = kTypeSoftware;
    uint64_t config = 0;
    bool sample_id_all = true;
    uint64_t branch_sample_type = 0;
  };

  void Append(std::vector<uint8_t> record) { records_.push_back(std::move(record)); }

  // The sample_id trailer, as event 0 describes it.
  void Trailer(Bytes& b, const IdFields& id) const {
    if (events_.empty() || !events_[0].sample_id_all) return;
    const uint64_t t = events_[0].sample_type;
    const uint64_t event_id = events_[0].ids.empty() ? 0 : events_[0].ids[0];
    if (t & kSampleTid) b.U32(id.pid).U32(id.tid);
    if (t & kSampleTime) b.U64(id.time);
    if (t & kSampleId) b.U64(event_id);
    if (t & kSampleStreamId) b.U64(0);
    if (t & kSampleCpu) b.U32(id.cpu).U32(0);
    if (t & kSampleIdentifier) b.U64(event_id);
  }

  bool HasNames() const {
    for (const EventSpec& e : events_) {
      if (!e.name.empty()) return true;
    }
    return false;
  }

  std::vector<uint8_t> EventDesc() const {
    Bytes b(big_);
    b.U32(static_cast<uint32_t>(events_.size())).U32(attr_size_);
    for (size_t i = 0; i < events_.size(); ++i) {
      b.Raw(AttrBytes(i)).U32(static_cast<uint32_t>(events_[i].ids.size())).HeaderString(events_[i].name);
      for (uint64_t id : events_[i].ids) b.U64(id);
    }
    return b.data;
  }

  bool big_;
  uint32_t attr_size_ = kAttrSize;
  std::vector<EventSpec> events_;
  std::vector<std::vector<uint8_t>> records_;
  std::map<uint32_t, std::vector<uint8_t>> features_;
  bool compressed_ = false;
};

}  // namespace jitdump::perfdata::testing
