// Reading this process's memory without ever faulting: the JVM's metadata (a Method, its
// ConstMethod) is read where the agent cannot prove it is still mapped. The kernel copies it
// (process_vm_readv on our own pid), so an address that is unmapped or unreadable fails the
// read with EFAULT instead of raising SIGSEGV in the JVM. Where process_vm_readv is refused (a
// seccomp profile may forbid it), a pipe does the same: write(2) from the address fails with
// EFAULT the same way. Plain C++; no locks, no allocation after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace jitdump_agent {

class SafeMemory {
 public:
  SafeMemory();
  ~SafeMemory();
  SafeMemory(const SafeMemory&) = delete;
  SafeMemory& operator=(const SafeMemory&) = delete;

  // Copies `size` bytes at `addr` into `out`; false when any of them cannot be read.
  bool Read(uint64_t addr, void* out, size_t size);

  // Reads `out.size()` values of `width` bytes (1, 2, 4 or 8), each from its own address, in
  // few system calls; ok[i] says whether value i could be read (out[i] is 0 otherwise).
  void ReadEach(std::span<const uint64_t> addrs, size_t width, std::span<uint64_t> out, std::span<bool> ok);

  // Whether process_vm_readv works here (else the pipe stands in).
  bool direct() const { return direct_; }

 private:
  bool ReadThroughPipe(uint64_t addr, void* out, size_t size);

  bool direct_ = true;
  int pipe_[2] = {-1, -1};
};

}  // namespace jitdump_agent
