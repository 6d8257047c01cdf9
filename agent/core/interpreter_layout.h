// Whether the agent knows this JVM's interpreted frames well enough to describe them, and how.
//
// Naming an interpreted frame needs facts about HotSpot's internals that no API promises:
//  - a jmethodID points at its method's Method* (HotSpot up to JDK 25; JDK 26 made jmethodIDs
//    keys of a table, JDK-8268406);
//  - an x86-64 interpreter frame keeps its Method* 3 words below the frame pointer, its
//    bytecode pointer 8 words below, and its fixed part ends 9 words below (frame_x86.hpp:
//    interpreter_frame_method_offset, _bcp_offset, _initial_sp_offset); the executing frame's
//    bytecode pointer lives in r13, and rbx holds the Method* while a method's frame is built;
//  - a Method*'s bytecodes follow its ConstMethod (Method::_constMethod, sizeof(ConstMethod),
//    ConstMethod::_code_size), which VMStructs describe.
// Checked against OpenJDK 17.0.21 and Temurin 25.0.3 (perf samples of -Xint workloads, the perf
// suite's interpreted-frames tests); the frame's constants are the same in every release from
// 9 to 25. So the feature runs on x86-64 JVMs of feature releases 17 to 25 whose VMStructs
// give the three ConstMethod facts and whose two exported frame constants (the slots just
// above the Method*: sender sp -1, last sp -2) are where that layout puts them. Anything else
// (JDK 26+, 11, a JVM without VMStructs or with a moved field) turns the feature off, with the
// reason. Plain C++.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "agent/core/jvm_version.h"
#include "agent/core/vm_structs.h"

namespace jitdump_agent {

struct InterpreterLayout {
  uint32_t jvm_feature = 0;
  uint64_t method_const_method = 0;     // offset of Method::_constMethod
  uint64_t const_method_size = 0;       // sizeof(ConstMethod): the bytecodes follow it
  uint64_t const_method_code_size = 0;  // offset of ConstMethod::_code_size (a u2)
  int32_t method_slot = -3;
  int32_t bcp_slot = -8;
  int32_t complete_slot = -9;
};

struct LayoutDecision {
  std::optional<InterpreterLayout> layout;
  std::string why_not;  // when there is no layout: one sentence, for the one message at start-up
};

inline constexpr int kFirstKnownFeature = 17;
inline constexpr int kLastKnownFeature = 25;

// `structs` null: the JVM exports no VMStructs. `x86_64`: the agent runs on x86-64.
LayoutDecision DecideInterpreterLayout(const VmStructs* structs, const std::optional<JvmVersion>& version,
                                       bool x86_64);

}  // namespace jitdump_agent
