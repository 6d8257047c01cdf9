// An LD_PRELOAD shim that makes a real HotSpot JVM look, to libjitdumpagent only, like a JVM whose
// interpreted frames the agent cannot know (the interp=on tests of test_method_table.py):
//   VMSTRUCTS_SHIM=hide   the VMStructs tables are not exported (a JVM built without them)
//   VMSTRUCTS_SHIM=frame  they are, but frame::interpreter_frame_sender_sp_offset reads -2: the
//                         interpreter's frame is laid out otherwise than the agent knows
// It interposes dlsym; a call from any other library (HotSpot resolving JNI functions, say) goes
// straight to the real one.
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

using dlsym_fn = void* (*)(void*, const char*);

dlsym_fn real_dlsym() {
  static dlsym_fn real;
  if (real == nullptr) {
    real = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
    if (real == nullptr) real = reinterpret_cast<dlsym_fn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
  }
  return real;
}

bool called_by_agent(const void* caller) {
  Dl_info info;
  return dladdr(caller, &info) != 0 && info.dli_fname != nullptr &&
         std::strstr(info.dli_fname, "libjitdumpagent") != nullptr;
}

// A copy of the int constants table with the sender sp offset changed, and a pointer to it (the
// exported symbol is a pointer to the table).
char* moved_constants;
char* moved_constants_pointer;

void* MovedFrameConstants(void* handle) {
  if (moved_constants_pointer != nullptr) return &moved_constants_pointer;
  dlsym_fn real = real_dlsym();
  auto* table = static_cast<char**>(real(handle, "gHotSpotVMIntConstants"));
  auto* stride = static_cast<uint64_t*>(real(handle, "gHotSpotVMIntConstantEntryArrayStride"));
  auto* name_at = static_cast<uint64_t*>(real(handle, "gHotSpotVMIntConstantEntryNameOffset"));
  auto* value_at = static_cast<uint64_t*>(real(handle, "gHotSpotVMIntConstantEntryValueOffset"));
  if (table == nullptr || stride == nullptr || name_at == nullptr || value_at == nullptr) return table;
  size_t count = 0;
  while (*reinterpret_cast<const char**>(*table + count * *stride + *name_at) != nullptr) ++count;
  moved_constants = static_cast<char*>(std::malloc((count + 1) * *stride));
  if (moved_constants == nullptr) return table;
  std::memcpy(moved_constants, *table, (count + 1) * *stride);
  for (size_t i = 0; i < count; ++i) {
    char* entry = moved_constants + i * *stride;
    if (std::strcmp(*reinterpret_cast<const char**>(entry + *name_at), "frame::interpreter_frame_sender_sp_offset") == 0) {
      *reinterpret_cast<int32_t*>(entry + *value_at) = -2;
    }
  }
  moved_constants_pointer = moved_constants;
  return &moved_constants_pointer;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* symbol) {
  dlsym_fn real = real_dlsym();
  const char* mode = std::getenv("VMSTRUCTS_SHIM");
  if (mode == nullptr || std::strncmp(symbol, "gHotSpotVM", 10) != 0 ||
      !called_by_agent(__builtin_return_address(0))) {
    return real(handle, symbol);
  }
  if (std::strcmp(mode, "hide") == 0) return nullptr;
  if (std::strcmp(mode, "frame") == 0 && std::strcmp(symbol, "gHotSpotVMIntConstants") == 0) {
    return MovedFrameConstants(handle);
  }
  return real(handle, symbol);
}
