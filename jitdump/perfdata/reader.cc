#include "jitdump/perfdata/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "jitdump/perfdata/byte_source.h"
#include "jitdump/perfdata/cursor.h"
#include "jitdump/perfdata/decompressor.h"
#include "jitdump/perfdata/format.h"
#include "jitdump/perfdata/round_sorter.h"

namespace jitdump::perfdata {
namespace {

constexpr uint64_t kPipeHeaderSize = 16;
constexpr uint64_t kFileHeaderSize = 104;      // magic, size, attr_size, 3 sections, 256 feature bits
constexpr uint64_t kOldFileHeaderSize = 72;    // before the feature bitmap
constexpr uint64_t kMinCompressedLimit = 1u << 20;
constexpr uint64_t kMaxCompressedLimit = 64u << 20;
constexpr uint32_t kUnknownEvent = UINT32_MAX;

const char* RecordTypeName(uint32_t type) {
  switch (type) {
    case kRecordMmap: return "MMAP";
    case kRecordLost: return "LOST";
    case kRecordComm: return "COMM";
    case kRecordExit: return "EXIT";
    case kRecordThrottle: return "THROTTLE";
    case kRecordUnthrottle: return "UNTHROTTLE";
    case kRecordFork: return "FORK";
    case kRecordSample: return "SAMPLE";
    case kRecordMmap2: return "MMAP2";
    case kRecordLostSamples: return "LOST_SAMPLES";
    case kRecordCompressed: return "COMPRESSED";
    case kRecordCompressed2: return "COMPRESSED2";
    case kRecordHeaderAttr: return "HEADER_ATTR";
    case kRecordHeaderFeature: return "HEADER_FEATURE";
    default: return nullptr;
  }
}

std::string DescribeRecord(uint32_t type) {
  const char* name = RecordTypeName(type);
  return name ? std::string(name) + " record" : "record of type " + std::to_string(type);
}

RecordHeader HeaderOf(std::span<const uint8_t> bytes, bool swap) {
  Cursor c(bytes, swap);
  RecordHeader h;
  h.type = c.U32();
  h.misc = c.U16();
  h.size = c.U16();
  return h;
}

// Where PERF_SAMPLE_ID sits in a sample's body, for a sample_type (-1: not there).
int64_t SampleIdPosition(uint64_t type) {
  if (type & kSampleIdentifier) return 0;
  if (!(type & kSampleId)) return -1;
  return 8 * std::popcount(type & (kSampleIp | kSampleTid | kSampleTime | kSampleAddr));
}

// Where the id sits in a sample_id trailer, counted back from the record's end (0: none).
uint32_t TrailerIdFromEnd(uint64_t type) {
  if (type & kSampleIdentifier) return 8;
  if (!(type & kSampleId)) return 0;
  return 8 * (1 + static_cast<uint32_t>(std::popcount(type & (kSampleStreamId | kSampleCpu))));
}

}  // namespace

// One pass over the data: the source, the order, the zstd stream, and how records find their
// events (which, in a stream, arrive with the records).
class PerfDataReader::Pass {
 public:
  Pass(PerfDataReader& reader, RecordSink& sink, const ReadOptions& options, ByteSource source)
      : r_(reader), rec_(reader.recording_), sink_(sink), options_(options), source_(std::move(source)),
        sorter_(options.sort_budget) {
    IndexEvents();
  }

  void Run();

 private:
  void Handle(std::span<const uint8_t> record, uint64_t offset, bool inner);
  void Decompress(std::span<const uint8_t> record, const RecordHeader& h, uint64_t offset);
  void DrainPending(uint64_t offset);
  void Deliver(const QueuedRecord& q);
  void DeliverNow(std::span<const uint8_t> record, uint64_t offset, uint32_t event) {
    Deliver(QueuedRecord{0, offset, event, record});
  }
  void AddAttr(std::span<const uint8_t> body, uint64_t offset);
  void IndexEvents();
  uint32_t EventOf(std::span<const uint8_t> body, uint32_t type) const;
  bool TimeOf(std::span<const uint8_t> body, uint32_t type, uint32_t event, uint64_t* time) const;
  void Warn(std::string message) { r_.Warn(r_.read_warnings_, std::move(message)); }
  void Damaged(std::string message) {
    r_.stats_.truncated = true;
    Warn(std::move(message));
  }
  void BadRecord(uint32_t type, uint64_t offset) {
    if (r_.stats_.bad_records++ == 0) {
      Warn("a " + DescribeRecord(type) + " at offset " + std::to_string(offset) +
           " does not hold the fields its event's sample_type says (skipped; later ones are counted)");
    }
  }

  PerfDataReader& r_;
  Recording& rec_;
  RecordSink& sink_;
  const ReadOptions& options_;
  ByteSource source_;
  RoundSorter sorter_;
  std::unique_ptr<Decompressor> zstd_;
  bool zstd_failed_ = false;
  std::vector<uint8_t> pending_;  // decompressed bytes not yet a whole record
  std::vector<SampleLayout> layouts_;
  std::unordered_map<uint64_t, uint32_t> by_id_;
  size_t total_ids_ = 0;
  int64_t sample_id_pos_ = -1;
  uint32_t trailer_id_from_end_ = 0;
  bool warned_unknown_bits_ = false;
  Sample sample_;
};

void PerfDataReader::Pass::IndexEvents() {
  layouts_.clear();
  by_id_.clear();
  total_ids_ = 0;
  bool all_identifier = !rec_.events.empty();
  for (size_t i = 0; i < rec_.events.size(); ++i) {
    const Event& e = rec_.events[i];
    layouts_.push_back(SampleLayout::Of(e.attr));
    all_identifier &= (e.attr.sample_type & kSampleIdentifier) != 0;
    for (uint64_t id : e.ids) {
      if (total_ids_ >= kMaxIds) break;
      by_id_.emplace(id, static_cast<uint32_t>(i));
      ++total_ids_;
    }
  }
  for (size_t i = 0; i < layouts_.size(); ++i) {
    if (layouts_[i].unknown_bits != 0 && !warned_unknown_bits_) {
      warned_unknown_bits_ = true;
      char bits[32];
      std::snprintf(bits, sizeof bits, "0x%llx", static_cast<unsigned long long>(layouts_[i].unknown_bits));
      Warn("event " + rec_.events[i].name + "'s sample_type has bits " + bits +
           " this reader does not know (a newer kernel): samples are read up to CODE_PAGE_SIZE, without AUX");
    }
  }
  // perf record makes every event carry IDENTIFIER when their sample_types differ; otherwise
  // they share one layout and the first event's says where the id is.
  const uint64_t type = rec_.events.empty() ? 0 : rec_.events[0].attr.sample_type;
  sample_id_pos_ = all_identifier ? 0 : SampleIdPosition(type);
  trailer_id_from_end_ = all_identifier ? 8 : TrailerIdFromEnd(type);
}

uint32_t PerfDataReader::Pass::EventOf(std::span<const uint8_t> body, uint32_t type) const {
  if (rec_.events.size() <= 1) return rec_.events.empty() ? kUnknownEvent : 0;
  uint64_t id;
  if (type == kRecordSample) {
    if (sample_id_pos_ < 0 || body.size() < static_cast<size_t>(sample_id_pos_) + 8) return 0;
    id = LoadU64(body.data() + sample_id_pos_, rec_.swap);
  } else {
    if (trailer_id_from_end_ == 0 || !layouts_[0].sample_id_all || body.size() < trailer_id_from_end_) return 0;
    id = LoadU64(body.data() + body.size() - trailer_id_from_end_, rec_.swap);
  }
  const auto it = by_id_.find(id);
  if (it != by_id_.end()) return it->second;
  // A sample of no known event is dropped (perf counts it); any other record is read with the
  // first event's trailer, which every event shares when they carry no IDENTIFIER.
  return type == kRecordSample ? kUnknownEvent : 0;
}

bool PerfDataReader::Pass::TimeOf(std::span<const uint8_t> body, uint32_t type, uint32_t event, uint64_t* time) const {
  const SampleLayout& layout = layouts_[event];
  const uint64_t st = layout.sample_type;
  if (!(st & kSampleTime)) return false;
  if (type == kRecordSample) {
    const size_t at = layout.sample_time_at;
    if (body.size() < at + 8) return false;
    *time = LoadU64(body.data() + at, rec_.swap);
    return true;
  }
  if (!layout.sample_id_all || body.size() < layout.trailer_size) return false;
  const size_t at = body.size() - layout.trailer_size + ((st & kSampleTid) ? 8 : 0);
  *time = LoadU64(body.data() + at, rec_.swap);
  return true;
}

void PerfDataReader::Pass::AddAttr(std::span<const uint8_t> body, uint64_t offset) {
  // HEADER_ATTR: perf_event_attr (its own size), then the event's ids.
  const uint32_t size = AttrSizeOf(body, rec_.swap);
  Event event;
  if (size > body.size() || !ParseAttr(body.first(size), rec_.swap, &event.attr)) {
    Warn("the HEADER_ATTR record at offset " + std::to_string(offset) + " is shorter than its attr (skipped)");
    return;
  }
  if (rec_.events.size() >= kMaxEvents) {
    if (rec_.events.size() == kMaxEvents) Warn("more than " + std::to_string(kMaxEvents) + " events: the rest are ignored");
    return;
  }
  const U64Array ids(body.data() + size, (body.size() - size) / 8, rec_.swap);
  for (size_t i = 0; i < ids.size() && total_ids_ + event.ids.size() < kMaxIds; ++i) event.ids.push_back(ids[i]);
  event.name = DefaultEventName(event.attr);
  rec_.events.push_back(std::move(event));
  IndexEvents();
}

void PerfDataReader::Pass::Run() {
  const bool swap = rec_.swap;
  for (;;) {
    const uint64_t offset = source_.position();
    const std::span<const uint8_t> head = source_.Peek(kRecordHeaderSize);
    if (head.size() < kRecordHeaderSize) {
      if (!head.empty()) Damaged("the data ends inside a record header at offset " + std::to_string(offset));
      break;
    }
    const RecordHeader h = HeaderOf(head, swap);
    if (h.size < kRecordHeaderSize) {
      Damaged("damaged record at offset " + std::to_string(offset) + " (size " + std::to_string(h.size) +
              ", type " + std::to_string(h.type) + "): records after it are not read");
      break;
    }
    const std::span<const uint8_t> record = source_.Peek(h.size);
    if (record.size() < h.size) {
      Damaged("the data ends inside a " + DescribeRecord(h.type) + " at offset " + std::to_string(offset) + " (" +
              std::to_string(record.size()) + " of its " + std::to_string(h.size) + " bytes)");
      break;
    }
    Handle(record, offset, false);
    source_.Skip(h.size);
    // Data that follows a record outside its header.size (tracing data, AUX area data).
    uint64_t extra = 0;
    if ((h.type == kRecordHeaderTracingData || h.type == kRecordAuxtrace) && h.size >= 16) {
      extra = h.type == kRecordAuxtrace ? LoadU64(record.data() + 8, swap) : LoadU32(record.data() + 8, swap);
    }
    if (extra > 0 && !source_.Skip(extra)) {
      Damaged("the data ends inside the " + std::to_string(extra) + " bytes after the " + DescribeRecord(h.type) +
              " at offset " + std::to_string(offset));
      break;
    }
  }
  if (source_.error() != 0) {
    Damaged(std::string("reading stopped at offset ") + std::to_string(source_.position()) + ": " +
            std::strerror(source_.error()));
  }
  if (!pending_.empty()) {
    Damaged("the compressed data ends inside a record (" + std::to_string(pending_.size()) + " bytes left over)");
  }
  sorter_.Finish([&](const QueuedRecord& q) { Deliver(q); });
  r_.stats_.out_of_order = sorter_.late();
  r_.stats_.sort_overflows = sorter_.overflows();
  if (sorter_.late() > 0) {
    Warn(std::to_string(sorter_.late()) + " records were older than records already read (the recording's rounds "
                                           "do not order them): they were read where they stood");
  }
  if (sorter_.overflows() > 0) {
    Warn("records waiting to be put in time order exceeded " + std::to_string(options_.sort_budget >> 20) +
         " MiB " + std::to_string(sorter_.overflows()) +
         " times (no FINISHED_ROUND records?): the oldest were read first, order may be approximate");
  }
}

void PerfDataReader::Pass::Handle(std::span<const uint8_t> record, uint64_t offset, bool inner) {
  const bool swap = rec_.swap;
  const RecordHeader h = HeaderOf(record, swap);
  const std::span<const uint8_t> body = record.subspan(kRecordHeaderSize);
  ++r_.stats_.records;
  auto deliver = [&](const QueuedRecord& q) { Deliver(q); };
  switch (h.type) {
    case kRecordFinishedRound:
      ++r_.stats_.rounds;
      sorter_.FinishRound(deliver);
      return;
    case kRecordCompressed:
    case kRecordCompressed2:
      if (inner) {
        BadRecord(h.type, offset);  // perf never nests them
        return;
      }
      Decompress(record, h, offset);
      return;
    case kRecordHeaderAttr:
      AddAttr(body, offset);
      return;
    case kRecordHeaderFeature: {
      Cursor c(body, swap);
      const uint64_t feature = c.U64();
      if (!c.ok() || feature >= kFeatBits ||
          !ParseFeature(static_cast<uint32_t>(feature), body.subspan(8), swap, &rec_.features, &rec_.events)) {
        Warn("the HEADER_FEATURE record at offset " + std::to_string(offset) + " could not be read (skipped)");
      }
      return;
    }
    case kRecordEventUpdate: {
      Cursor c(body, swap);
      const uint64_t type = c.U64();
      const uint64_t id = c.U64();
      if (c.ok() && type == kEventUpdateName) {
        const auto it = by_id_.find(id);
        const std::string_view name = c.RestAsCString();
        if (it != by_id_.end() && !name.empty()) rec_.events[it->second].name.assign(name);
      }
      break;
    }
    case kRecordHeaderBuildId: {
      BuildIdEntry entry;
      if (rec_.features.build_ids.size() < kMaxBuildIds && ParseBuildIdEvent(record, swap, &entry)) {
        rec_.features.build_ids.push_back(std::move(entry));
      }
      return;
    }
    default:
      break;
  }
  if (h.type >= kRecordUserTypeStart) {
    if (options_.other_records) sink_.OnOther(RawRecord{h, body, SampleId{}});
    return;
  }
  const uint32_t event = EventOf(body, h.type);
  if (h.type == kRecordSample) {
    if (!options_.samples) {
      ++r_.stats_.samples_skipped;
      return;
    }
    if (event == kUnknownEvent) {
      if (r_.stats_.unknown_id++ == 0) {
        Warn("the SAMPLE at offset " + std::to_string(offset) +
             " carries the id of no recorded event (skipped, as perf does; later ones are counted)");
      }
      return;
    }
  } else if (event == kUnknownEvent) {
    // No event recorded at all (a stream whose HEADER_ATTR never came): nothing decodes it.
    BadRecord(h.type, offset);
    return;
  }
  uint64_t time;
  if (TimeOf(body, h.type, event, &time)) {
    sorter_.Add(time, offset, event, record, deliver);
  } else {
    DeliverNow(record, offset, event);  // no time: where it stands, as perf does
  }
}

void PerfDataReader::Pass::Decompress(std::span<const uint8_t> record, const RecordHeader& h, uint64_t offset) {
  ++r_.stats_.compressed;
  if (zstd_failed_) return;
  std::span<const uint8_t> payload = record.subspan(kRecordHeaderSize);
  if (h.type == kRecordCompressed2) {
    // COMPRESSED2: u64 data_size, then that many zstd bytes (the record is padded to 8).
    Cursor c(payload, rec_.swap);
    const uint64_t size = c.U64();
    if (!c.ok() || size > payload.size() - 8) {
      BadRecord(h.type, offset);
      return;
    }
    payload = payload.subspan(8, static_cast<size_t>(size));
  }
  if (!zstd_) zstd_ = std::make_unique<Decompressor>();
  uint64_t limit = kMinCompressedLimit;
  if (rec_.features.compression) {
    limit = std::max<uint64_t>(limit, uint64_t{rec_.features.compression->mmap_len} * 2);
    limit = std::min(limit, kMaxCompressedLimit);
  }
  const bool ok = zstd_->Feed(payload, limit, [&](std::span<const uint8_t> out) {
    r_.stats_.decompressed_bytes += out.size();
    pending_.insert(pending_.end(), out.begin(), out.end());
    DrainPending(offset);
  });
  if (!ok) {
    zstd_failed_ = true;
    pending_.clear();
    Damaged("the compressed data cannot be read from the " + DescribeRecord(h.type) + " at offset " +
            std::to_string(offset) + " on (" + zstd_->error() + "): compressed records after it are skipped");
  }
}

void PerfDataReader::Pass::DrainPending(uint64_t offset) {
  size_t pos = 0;
  while (!zstd_failed_ && pending_.size() - pos >= kRecordHeaderSize) {
    const std::span<const uint8_t> rest(pending_.data() + pos, pending_.size() - pos);
    const RecordHeader h = HeaderOf(rest, rec_.swap);
    if (h.size < kRecordHeaderSize) {
      zstd_failed_ = true;
      Damaged("damaged record (size " + std::to_string(h.size) + ") inside the compressed data of the record at offset " +
              std::to_string(offset) + ": compressed records after it are skipped");
      pending_.clear();
      return;
    }
    if (rest.size() < h.size) break;
    Handle(rest.first(h.size), offset, true);
    pos += h.size;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(pos));
}

void PerfDataReader::Pass::Deliver(const QueuedRecord& q) {
  const bool swap = rec_.swap;
  const RecordHeader h = HeaderOf(q.bytes, swap);
  const std::span<const uint8_t> body = q.bytes.subspan(kRecordHeaderSize);
  const SampleLayout& layout = layouts_[q.event];
  if (h.type == kRecordSample) {
    sample_ = Sample{};
    sample_.event = q.event;
    if (!ParseSample(body, h.misc, layout, swap, &sample_)) {
      BadRecord(h.type, q.offset);
      return;
    }
    ++r_.stats_.samples;
    sink_.OnSample(sample_);
    return;
  }
  SampleId id;
  if (!ParseSampleId(body, layout, swap, &id)) {
    BadRecord(h.type, q.offset);
    return;
  }
  const std::span<const uint8_t> fields = body.first(body.size() - (layout.sample_id_all ? layout.trailer_size : 0));
  bool ok = true;
  switch (h.type) {
    case kRecordMmap:
    case kRecordMmap2: {
      Mmap m;
      if ((ok = ParseMmap(fields, h.misc, h.type == kRecordMmap2, swap, &m))) {
        m.sample_id = id;
        sink_.OnMmap(m);
      }
      break;
    }
    case kRecordComm: {
      Comm c;
      if ((ok = ParseComm(fields, h.misc, swap, &c))) {
        c.sample_id = id;
        sink_.OnComm(c);
      }
      break;
    }
    case kRecordFork:
    case kRecordExit: {
      Task t;
      if ((ok = ParseTask(fields, h.type == kRecordFork, swap, &t))) {
        t.sample_id = id;
        sink_.OnTask(t);
      }
      break;
    }
    case kRecordLost:
    case kRecordLostSamples: {
      Lost l;
      if ((ok = ParseLost(fields, h.type == kRecordLostSamples, swap, &l))) {
        l.sample_id = id;
        (l.samples ? r_.stats_.lost_samples : r_.stats_.lost) += l.lost;
        sink_.OnLost(l);
      }
      break;
    }
    case kRecordThrottle:
    case kRecordUnthrottle: {
      Throttle t;
      if ((ok = ParseThrottle(fields, h.type == kRecordUnthrottle, swap, &t))) {
        t.sample_id = id;
        if (!t.unthrottle) ++r_.stats_.throttled;
        sink_.OnThrottle(t);
      }
      break;
    }
    default:
      if (options_.other_records) sink_.OnOther(RawRecord{h, body, id});
      break;
  }
  if (!ok) BadRecord(h.type, q.offset);
}

// ---- opening and the header ----

PerfDataReader::PerfDataReader(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {}

PerfDataReader::~PerfDataReader() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

void PerfDataReader::Warn(std::vector<std::string>& list, std::string message) {
  if (list.size() < 64) list.push_back(std::move(message));
}

std::vector<std::string> PerfDataReader::warnings() const {
  std::vector<std::string> all = header_warnings_;
  all.insert(all.end(), read_warnings_.begin(), read_warnings_.end());
  return all;
}

std::unique_ptr<PerfDataReader> PerfDataReader::Open(const std::string& path, std::string* error) {
  if (path == "-") return FromFd(STDIN_FILENO, "standard input", error);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  std::unique_ptr<PerfDataReader> reader(new PerfDataReader(fd, true, path));
  if (!reader->ReadHeader(error)) return nullptr;
  return reader;
}

std::unique_ptr<PerfDataReader> PerfDataReader::FromFd(int fd, const std::string& name, std::string* error) {
  std::unique_ptr<PerfDataReader> reader(new PerfDataReader(fd, false, name));
  if (!reader->ReadHeader(error)) return nullptr;
  return reader;
}

bool PerfDataReader::ReadAt(uint64_t offset, uint64_t size, std::vector<uint8_t>* out) const {
  if (offset > recording_.file_size || size > recording_.file_size - offset) return false;
  out->resize(static_cast<size_t>(size));
  uint64_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd_, out->data() + done, static_cast<size_t>(size - done), static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<uint64_t>(got);
  }
  return true;
}

bool PerfDataReader::ReadHeader(std::string* error) {
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    *error = name_ + ": " + std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *error = name_ + " is a directory (perf record --threaded writes one): not supported; record without --threaded";
    return false;
  }
  seekable_ = S_ISREG(st.st_mode);
  recording_.file_size = seekable_ ? static_cast<uint64_t>(st.st_size) : 0;
  // The first 16 bytes: magic and header size, which tell file from stream format.
  uint8_t start[kFileHeaderSize];
  size_t have = 0;
  while (have < kPipeHeaderSize) {
    const ssize_t got = seekable_ ? ::pread(fd_, start + have, kPipeHeaderSize - have, static_cast<off_t>(have))
                                  : ::read(fd_, start + have, kPipeHeaderSize - have);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    have += static_cast<size_t>(got);
  }
  if (have < kPipeHeaderSize) {
    *error = name_ + ": not a perf.data file (" + std::to_string(have) + " bytes)";
    return false;
  }
  uint64_t magic;
  std::memcpy(&magic, start, 8);
  if (std::memcmp(start, "PERFFILE", 8) == 0) {
    *error = name_ + ": perf.data version 1 (written by perf before Linux 2.6.39): not supported";
    return false;
  }
  if (magic != kMagic && magic != kMagicSwapped) {
    *error = name_ + ": not a perf.data file (no PERFILE2 magic)";
    return false;
  }
  recording_.swap = magic == kMagicSwapped;
  const uint64_t header_size = LoadU64(start + 8, recording_.swap);
  if (header_size == kPipeHeaderSize) {
    recording_.pipe = true;
    data_begin_ = kPipeHeaderSize;
    data_end_ = UINT64_MAX;
    return true;
  }
  if (!seekable_) {
    *error = name_ + ": a perf.data file in file format (header of " + std::to_string(header_size) +
             " bytes) cannot be read from a pipe: give the file's path, or record with -o - for a stream";
    return false;
  }
  if (header_size != kFileHeaderSize && header_size != kOldFileHeaderSize) {
    *error = name_ + ": not a perf.data header (size " + std::to_string(header_size) + ")";
    return false;
  }
  std::vector<uint8_t> bytes;
  if (!ReadAt(0, header_size, &bytes)) {
    *error = name_ + ": the file ends inside its " + std::to_string(header_size) + "-byte header";
    return false;
  }
  return ReadFileHeader(bytes, error);
}

bool PerfDataReader::ReadFileHeader(std::span<const uint8_t> bytes, std::string* error) {
  const bool swap = recording_.swap;
  Cursor c(bytes, swap);
  c.Skip(16);
  const uint64_t attr_size = c.U64();
  const uint64_t attrs_offset = c.U64();
  const uint64_t attrs_size = c.U64();
  const uint64_t data_offset = c.U64();
  uint64_t data_size = c.U64();
  c.Skip(16);  // event_types: unused since perf 3.x
  uint64_t bitmap[4] = {0, 0, 0, 0};
  if (bytes.size() >= kFileHeaderSize) {
    for (uint64_t& word : bitmap) word = c.U64();
    // The bitmap was written as host longs: a 32-bit big-endian perf's words come out swapped
    // in halves. perf's rule: HOSTNAME is always set, so a bitmap without it is tried as u32s.
    if (swap && !(bitmap[0] >> kFeatHostname & 1)) {
      for (uint64_t& word : bitmap) word = word >> 32 | word << 32;
    }
  }
  const uint64_t file_size = recording_.file_size;
  if (data_offset < bytes.size() || data_offset > file_size) {
    *error = name_ + ": the data section starts at " + std::to_string(data_offset) + ", outside the " +
             std::to_string(file_size) + "-byte file";
    return false;
  }
  recording_.data_offset = data_offset;
  recording_.data_size = data_size;
  data_begin_ = data_offset;
  bool features = data_size != 0;
  if (data_size == 0) {
    Warn(header_warnings_, "the header's data size is 0 (perf record did not finish): reading records up to the "
                           "end of the file, without the feature sections");
    data_end_ = file_size;
  } else if (data_size > file_size - data_offset) {
    Warn(header_warnings_, "the file is truncated: its data section should end at offset " +
                               std::to_string(data_offset + data_size) + " but the file has " +
                               std::to_string(file_size) + " bytes (no feature sections)");
    data_end_ = file_size;
    features = false;
  } else {
    data_end_ = data_offset + data_size;
  }

  // The events: attr_size bytes each (an attr, then the section of its ids).
  if (attr_size < kAttrSizeVer0 + 16 || attr_size > 4096) {
    *error = name_ + ": implausible attr size " + std::to_string(attr_size) + " in the header";
    return false;
  }
  const uint64_t count = attrs_size / attr_size;
  std::vector<uint8_t> attrs;
  if (count == 0 || count > kMaxEvents || !ReadAt(attrs_offset, count * attr_size, &attrs)) {
    *error = name_ + ": the event list (" + std::to_string(count) + " events at offset " +
             std::to_string(attrs_offset) + ") is empty or outside the file";
    return false;
  }
  size_t total_ids = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const std::span<const uint8_t> entry(attrs.data() + i * attr_size, static_cast<size_t>(attr_size));
    Event event;
    if (!ParseAttr(entry.first(static_cast<size_t>(attr_size - 16)), swap, &event.attr)) {
      *error = name_ + ": event " + std::to_string(i) + "'s attr cannot be read";
      return false;
    }
    Cursor ids_section(entry.subspan(static_cast<size_t>(attr_size - 16)), swap);
    const uint64_t ids_offset = ids_section.U64();
    const uint64_t ids_size = ids_section.U64();
    std::vector<uint8_t> ids;
    const uint64_t n = std::min<uint64_t>(ids_size / 8, kMaxIds - total_ids);
    if (n > 0 && ReadAt(ids_offset, n * 8, &ids)) {
      for (uint64_t k = 0; k < n; ++k) event.ids.push_back(LoadU64(ids.data() + 8 * k, swap));
      total_ids += n;
    } else if (n > 0) {
      Warn(header_warnings_, "event " + std::to_string(i) + "'s ids (at offset " + std::to_string(ids_offset) +
                                 ") lie outside the file");
    }
    event.name = DefaultEventName(event.attr);
    recording_.events.push_back(std::move(event));
  }
  if (features) ReadFeatures(data_offset + data_size, bitmap);
  return true;
}

void PerfDataReader::ReadFeatures(uint64_t table_offset, const uint64_t bitmap[4]) {
  const bool swap = recording_.swap;
  size_t sections = 0;
  for (int w = 0; w < 4; ++w) sections += static_cast<size_t>(std::popcount(bitmap[w]));
  std::vector<uint8_t> table;
  if (sections == 0) return;
  if (!ReadAt(table_offset, sections * 16, &table)) {
    Warn(header_warnings_, "the feature sections' table at offset " + std::to_string(table_offset) +
                               " lies outside the file (no features read)");
    return;
  }
  size_t index = 0;
  for (uint32_t feature = 0; feature < kFeatBits; ++feature) {
    if (!(bitmap[feature / 64] >> (feature % 64) & 1)) continue;
    const uint64_t offset = LoadU64(table.data() + 16 * index, swap);
    const uint64_t size = LoadU64(table.data() + 16 * index + 8, swap);
    ++index;
    if (feature == kFeatTracingData || feature == kFeatAuxtrace || feature == kFeatBpfProgInfo ||
        feature == kFeatBpfBtf) {
      recording_.features.present.set(feature);  // large and not needed: listed, not read
      continue;
    }
    std::vector<uint8_t> bytes;
    if (size > kMaxFeatureBytes || !ReadAt(offset, size, &bytes)) {
      Warn(header_warnings_, "feature section " + std::to_string(feature) + " (" + std::to_string(size) +
                                 " bytes at offset " + std::to_string(offset) + ") is too large or outside the file");
      continue;
    }
    if (!ParseFeature(feature, bytes, swap, &recording_.features, &recording_.events)) {
      Warn(header_warnings_, "feature section " + std::to_string(feature) + " at offset " + std::to_string(offset) +
                                 " is damaged (skipped)");
    }
  }
  if (recording_.features.build_ids.size() > kMaxBuildIds) recording_.features.build_ids.resize(kMaxBuildIds);
}

bool PerfDataReader::Read(RecordSink& sink, const ReadOptions& options) {
  if (consumed_) return false;
  stats_ = ReadStats{};
  read_warnings_.clear();
  if (recording_.pipe && !seekable_) consumed_ = true;
  if (recording_.pipe) {
    // A stream's events and features come with its records: each pass learns them afresh.
    recording_.events.clear();
    recording_.features = Features{};
  }
  ByteSource source = seekable_ ? ByteSource::File(fd_, data_begin_, data_end_) : ByteSource::Stream(fd_, data_begin_);
  Pass pass(*this, sink, options, std::move(source));
  pass.Run();
  return true;
}

}  // namespace jitdump::perfdata
