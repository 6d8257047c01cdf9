// Names of HotSpot's method-handle intrinsics (invokeBasic, linkToStatic, linkToSpecial,
// linkToVirtual, linkToInterface, linkToNative): native-wrapper nmethods HotSpot makes per
// basic-type signature, outside java.lang.invoke.MethodHandle's method array. JVMTI reports
// every one of them with the same jmethodID, which answers the name and signature of whichever
// intrinsic got that id first (measured: all 68 of MhIntrinsics' on JDK 17 and 54 on JDK 25 came
// out as `linkToStatic(int, int, MemberName)`), so JVMTI can tell that a load is an intrinsic
// (a native method of MethodHandle) but not which one.
//
// The JVM's own code list (`Compiler.codelist`, one line per nmethod with its method's name and
// signature and its code range) does tell: IntrinsicNamer looks the load's code address up in
// it. Reading the list costs work proportional to the whole code cache (measured: 0.5-1.3 ms
// with ~300 nmethods, ~12 ms with ~1,200), done under HotSpot's CodeCache_lock, so it is read
// only when a load needs it, once for all loads posted before the read, and only if its
// expected cost (the last read's CPU time, scaled by how much the code cache grew since) fits a
// budget: 10 ms plus 0.1% of the time since the first read. (javac, whose 108 intrinsics trickle
// in over its whole run, spent 235 ms of the writer's 557 ms on 26 reads under 20 ms + 1% and
// no expected cost.) Intrinsics come mostly at start-up, when the code cache is small and a read
// cheap; a later one that no read fits the budget for waits (the writer holds its load) until
// one does, and before the writer detaches from the JVM one read past the budget names all that
// still wait, unless it is expected to cost more than kForcedReadMaxNs. A load it cannot name
// (no code list on this JVM, too expensive a list, or no longer in the code cache) is named for
// what is known,
// `java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)`, never after another
// intrinsic. Plain C++: a CodeListSource reads the list (jvm_code_list.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "agent/core/options.h"
#include "agent/core/stats.h"

namespace jitdump_agent {

// The JVMTI class signature of the class whose native methods the intrinsics are.
inline constexpr std::string_view kMethodHandleClass = "Ljava/lang/invoke/MethodHandle;";

class CodeListSource {
 public:
  // The text of Compiler.codelist now; false when it cannot be had (then never asked again).
  virtual bool Read(std::string* text) = 0;

 protected:
  ~CodeListSource() = default;
};

struct IntrinsicName {
  std::string name;               // in the configured style
  std::string perf_map_spelling;  // empty when `name` is it (PerfMapMethodName)
  std::string_view perf_map_name() const { return perf_map_spelling.empty() ? name : perf_map_spelling; }
};

// `java.lang.invoke.MethodHandle.<intrinsic>(signature unknown)` in the given style.
IntrinsicName UnknownIntrinsicName(NameStyle style);

// The intrinsics (native wrappers, compile level 0, of java.lang.invoke.MethodHandle) in the
// text of Compiler.codelist, by code_begin, named in `style`. Lines look like
//   10 0 0 java.lang.invoke.MethodHandle.linkToStatic(IILjava/lang/invoke/MemberName;)I [0x7f.., 0x7f.. - 0x7f..]
// (compile id, level, state, name and descriptor, [header, code_begin - code_end]).
std::unordered_map<uint64_t, IntrinsicName> ParseIntrinsics(std::string_view code_list, NameStyle style);

class IntrinsicNamer {
 public:
  using Clock = uint64_t (*)();  // nanoseconds
  // `clock`: the loads' monotonic clock; `cpu_clock`: the calling thread's CPU time (what reads cost).
  IntrinsicNamer(CodeListSource& source, NameStyle style, Stats& stats, Clock clock, Clock cpu_clock);
  IntrinsicNamer(const IntrinsicNamer&) = delete;
  IntrinsicNamer& operator=(const IntrinsicNamer&) = delete;

  // The name of the intrinsic nmethod at `code_addr`, whose load the JVM posted at `posted`,
  // from a code list read after that: the last one, or one read now if that fits the budget
  // (with `force`, if it is expected to cost at most kForcedReadMaxNs). Valid until the next
  // call; counts the load as named or unnamed. nullptr, counting nothing, when no read fits the
  // budget now: ask again later (with `force`, never nullptr).
  const IntrinsicName* Name(uint64_t code_addr, uint64_t posted, bool force = false);

  static constexpr uint64_t kBudgetBaseNs = 10'000'000;  // what the first reads may cost
  static constexpr uint64_t kBudgetShare = 1000;         // then 1/1000 of the time since
  // The most a forced read may be expected to cost: it runs while the JVM waits in VMDeath
  // (measured: 14-16 ms for javac's ~5,000 nmethods).
  static constexpr uint64_t kForcedReadMaxNs = 50'000'000;

 private:
  // Reads the code list anew if that fits the budget (or, `force`d, kForcedReadMaxNs); false
  // when the table stays as it was.
  bool Refresh(bool force);

  CodeListSource& source_;
  const NameStyle style_;
  Stats& stats_;
  const Clock clock_;
  const Clock cpu_clock_;
  const IntrinsicName unknown_;
  std::unordered_map<uint64_t, IntrinsicName> table_;
  uint64_t table_time_ = 0;    // when the code list in table_ was read; 0: never
  uint64_t first_read_ = 0;    // when the first read started
  uint64_t spent_ns_ = 0;      // CPU time of all reads
  uint64_t last_read_ns_ = 0;  // CPU time of the last read
  uint64_t last_read_nmethods_ = 1;  // the code cache's nmethods then (loads less unloads seen)
  bool unavailable_ = false;   // the source said no: never ask again
};

}  // namespace jitdump_agent
