// perf.data's numbers: record types, sample_type and read_format bits, header.misc flags, the
// feature ids of the header's bitmap. From the kernel's include/uapi/linux/perf_event.h and perf's
// tools/perf/util/header.h, tools/lib/perf/include/perf/event.h (Linux 6.1), plus the one record
// type newer perf writes (COMPRESSED2, Linux 6.16). The values are ABI: they never change, only
// grow.
#pragma once

#include <cstdint>

namespace jitdump::perfdata {

// perf_event_header: every record starts with it; `size` covers the whole record.
struct RecordHeader {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;
};
inline constexpr uint32_t kRecordHeaderSize = 8;

// Record types the kernel writes.
enum RecordType : uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordThrottle = 5,
  kRecordUnthrottle = 6,
  kRecordFork = 7,
  kRecordRead = 8,
  kRecordSample = 9,
  kRecordMmap2 = 10,
  kRecordAux = 11,
  kRecordItraceStart = 12,
  kRecordLostSamples = 13,
  kRecordSwitch = 14,
  kRecordSwitchCpuWide = 15,
  kRecordNamespaces = 16,
  kRecordKsymbol = 17,
  kRecordBpfEvent = 18,
  kRecordCgroup = 19,
  kRecordTextPoke = 20,
  kRecordAuxOutputHwId = 21,
  // Types perf itself writes (>= 64: PERF_RECORD_USER_TYPE_START).
  kRecordUserTypeStart = 64,
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,  // deprecated
  kRecordHeaderTracingData = 66,  // followed by `size` bytes of tracing data outside header.size
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordIdIndex = 69,
  kRecordAuxtraceInfo = 70,
  kRecordAuxtrace = 71,  // followed by `size` bytes of AUX data outside header.size
  kRecordAuxtraceError = 72,
  kRecordThreadMap = 73,
  kRecordCpuMap = 74,
  kRecordStatConfig = 75,
  kRecordStat = 76,
  kRecordStatRound = 77,
  kRecordEventUpdate = 78,
  kRecordTimeConv = 79,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
  kRecordFinishedInit = 82,
  kRecordCompressed2 = 83,  // perf 6.16+: u64 data_size, then the zstd bytes, padded to 8
};

// sample_type bits: which fields a SAMPLE record (and the sample_id trailer) carries.
enum SampleType : uint64_t {
  kSampleIp = 1ull << 0,
  kSampleTid = 1ull << 1,
  kSampleTime = 1ull << 2,
  kSampleAddr = 1ull << 3,
  kSampleRead = 1ull << 4,
  kSampleCallchain = 1ull << 5,
  kSampleId = 1ull << 6,
  kSampleCpu = 1ull << 7,
  kSamplePeriod = 1ull << 8,
  kSampleStreamId = 1ull << 9,
  kSampleRaw = 1ull << 10,
  kSampleBranchStack = 1ull << 11,
  kSampleRegsUser = 1ull << 12,
  kSampleStackUser = 1ull << 13,
  kSampleWeight = 1ull << 14,
  kSampleDataSrc = 1ull << 15,
  kSampleIdentifier = 1ull << 16,
  kSampleTransaction = 1ull << 17,
  kSampleRegsIntr = 1ull << 18,
  kSamplePhysAddr = 1ull << 19,
  kSampleAux = 1ull << 20,
  kSampleCgroup = 1ull << 21,
  kSampleDataPageSize = 1ull << 22,
  kSampleCodePageSize = 1ull << 23,
  kSampleWeightStruct = 1ull << 24,
};

// read_format bits (PERF_SAMPLE_READ values).
enum ReadFormat : uint64_t {
  kFormatTotalTimeEnabled = 1ull << 0,
  kFormatTotalTimeRunning = 1ull << 1,
  kFormatId = 1ull << 2,
  kFormatGroup = 1ull << 3,
  kFormatLost = 1ull << 4,
};

// branch_sample_type: the hardware index word before the branch entries.
inline constexpr uint64_t kBranchHwIndex = 1ull << 17;

// header.misc.
inline constexpr uint16_t kMiscCpumodeMask = 7;
enum Cpumode : uint16_t {
  kCpumodeUnknown = 0,
  kCpumodeKernel = 1,
  kCpumodeUser = 2,
  kCpumodeHypervisor = 3,
  kCpumodeGuestKernel = 4,
  kCpumodeGuestUser = 5,
};
inline constexpr uint16_t kMiscMmapData = 1u << 13;   // MMAP*: a data (non-exec) mapping
inline constexpr uint16_t kMiscCommExec = 1u << 13;   // COMM: the comm changed through exec
inline constexpr uint16_t kMiscExactIp = 1u << 14;    // SAMPLE: the ip is exact (precise events)
inline constexpr uint16_t kMiscMmapBuildId = 1u << 14;  // MMAP2: build id instead of maj/min/ino
inline constexpr uint16_t kMiscBuildIdSize = 1u << 15;  // HEADER_BUILD_ID: the size byte is valid

// Call-chain context markers (ips >= (u64)-4095 are markers, not addresses).
inline constexpr uint64_t kContextHypervisor = static_cast<uint64_t>(-32);
inline constexpr uint64_t kContextKernel = static_cast<uint64_t>(-128);
inline constexpr uint64_t kContextUser = static_cast<uint64_t>(-512);
inline constexpr uint64_t kContextGuest = static_cast<uint64_t>(-2048);
inline constexpr uint64_t kContextGuestKernel = static_cast<uint64_t>(-2176);
inline constexpr uint64_t kContextGuestUser = static_cast<uint64_t>(-2560);
inline constexpr uint64_t kContextMax = static_cast<uint64_t>(-4095);
inline bool IsContextMarker(uint64_t ip) { return ip >= kContextMax; }

// Feature bits of the header's 256-bit bitmap; each set bit has a section after the data.
enum Feature : uint32_t {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatBranchStack = 15,
  kFeatPmuMappings = 16,
  kFeatGroupDesc = 17,
  kFeatAuxtrace = 18,
  kFeatStat = 19,
  kFeatCache = 20,
  kFeatSampleTime = 21,
  kFeatMemTopology = 22,
  kFeatClockId = 23,
  kFeatDirFormat = 24,
  kFeatBpfProgInfo = 25,
  kFeatBpfBtf = 26,
  kFeatCompressed = 27,
  kFeatCpuPmuCaps = 28,
  kFeatClockData = 29,
  kFeatHybridTopology = 30,
  kFeatPmuCaps = 31,
  kFeatBits = 256,
};

// PERF_RECORD_EVENT_UPDATE types.
inline constexpr uint64_t kEventUpdateName = 2;

// perf_event_attr.type and the software/hardware configs whose names the reader knows.
enum AttrType : uint32_t {
  kTypeHardware = 0,
  kTypeSoftware = 1,
  kTypeTracepoint = 2,
  kTypeHwCache = 3,
  kTypeRaw = 4,
  kTypeBreakpoint = 5,
};
inline constexpr uint64_t kSwCpuClock = 0;
inline constexpr uint64_t kSwTaskClock = 1;

// perf_event_attr sizes by ABI revision (PERF_ATTR_SIZE_VER0..7).
inline constexpr uint32_t kAttrSizeVer0 = 64;

// The 8-byte magics: "PERFILE2" as a little- or big-endian u64.
inline constexpr uint64_t kMagic = 0x32454c4946524550ull;         // "PERFILE2" read on a little-endian host
inline constexpr uint64_t kMagicSwapped = 0x50455246494c4532ull;  // the same bytes written big-endian

}  // namespace jitdump::perfdata
