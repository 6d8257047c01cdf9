// Turning JVM class and method signatures into the names perf and people read. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "agent/core/options.h"

namespace jitdump_agent {

// class_signature: "Ljava/util/HashMap;" (or a hidden class "LWork$$Lambda.0x0000000800c01000;")
// method_signature: the erased JNI descriptor "(ILjava/lang/Object;)Ljava/lang/Object;".
//   kJava:   "java.util.HashMap.getNode(int, java.lang.Object)"
//   kJvm:    "Ljava/util/HashMap;getNode(ILjava/lang/Object;)Ljava/lang/Object;"  (what perf's
//            agent writes; perf's demangler prints it but drops [] of object arrays)
//   kSimple: "java.util.HashMap.getNode"
// The java and simple styles never contain ';' or control characters, so they are safe in
// perf maps and folded stacks.
std::string FormatMethodName(NameStyle style, std::string_view class_signature, std::string_view method_name,
                             std::string_view method_signature);

// A class signature as Java spells the class: "Ljava/util/HashMap$Node;" -> "java.util.HashMap$Node",
// a hidden class as Class.getName() does ("Work$$Lambda/0x0000000800c01000"), an array class
// "[I" as "int[]"; no ';' or control characters.
std::string ClassName(std::string_view class_signature);

// JVMTI strings are modified UTF-8: characters outside the BMP come as two 3-byte surrogates
// and NUL as C0 80. perf, folded stacks and editors want standard UTF-8: surrogate pairs are
// combined into one 4-byte sequence, C0 80 and lone surrogates become '?'.
std::string ModifiedUtf8ToUtf8(std::string_view text);

// The file name perf and source browsers want: the class's package path plus its SourceFile
// attribute, for the languages whose source files live in their package's directory
// (("Ljava/util/HashMap$Node;", "HashMap.java") -> "java/util/HashMap.java"); the SourceFile
// alone for the others (a Jython class "Lorg/python/pycode/_pyx0;" of "fib.py" -> "fib.py").
std::string SourcePath(std::string_view class_signature, std::string_view source_file);

// The perf-map spellings, made together with the names they stand for: perf maps are read
// without demangling and folded-stack tools split on ';'. Each returns "" when the name is fine
// in a perf map as it is.
//  - a method in perf's "Lpkg/Class;method(desc)ret" form (names=jvm) is spelled in the java
//    style there (the java and simple styles already are);
//  - a stub name has its ';' replaced by ':'.
std::string PerfMapMethodName(NameStyle style, std::string_view class_signature, std::string_view method_name,
                              std::string_view method_signature);
std::string PerfMapStubName(std::string_view stub_name);

// Blobs that HotSpot lists when replaying but that never hold code that runs: compiler and
// signature-handler scratch buffers. Writing them would only add dead bytes to the dump.
bool IsScratchBuffer(std::string_view stub_name);

// DynamicCodeGenerated names are VM strings (modified UTF-8, sometimes with a
// "Stub Generator " prefix); keep them verbatim but printable and one line.
std::string StubName(std::string_view vm_name);

}  // namespace jitdump_agent
