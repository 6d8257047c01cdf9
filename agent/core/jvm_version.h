// Which JVMs may have their jmethodIDs looked up outside a callback. Plain C++.
//
// Resolving a deferred load on the writer thread calls JVMTI with jmethodIDs some time after
// the event, when their class may be unloading or their method redefined and purged. HotSpot
// answers such an ID with JVMTI_ERROR_INVALID_METHODID only since two fixes:
//  - JDK-8268364 (JDK 18; in jdk17u-dev since PR #2839, Sept 2024, so 17.0.14): IDs cleared
//    at unload time and the loader's liveness checked, so a lookup during unloading cannot
//    read freed metadata;
//  - JDK-8313816 (JDK 22; jdk21u-dev PR #56 and jdk17u-dev PR #2001, both 2023, so 21.0.3 and
//    17.0.11): IDs of obsolete (redefined) methods cleared before those methods are freed.
// Without them such a lookup can crash the JVM (async-profiler issue #974), so other JVMs
// (and untested ones, such as 11) keep resolving inside the callback, where the nmethod keeps
// its methods alive.
#pragma once

#include <optional>
#include <string_view>

namespace jitdump_agent {

struct JvmVersion {
  int feature = 0;  // 17 in "17.0.21.1+2-Debian-1deb12u1"
  int interim = 0;
  int update = 0;   // 21 there
};

// Parses the leading numbers of java.vm.version / java.version ("17.0.21.1+2-...", "25+36",
// "21-ea"); the old "1.8.0_402" form is read as feature 8. nullopt when there is no number.
std::optional<JvmVersion> ParseJvmVersion(std::string_view text);

// Whether the JVM has both fixes above.
bool LooksUpStaleMethodIdsSafely(const JvmVersion& version);

}  // namespace jitdump_agent
