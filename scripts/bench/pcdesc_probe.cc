// A measuring JVMTI agent for scripts/bench/run, loaded next to libjitdumpagent in the same
// JVM (so it sees the very same CompiledMethodLoad events). It writes no jitdump; it records,
// for every compiled method, each PcDesc's pc with
//   - the line perf's own agent (tools/perf/jvmti) would write for it: one DEBUG_INFO entry
//     per PcDesc, from the innermost frame (methods[0], bcis[0]), at the PcDesc's pc, with the
//     full package/File.java name repeated in every entry, no merging; and
//   - the true line of the code run the PcDesc ends (HotSpot's convention, prev.pc < X <=
//     pc): the innermost frame that has a line table;
// plus the length of perf's CODE_LOAD name ("Lpkg/Class;name(sig)ret") and of stub names.
// The run script turns this into perf-format sizes and a byte-weighted line accuracy for both
// formats. Output (text): F idx file | L addr size perf_name_len | P pc perf_file perf_line
// true_file true_line (file -1: none) | M frames distinct_methods (after a load's P lines) |
// S addr size name_len.
//   -agentpath:.../libpcdesc_probe.so=/path/out.txt
//   -agentpath:.../libpcdesc_probe.so=null   (same events, empty callbacks: HotSpot's own cost)
//
// Timing mode (time=PATH): only stamps CLOCK_MONOTONIC at each CompiledMethodLoad and writes
// "addr size numpcs nanos" lines at exit. JVMTI calls the environments of one event in the
// order they were created, so two copies of this library (two file names: two handles, two
// environments), one loaded before libjitdumpagent and one after, bracket the agent's callback:
// the difference of their stamps is the agent's time for that event, per method size.
#include <jvmti.h>
#include <jvmticmlr.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct MethodData {
  int file = -1;                                  // index into files, -1: no source file
  std::vector<std::pair<jlocation, int>> lines;   // LineNumberTable, class-file order
  size_t perf_name_len = 0;
};

jvmtiEnv* g_jvmti = nullptr;
bool g_timing = false;
struct Stamp {
  uintptr_t addr;
  jint size;
  jint numpcs;
  uint64_t nanos;
};
std::vector<Stamp> g_stamps;
std::mutex g_mutex;
FILE* g_out = nullptr;
std::unordered_map<jmethodID, MethodData> g_methods;
std::unordered_map<std::string, int> g_files;

template <typename T>
void Dealloc(T* p) {
  if (p) g_jvmti->Deallocate(reinterpret_cast<unsigned char*>(p));
}

const MethodData& Lookup(jmethodID m) {
  auto [it, inserted] = g_methods.try_emplace(m);
  MethodData& d = it->second;
  if (!inserted) return d;
  char *name = nullptr, *sig = nullptr, *csig = nullptr, *src = nullptr;
  jclass klass = nullptr;
  if (g_jvmti->GetMethodName(m, &name, &sig, nullptr) != JVMTI_ERROR_NONE) return d;
  if (g_jvmti->GetMethodDeclaringClass(m, &klass) == JVMTI_ERROR_NONE &&
      g_jvmti->GetClassSignature(klass, &csig, nullptr) == JVMTI_ERROR_NONE) {
    d.perf_name_len = strlen(csig) + strlen(name) + strlen(sig);
    if (g_jvmti->GetSourceFileName(klass, &src) == JVMTI_ERROR_NONE) {
      // "Ljava/util/HashMap$Node;" + "HashMap.java" -> "java/util/HashMap.java" (as perf's agent)
      std::string cls(csig);
      std::string path;
      if (!cls.empty() && cls[0] == 'L') cls = cls.substr(1);
      const size_t slash = cls.rfind('/');
      if (slash != std::string::npos) path = cls.substr(0, slash + 1);
      path += src;
      auto [fit, fnew] = g_files.try_emplace(path, static_cast<int>(g_files.size()));
      if (fnew) std::fprintf(g_out, "F %d %s\n", fit->second, path.c_str());
      d.file = fit->second;
      jint count = 0;
      jvmtiLineNumberEntry* table = nullptr;
      if (g_jvmti->GetLineNumberTable(m, &count, &table) == JVMTI_ERROR_NONE) {
        for (jint i = 0; i < count; ++i) d.lines.push_back({table[i].start_location, table[i].line_number});
        Dealloc(table);
      }
    }
  }
  Dealloc(name);
  Dealloc(sig);
  Dealloc(csig);
  Dealloc(src);
  return d;
}

// perf's do_get_line_number: first entry whose successor starts after bci, in table order.
int PerfLine(const MethodData& d, jint bci) {
  if (d.lines.empty()) return 0;
  size_t i = 1;
  for (; i < d.lines.size(); ++i) {
    if (d.lines[i].first > bci) break;
  }
  return d.lines[i - 1].second;
}

// The agent's LineTable::LineAt: sorted by bci; negative bci -> first line.
int TrueLine(const MethodData& d, jint bci) {
  if (d.lines.empty()) return 0;
  std::vector<std::pair<jlocation, int>> sorted = d.lines;
  std::stable_sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (bci < 0) return sorted.front().second;
  int line = sorted.front().second;
  for (auto& e : sorted) {
    if (e.first > bci) break;
    line = e.second;
  }
  return line;
}

void JNICALL OnLoad(jvmtiEnv*, jmethodID method, jint code_size, const void* code_addr, jint,
                    const jvmtiAddrLocationMap*, const void* compile_info) {
  if (g_timing) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    jint numpcs = 0;
    for (auto* h = static_cast<const jvmtiCompiledMethodLoadRecordHeader*>(compile_info); h; h = h->next) {
      if (h->kind == JVMTI_CMLR_INLINE_INFO) numpcs += reinterpret_cast<const jvmtiCompiledMethodLoadInlineRecord*>(h)->numpcs;
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_stamps.push_back({reinterpret_cast<uintptr_t>(code_addr), code_size, numpcs,
                        static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec)});
    return;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  const MethodData& root = Lookup(method);
  std::fprintf(g_out, "L %lx %d %zu\n", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(code_addr)),
               code_size, root.perf_name_len);
  size_t frames = 0;
  std::vector<jmethodID> distinct;
  for (auto* h = static_cast<const jvmtiCompiledMethodLoadRecordHeader*>(compile_info); h; h = h->next) {
    if (h->kind != JVMTI_CMLR_INLINE_INFO) continue;
    const auto* rec = reinterpret_cast<const jvmtiCompiledMethodLoadInlineRecord*>(h);
    for (jint i = 0; rec->pcinfo && i < rec->numpcs; ++i) {
      const PCStackInfo& info = rec->pcinfo[i];
      if (info.numstackframes <= 0 || !info.methods || !info.bcis) continue;
      frames += static_cast<size_t>(info.numstackframes);
      for (jint j = 0; j < info.numstackframes; ++j) distinct.push_back(info.methods[j]);
      const MethodData& leaf = Lookup(info.methods[0]);
      int pf = -1, pl = 0;
      if (!leaf.lines.empty()) {
        pf = leaf.file;
        pl = PerfLine(leaf, info.bcis[0]);
      }
      int tf = -1, tl = 0;
      for (jint j = 0; j < info.numstackframes; ++j) {
        const MethodData& f = Lookup(info.methods[j]);
        if (f.file >= 0 && !f.lines.empty()) {
          tf = f.file;
          tl = TrueLine(f, info.bcis[j]);
          break;
        }
      }
      std::fprintf(g_out, "P %lx %d %d %d %d\n", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(info.pc)),
                   pf, pl, tf, tl);
    }
  }
  // How many method lookups a callback makes (one per frame) against how many it needs.
  std::sort(distinct.begin(), distinct.end());
  const size_t unique = static_cast<size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  std::fprintf(g_out, "M %zu %zu\n", frames, unique);
}

void JNICALL OnStub(jvmtiEnv*, const char* name, const void* address, jint length) {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::fprintf(g_out, "S %lx %d %zu\n", static_cast<unsigned long>(reinterpret_cast<uintptr_t>(address)), length,
               name ? strlen(name) : 0);
}

void JNICALL OnDeath(jvmtiEnv*, JNIEnv*) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const Stamp& s : g_stamps) {
    std::fprintf(g_out, "%lx %d %d %llu\n", static_cast<unsigned long>(s.addr), s.size, s.numpcs,
                 static_cast<unsigned long long>(s.nanos));
  }
  g_stamps.clear();
  if (g_out) std::fflush(g_out);
}

void JNICALL IgnoreLoad(jvmtiEnv*, jmethodID, jint, const void*, jint, const jvmtiAddrLocationMap*, const void*) {}
void JNICALL IgnoreUnload(jvmtiEnv*, jmethodID, const void*) {}
void JNICALL IgnoreStub(jvmtiEnv*, const char*, const void*, jint) {}

// Null mode ("null"): the events libjitdumpagent enables, with callbacks that do nothing. What
// HotSpot itself spends delivering them (jmethodIDs, compile_info, the deferred event queue) is
// the floor every agent built on these events pays; the agent's own cost is what lies above it.
jint StartNull() {
  jvmtiCapabilities caps{};
  caps.can_generate_compiled_method_load_events = 1;
  if (g_jvmti->AddCapabilities(&caps) != JVMTI_ERROR_NONE) return JNI_ERR;
  jvmtiEventCallbacks cb{};
  cb.CompiledMethodLoad = IgnoreLoad;
  cb.CompiledMethodUnload = IgnoreUnload;
  cb.DynamicCodeGenerated = IgnoreStub;
  g_jvmti->SetEventCallbacks(&cb, sizeof cb);
  for (jvmtiEvent e : {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
                       JVMTI_EVENT_DYNAMIC_CODE_GENERATED}) {
    g_jvmti->SetEventNotificationMode(JVMTI_ENABLE, e, nullptr);
  }
  return JNI_OK;
}

}  // namespace

extern "C" JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM* vm, char* options, void*) {
  if (vm->GetEnv(reinterpret_cast<void**>(&g_jvmti), JVMTI_VERSION_1_2) != JNI_OK) return JNI_ERR;
  if (options && std::strcmp(options, "null") == 0) return StartNull();
  const char* path = options && *options ? options : "pcdesc-probe.txt";
  if (std::strncmp(path, "time=", 5) == 0) {
    g_timing = true;
    path += 5;
    g_stamps.reserve(1 << 16);
  }
  g_out = std::fopen(path, "w");
  if (!g_out) return JNI_ERR;
  jvmtiCapabilities caps{};
  caps.can_generate_compiled_method_load_events = 1;
  caps.can_get_line_numbers = 1;
  caps.can_get_source_file_name = 1;
  if (g_jvmti->AddCapabilities(&caps) != JVMTI_ERROR_NONE) return JNI_ERR;
  jvmtiEventCallbacks cb{};
  cb.CompiledMethodLoad = OnLoad;
  cb.DynamicCodeGenerated = OnStub;
  cb.VMDeath = OnDeath;
  g_jvmti->SetEventCallbacks(&cb, sizeof cb);
  for (jvmtiEvent e : {JVMTI_EVENT_COMPILED_METHOD_LOAD, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, JVMTI_EVENT_VM_DEATH}) {
    if (g_timing && e == JVMTI_EVENT_DYNAMIC_CODE_GENERATED) continue;
    g_jvmti->SetEventNotificationMode(JVMTI_ENABLE, e, nullptr);
  }
  return JNI_OK;
}
