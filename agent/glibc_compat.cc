// Keeps libjitdumpagent.so loadable on older glibc than the one it was built on.
//
// The static libstdc++ we link (so the agent does not depend on the libstdc++ of whatever image
// the JVM runs in) refers to arc4random, which glibc only has since 2.36. If the .so imported
// it, dlopen would fail on Ubuntu 22.04 or RHEL 9 and the JVM would refuse to start. This local
// definition satisfies the reference at link time (the version script keeps it hidden), so the
// .so needs only glibc 2.34 (the release that merged libpthread into libc).
#include <sys/random.h>

#include <cstdint>

extern "C" __attribute__((visibility("hidden"))) uint32_t arc4random(void) {
  uint32_t value = 0;
  // getrandom of 4 bytes never returns short; on an ancient kernel without it, fall back to a
  // counter mix (std::random_device is the only user, and the agent never uses it).
  if (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    static uint32_t counter = 0x9e3779b9u;
    counter = counter * 1664525u + 1013904223u;
    value = counter;
  }
  return value;
}
