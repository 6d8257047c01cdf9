// One code event on its way from a JVM callback to the writer thread: a compiled method loaded
// (CompiledMethodLoad), a stub generated (DynamicCodeGenerated) or compiled code unloaded.
//
// The callback copies into the event everything that is valid only while it runs: the code
// bytes and, for a compiled method, either HotSpot's scope chains (method ids and bcis, for the
// writer to resolve: a "deferred" load) or the names and lines the callback resolved itself.
// One malloc'ed block, reserved against the record budget, holds the header and all of that;
// the spans and views below point into the block. The writer encodes the records from it once
// (after it has fixed the timestamp and code_index) and writes the code bytes straight out of
// it, then frees it. Plain C++: a method id and a class pin are opaque integers here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "jitdump/write/encoder.h"

namespace jitdump_agent {

class RecordQueue;

using MethodId = uint64_t;  // a jmethodID's bits; never dereferenced outside the JVMTI glue
using ClassPin = uint64_t;  // a JNI global reference keeping a class loaded; 0: none

// One frame of a scope chain as HotSpot reports it.
struct ScopeFrame {
  MethodId method = 0;
  int64_t bci = 0;
};

// How many PcDescs and frames a load's scope chains hold.
struct ScopeCounts {
  size_t pcs = 0;
  size_t frames = 0;
};

// One PcDesc: its pc and its chain, frames[first, first + count) of the load, innermost first.
struct ScopePc {
  uint64_t pc = 0;
  uint32_t first = 0;
  uint32_t count = 0;
};

// The names and lines of one code blob, ready to encode. Views, valid as long as whatever they
// point into (an event, or the resolver's cache until its next lookup).
struct LoadNames {
  std::string_view name;                               // the CODE_LOAD name
  std::string_view perf_map_name;                      // its perf-map spelling (often the same bytes)
  std::span<const jitdump::DebugEntry> lines;          // DEBUG_INFO entries; empty: no DEBUG_INFO
  const jitdump::InlineDebugInfo* inline_info = nullptr;  // samply's record; null: none
  // A method-handle intrinsic: `name` is a placeholder that says its signature is unknown,
  // and the writer names it from the JVM's code list if it can (intrinsic_names.h), counting
  // it named or unnamed then.
  bool intrinsic_placeholder = false;
};

// What every callback hands over about its code blob: views into memory that is valid only
// during the callback.
struct CodeBlob {
  uint64_t timestamp = 0;      // CLOCK_MONOTONIC, taken first thing in the callback
  uint32_t tid = 0;
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  const void* code = nullptr;  // code_size bytes to copy; nullptr: the dump gets zeros (code=off)
  bool replayed = false;       // delivered inside GenerateEvents
};

enum class EventKind : uint8_t {
  kCompiledLoad,  // CompiledMethodLoad: resolved (names set) or deferred (method + scopes set)
  kStub,          // DynamicCodeGenerated: names set
  kUnload,        // CompiledMethodUnload: code_addr and method only
  kClassPrepared,  // ClassPrepare: the class's pin and the event's timestamp, for the method table
};

struct CodeEvent {
  EventKind kind = EventKind::kUnload;
  bool replayed = false;
  // A stub HotSpot lists when replaying but that never holds running code (decided where the
  // stub is named: IsScratchBuffer).
  bool scratch_buffer = false;
  // kCompiledLoad: true when the callback resolved it (names set), false when the writer must
  // (method, pcs, frames and pin set).
  bool resolved = false;
  uint32_t tid = 0;
  uint64_t timestamp = 0;
  uint64_t code_addr = 0;
  uint64_t code_size = 0;
  MethodId method = 0;
  ClassPin pin = 0;                 // released by whoever resolves the load
  const uint8_t* code = nullptr;    // code_size bytes in this block; nullptr: zeros
  std::span<const ScopePc> pcs;
  std::span<const ScopeFrame> frames;
  LoadNames names;
  jitdump::InlineDebugInfo inline_info;  // what names.inline_info points at, when it is set
  size_t accounted = 0;             // bytes reserved against the budget (RecordQueue)
};

// Each returns nullptr when the event could not be allocated (counted as lost by the queue) or
// would exceed what the format can hold (counted as an allocation loss).
//
// A CompiledMethodLoad for the writer to resolve: its method, scope chains and class pin.
CodeEvent* NewDeferredLoad(RecordQueue& queue, const CodeBlob& blob, MethodId method,
                           std::span<const ScopePc> pcs, std::span<const ScopeFrame> frames, ClassPin pin);
// The same with the chains written straight into the event by `fill(source, pcs, frames)`, whose
// spans have exactly `counts` elements (the callback's compile_info: compile_info.h).
using ScopeFiller = void (*)(const void* source, std::span<ScopePc> pcs, std::span<ScopeFrame> frames);
CodeEvent* NewDeferredLoad(RecordQueue& queue, const CodeBlob& blob, MethodId method, ScopeCounts counts,
                           ScopeFiller fill, const void* source, ClassPin pin);
// A compiled method or a stub whose names are known: `names` is copied into the event.
CodeEvent* NewNamedLoad(RecordQueue& queue, EventKind kind, const CodeBlob& blob, const LoadNames& names,
                        bool scratch_buffer = false);
CodeEvent* NewUnload(RecordQueue& queue, uint64_t timestamp, uint64_t code_addr, MethodId method);
// A class prepared at `timestamp`, pinned for the writer to describe (method_table_writer.h).
CodeEvent* NewClassPrepared(RecordQueue& queue, uint64_t timestamp, ClassPin pin);

}  // namespace jitdump_agent
