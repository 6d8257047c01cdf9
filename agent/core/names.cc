// Java, JVM and perf-map spellings of methods and stubs (names.h).
#include "agent/core/names.h"

#include <cstdint>

namespace jitdump_agent {
namespace {

// Appends the Java spelling of the descriptor starting at `sig[pos]`, advancing `pos`.
void AppendType(std::string_view sig, size_t& pos, std::string& out) {
  int dimensions = 0;
  while (pos < sig.size() && sig[pos] == '[') {
    ++dimensions;
    ++pos;
  }
  if (pos >= sig.size()) {
    out += "?";
  } else {
    const char c = sig[pos++];
    switch (c) {
      case 'Z': out += "boolean"; break;
      case 'B': out += "byte"; break;
      case 'C': out += "char"; break;
      case 'S': out += "short"; break;
      case 'I': out += "int"; break;
      case 'J': out += "long"; break;
      case 'F': out += "float"; break;
      case 'D': out += "double"; break;
      case 'V': out += "void"; break;
      case 'L': {
        const size_t end = sig.find(';', pos);
        const size_t stop = end == std::string_view::npos ? sig.size() : end;
        // Package separators '/' become '.'. A '.' cannot occur in a class's internal name
        // except in a hidden class, where JVMTI writes "LWork$$Lambda$14.0x0000000800c01000;":
        // spelled with '/' as Class.getName(), jcmd and stack traces print it
        // ("Work$$Lambda$14/0x0000000800c01000"). perf keeps the '/': checked with Debian's
        // perf 6.1, `perf report`/`perf script` after `perf inject --jit` (ELF symbols in the
        // jitted-*.so) and `perf report` from the perf map alike show
        // "java.lang.invoke.LambdaForm$DMH/0x00007f8374009800.newInvokeSpecial(...)".
        for (size_t i = pos; i < stop; ++i) out.push_back(sig[i] == '/' ? '.' : sig[i] == '.' ? '/' : sig[i]);
        pos = end == std::string_view::npos ? sig.size() : end + 1;
        break;
      }
      default: out += "?"; break;
    }
  }
  for (int i = 0; i < dimensions; ++i) out += "[]";
}

// Control characters and ';' would break perf-map lines or folded stacks.
char CleanChar(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f ? '?' : c == ';' ? ':' : c;
}

void AppendClean(std::string_view text, std::string& out) {
  for (char c : text) out.push_back(CleanChar(c));
}

// Appends the cleaned Java spelling of the type at `sig[pos]`, in place: no temporary string
// per type (names are formatted inside the JVM's callbacks, where every allocation counts).
void AppendCleanType(std::string_view sig, size_t& pos, std::string& out) {
  const size_t start = out.size();
  AppendType(sig, pos, out);
  for (size_t i = start; i < out.size(); ++i) out[i] = CleanChar(out[i]);
}

// A 3-byte sequence ED A0..BF xx encodes a UTF-16 surrogate; returns it, or 0.
uint32_t SurrogateAt(std::string_view s, size_t i) {
  if (i + 2 >= s.size() || static_cast<unsigned char>(s[i]) != 0xED) return 0;
  const unsigned char b1 = static_cast<unsigned char>(s[i + 1]), b2 = static_cast<unsigned char>(s[i + 2]);
  if (b1 < 0xA0 || b1 > 0xBF || (b2 & 0xC0) != 0x80) return 0;
  return 0xD000u | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
}

}  // namespace

std::string ModifiedUtf8ToUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {  // ASCII, nearly every byte of a Java name
      out.push_back(static_cast<char>(c));
      continue;
    }
    if (c == 0xC0 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80) {
      out.push_back('?');  // an encoded NUL
      ++i;
      continue;
    }
    const uint32_t high = SurrogateAt(s, i);
    if (high == 0) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    const uint32_t low = SurrogateAt(s, i + 3);
    if (high >= 0xDC00 || low < 0xDC00) {
      out.push_back('?');  // lone or reversed surrogate
      i += 2;
      continue;
    }
    const uint32_t cp = 0x10000u + ((high - 0xD800u) << 10) + (low - 0xDC00u);
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    i += 5;
  }
  return out;
}

std::string FormatMethodName(NameStyle style, std::string_view class_signature, std::string_view method_name,
                             std::string_view method_signature) {
  std::string out;
  if (style == NameStyle::kJvm) {
    out.reserve(class_signature.size() + method_name.size() + method_signature.size());
    for (std::string_view part : {class_signature, method_name, method_signature}) {
      for (char c : part) out.push_back(static_cast<unsigned char>(c) < 0x20 ? '?' : c);
    }
    return out;
  }
  out.reserve(class_signature.size() + method_name.size() + 2 * method_signature.size());
  size_t class_pos = 0;
  AppendCleanType(class_signature, class_pos, out);
  out.push_back('.');
  AppendClean(method_name, out);
  if (style == NameStyle::kSimple) return out;
  out.push_back('(');
  size_t pos = method_signature.empty() || method_signature[0] != '(' ? std::string_view::npos : 1;
  bool first = true;
  while (pos != std::string_view::npos && pos < method_signature.size() && method_signature[pos] != ')') {
    if (!first) out += ", ";
    first = false;
    AppendCleanType(method_signature, pos, out);
  }
  out.push_back(')');
  return out;
}

namespace {

// javac, kotlinc, scalac, groovyc and Clojure name a class's SourceFile by its file name alone and
// keep the file in the package's directory (Clojure's loader requires it; the others by
// convention). Other languages put whatever they like there: Jython a script's own name under a
// generated package (org/python/pycode/), JRuby and Nashorn a script path.
bool NamedInPackageDirectory(std::string_view source_file) {
  if (source_file.find('/') != std::string_view::npos) return false;
  const size_t dot = source_file.rfind('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view extension = source_file.substr(dot + 1);
  for (std::string_view known : {"java", "kt", "scala", "groovy", "clj", "cljc"}) {
    if (extension == known) return true;
  }
  return false;
}

}  // namespace

std::string ClassName(std::string_view class_signature) {
  std::string out;
  size_t pos = 0;
  AppendCleanType(class_signature, pos, out);
  return out;
}

std::string SourcePath(std::string_view class_signature, std::string_view source_file) {
  std::string out;
  if (!NamedInPackageDirectory(source_file)) {
    AppendClean(source_file, out);
    return out;
  }
  std::string_view name = class_signature;
  if (!name.empty() && name.front() == 'L') name.remove_prefix(1);
  if (!name.empty() && name.back() == ';') name.remove_suffix(1);
  const size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) out.append(name.substr(0, slash + 1));
  AppendClean(source_file, out);
  return out;
}

std::string PerfMapMethodName(NameStyle style, std::string_view class_signature, std::string_view method_name,
                              std::string_view method_signature) {
  if (style != NameStyle::kJvm) return {};
  return FormatMethodName(NameStyle::kJava, class_signature, method_name, method_signature);
}

std::string PerfMapStubName(std::string_view stub_name) {
  if (stub_name.find(';') == std::string_view::npos) return {};
  std::string out(stub_name);
  for (char& c : out) {
    if (c == ';') c = ':';
  }
  return out;
}

bool IsScratchBuffer(std::string_view name) {
  return name == "C1 temporary CodeBuffer" || name == "Signature Handler Temp Buffer";
}

std::string StubName(std::string_view vm_name) {
  constexpr std::string_view kPrefix = "Stub Generator ";
  if (vm_name.substr(0, kPrefix.size()) == kPrefix) vm_name.remove_prefix(kPrefix.size());
  std::string out;
  for (char c : vm_name) out.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  if (out.empty()) out = "[stub]";
  return out;
}

}  // namespace jitdump_agent
