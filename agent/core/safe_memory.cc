// Fault-free reads of our own memory (safe_memory.h).
#include "agent/core/safe_memory.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace jitdump_agent {
namespace {

// Reads whose iovecs one process_vm_readv takes (the kernel's limit is IOV_MAX = 1024).
constexpr size_t kBatch = 256;

}  // namespace

SafeMemory::SafeMemory() {
  // A probe read of our own stack: process_vm_readv works unless a seccomp filter (or a kernel
  // without it) refuses it; then the pipe stands in.
  uint64_t probe = 0x5afe;
  uint64_t copy = 0;
  struct iovec local {&copy, sizeof copy};
  struct iovec remote {&probe, sizeof probe};
  direct_ = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof copy) &&
            copy == probe;
  if (!direct_ && ::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) pipe_[0] = pipe_[1] = -1;
}

SafeMemory::~SafeMemory() {
  if (pipe_[0] >= 0) ::close(pipe_[0]);
  if (pipe_[1] >= 0) ::close(pipe_[1]);
}

bool SafeMemory::ReadThroughPipe(uint64_t addr, void* out, size_t size) {
  if (pipe_[1] < 0) return false;
  auto* dest = static_cast<uint8_t*>(out);
  while (size > 0) {
    // At most a page at a time: the pipe holds it whole, and write(2) copies all or nothing of it.
    const size_t chunk = std::min<size_t>(size, 4096);
    const ssize_t written = ::write(pipe_[1], reinterpret_cast<const void*>(addr), chunk);
    if (written != static_cast<ssize_t>(chunk)) {
      if (written > 0) {  // drain what a partial write left
        uint8_t sink[4096];
        (void)!::read(pipe_[0], sink, static_cast<size_t>(written));
      }
      return false;  // EFAULT: not readable
    }
    if (::read(pipe_[0], dest, chunk) != static_cast<ssize_t>(chunk)) return false;
    addr += chunk;
    dest += chunk;
    size -= chunk;
  }
  return true;
}

bool SafeMemory::Read(uint64_t addr, void* out, size_t size) {
  if (size == 0) return true;
  if (!direct_) return ReadThroughPipe(addr, out, size);
  struct iovec local {out, size};
  struct iovec remote {reinterpret_cast<void*>(addr), size};
  return ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

void SafeMemory::ReadEach(std::span<const uint64_t> addrs, size_t width, std::span<uint64_t> out,
                          std::span<bool> ok) {
  const size_t n = std::min({addrs.size(), out.size(), ok.size()});
  std::fill(out.begin(), out.begin() + static_cast<ptrdiff_t>(n), 0);
  std::fill(ok.begin(), ok.begin() + static_cast<ptrdiff_t>(n), false);
  if (width != 1 && width != 2 && width != 4 && width != 8) return;
  uint64_t values[kBatch];
  struct iovec local[kBatch];
  struct iovec remote[kBatch];
  for (size_t begin = 0; begin < n; begin += kBatch) {
    const size_t count = std::min(kBatch, n - begin);
    if (direct_) {
      for (size_t i = 0; i < count; ++i) {
        values[i] = 0;
        local[i] = {&values[i], width};
        remote[i] = {reinterpret_cast<void*>(addrs[begin + i]), width};
      }
      // The kernel copies the iovecs in order and stops at the first it cannot read: what
      // it returns says how many values arrived; the one that failed is skipped and the rest
      // read again.
      size_t done = 0;
      while (done < count) {
        const ssize_t got = ::process_vm_readv(::getpid(), local + done, count - done, remote + done, count - done, 0);
        const size_t whole = got > 0 ? static_cast<size_t>(got) / width : 0;
        for (size_t i = done; i < done + whole; ++i) {
          ok[begin + i] = true;
          out[begin + i] = values[i];
        }
        done += whole + 1;  // past the one that could not be read (or the end)
      }
    } else {
      for (size_t i = 0; i < count; ++i) {
        uint64_t value = 0;
        if (ReadThroughPipe(addrs[begin + i], &value, width)) {
          ok[begin + i] = true;
          out[begin + i] = value;
        }
      }
    }
  }
}

}  // namespace jitdump_agent
