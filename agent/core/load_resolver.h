// How the writer thread resolves deferred loads: CompiledMethodLoad events the callback copied
// without naming them (code_event.h). The agent's implementation (jvm_resolver.h) is JVMTI
// glue: JVMTI answers only threads attached to the JVM. The lifecycle (lifecycle.h) decides when
// the writer attaches and detaches; the writer resolves and forgets.
#pragma once

#include "agent/core/code_event.h"
#include "agent/core/intrinsic_names.h"

namespace jitdump_agent {

class MethodCache;

class LoadResolver {
 public:
  // On the writer thread. false: the writer cannot resolve, loads stay resolved in callbacks.
  virtual bool Attach() = 0;
  // On the writer thread, once nothing deferred can still arrive.
  virtual void Detach() = 0;
  // On the attached writer thread: the names and lines of a deferred load, valid until the next
  // Resolve or Forget. Releases the load's class pin. false when it could not be resolved
  // (counted in the stats); the pin is released all the same.
  virtual bool Resolve(const CodeEvent& load, LoadNames* names) = 0;
  // On the attached writer thread: the name of the method-handle intrinsic at `code_addr`,
  // posted at `posted`, from the JVM's code list (IntrinsicNamer::Name: counted named or
  // unnamed there; `later` when no read fits its budget now and `force` is false). Valid until
  // the next call. No name and not `later` when this resolver reads no code list
  // (intrinsics=off).
  struct IntrinsicAnswer {
    const IntrinsicName* name = nullptr;
    bool later = false;
  };
  virtual IntrinsicAnswer NameIntrinsic(uint64_t /*code_addr*/, uint64_t /*posted*/, bool /*force*/) { return {}; }
  // On the writer thread: code of `method` was unloaded, drop what is cached about it.
  virtual void Forget(MethodId method) = 0;
  // Any thread, once the writer resolves no more (VM death): moves the names it resolved into
  // `cache`, so loads posted later are named without asking JVMTI. Best effort, bounded.
  // Waits at most `max_wait_ms` for the caches' locks.
  virtual void HandNamesTo(MethodCache& /*cache*/, uint32_t /*max_wait_ms*/) {}

 protected:
  ~LoadResolver() = default;
};

}  // namespace jitdump_agent
