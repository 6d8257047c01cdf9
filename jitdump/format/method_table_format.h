// The method table: the file beside a JVM's jitdump (DUMP.methods, e.g. jit-1234.dump.methods)
// that names the frames of HotSpot's template interpreter. Every interpreted frame holds a
// pointer to its method's metadata (HotSpot's Method*) and a bytecode pointer; perf can copy
// them with each sample (`--call-graph dwarf`), and this table turns them into a method, a
// bytecode index and a source line, offline.
//
// It is a file of its own because perf must never see it: perf 6.1 warns about every record type
// of a jitdump it does not know ("unknown record type"), and reads nothing but jit-<pid>.dump.
//
// Layout: a 40-byte header, then records, each a 16-byte prefix (type, size, timestamp) and a
// body, every record a multiple of 8 bytes. Fields are in the producer's byte order (the magic
// tells which). Timestamps are the dump's clock (CLOCK_MONOTONIC); 0 means "since before the
// table began" (methods of classes loaded before the agent started).
//
//   LAYOUT   where an interpreted frame keeps its Method* and bytecode pointer (the reader needs
//            no knowledge of JVM versions: the producer states it). First record.
//   CLASS    a class id with its name ("java.util.HashMap") and source file
//            ("java/util/HashMap.java", the package path, as the dump's line tables name files).
//   METHOD   one Method* from `timestamp` on: its class, name, JVM descriptor, where its
//            bytecodes lie (a bytecode pointer minus code_base is the bytecode index) and its
//            line table. `serial` identifies the record. A later METHOD for the same Method*
//            replaces it from its own timestamp on (HotSpot reuses the memory of unloaded
//            classes' methods).
//   RETIRE   the METHOD `serial` no longer holds from `timestamp` on (its class was unloaded).
//   END      written when the table is closed: how many records of each kind were written and
//            how many methods the producer could not record (a reader then knows the table
//            is whole, and how much is missing).
//
// Structs here are the on-disk layout exactly (naturally aligned, no implicit padding, sizes
// pinned by static_asserts), as in dump_format.h.
#pragma once

#include <cstdint>

namespace jitdump {

// "JDMT" in a little-endian file.
inline constexpr uint32_t kMethodTableMagic = 0x544D444A;
inline constexpr uint32_t kMethodTableMagicSwapped = 0x4A444D54;
inline constexpr uint32_t kMethodTableVersion = 1;

enum class MethodTableRecord : uint32_t {
  kLayout = 1,
  kClass = 2,
  kMethod = 3,
  kRetire = 4,
  kEnd = 5,
};

struct MethodTableHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t header_size;  // sizeof(MethodTableHeader); a reader skips what a later version adds
  uint32_t pid;          // the JVM's pid, as its jit-<pid>.dump names it
  uint64_t timestamp;    // when the table was created
  uint64_t flags;        // 0
  uint64_t reserved;
};
static_assert(sizeof(MethodTableHeader) == 40);

struct MethodTableRecordHeader {
  uint32_t type;
  uint32_t size;  // the whole record, this prefix included; a multiple of 8
  uint64_t timestamp;
};
static_assert(sizeof(MethodTableRecordHeader) == 16);

// Register numbers are perf's (PERF_REG_X86_*), as a recording's user registers carry them.
inline constexpr uint32_t kPerfRegX86Ax = 0;
inline constexpr uint32_t kPerfRegX86Bx = 1;
inline constexpr uint32_t kPerfRegX86Bp = 6;
inline constexpr uint32_t kPerfRegX86Sp = 7;
inline constexpr uint32_t kPerfRegX86Ip = 8;
inline constexpr uint32_t kPerfRegX86R13 = 21;

// Followed by the JVM's version string (jvm_version_size bytes), padded to 8.
struct MethodTableLayoutFixed {
  MethodTableRecordHeader header;
  uint32_t elf_machine;      // EM_X86_64
  uint32_t jvm_feature;      // the JVM's feature release (17, 25)
  uint32_t word_size;        // bytes per stack slot (8)
  int32_t method_slot;       // the frame's Method* at fp + method_slot * word_size (-3)
  int32_t bcp_slot;          // its saved bytecode pointer at fp + bcp_slot * word_size (-8)
  // The fixed part of the frame ends at fp + complete_slot * word_size (-9): while sp is above
  // it the frame is still being built (its slots are not yet written).
  int32_t complete_slot;
  uint32_t bcp_register;     // the live bytecode pointer of the executing frame (r13)
  uint32_t method_register;  // the Method* while a method's frame is being built (rbx)
  uint32_t jvm_version_size;
  uint32_t reserved;
};
static_assert(sizeof(MethodTableLayoutFixed) == 56);

// Followed by the name (name_size bytes) and the source file (file_size bytes), padded to 8.
struct MethodTableClassFixed {
  MethodTableRecordHeader header;
  uint64_t class_id;   // unique in the table; METHOD records name it
  uint32_t name_size;  // "java.util.HashMap", hidden classes as Class.getName() spells them
  uint32_t file_size;  // "java/util/HashMap.java"; 0: no SourceFile attribute
};
static_assert(sizeof(MethodTableClassFixed) == 32);

inline constexpr uint32_t kMethodNative = 1;     // no bytecodes (an interpreted frame's bcp is 0)
inline constexpr uint32_t kMethodRedefined = 2;  // a new version of a method already in the table

// Followed by line_count MethodTableLine (sorted by bci), the name (name_size bytes) and the
// JVM descriptor ("(ILjava/lang/Object;)V", descriptor_size bytes), padded to 8.
struct MethodTableMethodFixed {
  MethodTableRecordHeader header;
  uint64_t serial;     // unique in the table, increasing in file order
  uint64_t method;     // the Method*
  uint64_t code_base;  // the first bytecode: bci = bcp - code_base
  uint64_t class_id;
  uint32_t code_size;  // bytes of bytecode
  uint32_t flags;      // kMethodNative, kMethodRedefined
  uint32_t name_size;
  uint32_t descriptor_size;
  uint32_t line_count;
  uint32_t reserved;
};
static_assert(sizeof(MethodTableMethodFixed) == 72);

struct MethodTableLine {
  uint32_t bci;   // the line's first bytecode index
  uint32_t line;
};
static_assert(sizeof(MethodTableLine) == 8);

struct MethodTableRetireRecord {
  MethodTableRecordHeader header;
  uint64_t serial;
  uint64_t method;
};
static_assert(sizeof(MethodTableRetireRecord) == 32);

struct MethodTableEndRecord {
  MethodTableRecordHeader header;
  uint64_t classes;
  uint64_t methods;
  uint64_t retired;
  uint64_t methods_lost;  // methods the producer knew of but could not record
};
static_assert(sizeof(MethodTableEndRecord) == 48);

// What an END record counts.
struct MethodTableCounts {
  uint64_t classes = 0;
  uint64_t methods = 0;
  uint64_t retired = 0;
  uint64_t methods_lost = 0;
};

// The table of `dump_path`: "jit-1234.dump" -> "jit-1234.dump.methods".
inline constexpr const char* kMethodTableSuffix = ".methods";

}  // namespace jitdump
