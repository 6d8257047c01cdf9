// JVMTI glue: the JVM's side of the method table (method_table_writer.h's MethodSource), on the
// writer thread while it is attached to the JVM.
//
// A class's methods come from JVMTI (GetClassMethods, names, line tables, modifiers); each
// method's Method* is the word its jmethodID points at (HotSpot up to JDK 25: a jmethodID is the
// address of a slot holding the Method*, in blocks HotSpot never frees, so reading the slot
// cannot fault even after the class is gone). Where its bytecodes lie is read from the Method
// and its ConstMethod at the offsets VMStructs gives (interpreter_layout.h), through SafeMemory:
// a wrong address fails the read instead of faulting. Every method read that way is checked
// against JVMTI: its bytecode count must be GetMethodLocation's last location plus one (every
// method until kVerdictAfter have been checked, then one in kCheckEvery, and every redefined
// one). A method that fails the check is left out; if more than kMaxMismatchPercent of the
// checked ones fail, the layout is wrong and the source says so (refuted), and the writer closes
// the table. Two JVMTI calls describe a method (its name and descriptor; its line table, whose
// answer also says whether it is native), a few more each class.
#pragma once

#include <jni.h>
#include <jvmti.h>

#include <cstdint>

#include "agent/core/interpreter_layout.h"
#include "agent/core/method_table_writer.h"
#include "agent/core/options.h"
#include "agent/core/safe_memory.h"
#include "agent/core/stats.h"

namespace jitdump_agent {

class JvmMethodSource final : public MethodSource {
 public:
  // Checked methods after which the verdict on the layout is taken, and the share of them that
  // may fail the check (a method redefined between the two reads fails it honestly).
  static constexpr uint64_t kVerdictAfter = 200;
  static constexpr uint64_t kMaxMismatchPercent = 5;
  static constexpr uint64_t kCheckEvery = 16;

  // What a jmethodID's slot holds: its Method*. HotSpot's: the word the id points at (tests give
  // their own: a fake JVM's ids are no slots).
  using SlotReader = uint64_t (*)(MethodId id);
  static uint64_t ReadSlot(MethodId id);

  JvmMethodSource(JavaVM* vm, jvmtiEnv* jvmti, const InterpreterLayout& layout, Stats& stats,
                  SlotReader read_slot = ReadSlot)
      : vm_(vm), jvmti_(jvmti), layout_(layout), stats_(stats), read_slot_(read_slot) {}

  bool DescribePinned(ClassPin pin, ClassMethods* out) override;
  void DescribeLoaded(const std::function<void(const ClassMethods&)>& each) override;
  uint64_t CurrentMethod(MethodId id) override;
  bool DescribeClassOf(MethodId id, ClassMethods* out) override;

  // Whether the checks have shown that the layout does not hold on this JVM.
  bool refuted() const override;

 private:
  // Names, source file and the methods of `klass` (a reference valid on this thread); with
  // `check_all` every method is checked against JVMTI (a redefined class: what the sweep trusts
  // least).
  bool Describe(jclass klass, ClassMethods* out, bool check_all = false);
  // Describes one method of the class into `out` (name, descriptor, modifiers, line table);
  // false when JVMTI cannot.
  bool DescribeOne(jmethodID method, ClassMethods::Method* out);
  // The method's last bytecode index from JVMTI when it is to be checked (see above), else
  // kUnchecked.
  static constexpr int64_t kUnchecked = INT64_MIN;
  int64_t EndLocationToCheck(jmethodID method, const ClassMethods::Method& m, bool always);
  // Reads the Method*s and bytecode ranges of `out`'s methods, leaving out (and counting) those
  // that cannot be read or fail the check against `end_locations` (one per method).
  void Locate(ClassMethods* out, const std::vector<int64_t>& end_locations);
  JNIEnv* Env();

  JavaVM* const vm_;
  jvmtiEnv* const jvmti_;
  const InterpreterLayout layout_;
  Stats& stats_;
  const SlotReader read_slot_;
  SafeMemory memory_;
  uint64_t checked_ = 0;
  uint64_t mismatched_ = 0;
  uint64_t unchecked_ = 0;
};

}  // namespace jitdump_agent
