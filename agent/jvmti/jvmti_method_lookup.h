// JVMTI glue: a method's name, source file and line table, asked of JVMTI for the MethodCache
// (method_cache.h). Called inside event callbacks or on the writer thread once it is attached to
// the JVM; never with the method id of an unload.
#pragma once

#include <jvmti.h>

#include "agent/core/load_namer.h"
#include "agent/core/method_cache.h"
#include "agent/core/options.h"
#include "agent/core/stats.h"

namespace jitdump_agent {

class JvmtiMethodLookup final : public MethodLookup {
 public:
  // `want_lines`: the JVM granted the line capabilities and lines= or inline= wants them.
  JvmtiMethodLookup(jvmtiEnv* jvmti, NameStyle style, bool want_lines, Stats& stats)
      : jvmti_(jvmti), style_(style), want_lines_(want_lines), stats_(stats) {}

  void Resolve(MethodId method, MethodInfo& info) override;
  EndLocationAnswer EndLocation(MethodId method, int64_t* end_location) override;

 private:
  jvmtiEnv* const jvmti_;
  const NameStyle style_;
  const bool want_lines_;
  Stats& stats_;
};

// What one side that resolves loads owns (the callbacks, the writer): a method cache over JVMTI
// and the namer that reads it.
struct JvmtiLoadNaming {
  // `line_tables`: the JVM granted the line capabilities (for lines= or inline=); `lines`:
  // that and lines=on.
  JvmtiLoadNaming(jvmtiEnv* jvmti, const Options& options, bool line_tables, bool lines, Stats& stats)
      : lookup(jvmti, options.names, line_tables, stats),
        cache(lookup, options.cache_entries, stats),
        namer(lines, options.inline_info, options.names, stats) {}
  JvmtiMethodLookup lookup;
  MethodCache cache;
  LoadNamer namer;
};

}  // namespace jitdump_agent
