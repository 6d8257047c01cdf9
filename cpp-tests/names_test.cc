#include "agent/core/names.h"

#include <gtest/gtest.h>

namespace jitdump_agent {
namespace {

TEST(NamesTest, JavaStyleSpellsParametersLikeJava) {
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "Ljava/util/HashMap;", "getNode", "(ILjava/lang/Object;)Ljava/util/HashMap$Node;"),
            "java.util.HashMap.getNode(int, java.lang.Object)");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "Ljava/lang/String;", "hashCode", "()I"), "java.lang.String.hashCode()");
}

// perf's demangler drops [] of object arrays and glues <init> to the class: ours must not.
TEST(NamesTest, JavaStyleKeepsArraysAndConstructors) {
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "LWork;", "main", "([Ljava/lang/String;)V"), "Work.main(java.lang.String[])");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "LWork;", "f", "([Ljava/lang/String;I)V"), "Work.f(java.lang.String[], int)");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "LWork;", "g", "([[I[J)V"), "Work.g(int[][], long[])");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "Lcom/foo/Bar;", "<init>", "()V"), "com.foo.Bar.<init>()");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "Lcom/foo/Bar;", "<clinit>", "()V"), "com.foo.Bar.<clinit>()");
}

// JVMTI spells a hidden class "LWork$$Lambda.0x...;"; the JDK's tools (Class.getName(), jcmd,
// stack traces) print "Work$$Lambda/0x...", and so do we (JDK 17 adds a counter, JDK 25 not).
TEST(NamesTest, HiddenClassesAreSpelledAsTheJdkPrintsThem) {
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "LWork$$Lambda.0x000000004f040210;", "apply",
                             "(Ljava/lang/Object;)Ljava/lang/Object;"),
            "Work$$Lambda/0x000000004f040210.apply(java.lang.Object)");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "Ljava/util/Comparator$$Lambda$233.0x0000000800c4b8a0;", "compare",
                             "(Ljava/lang/Object;Ljava/lang/Object;)I"),
            "java.util.Comparator$$Lambda$233/0x0000000800c4b8a0.compare(java.lang.Object, java.lang.Object)");
  EXPECT_EQ(FormatMethodName(NameStyle::kSimple, "Ljava/lang/invoke/LambdaForm$MH.0x0000000800c0c000;", "invoke",
                             "(Ljava/lang/Object;)Ljava/lang/Object;"),
            "java.lang.invoke.LambdaForm$MH/0x0000000800c0c000.invoke");
  // names=jvm stays JVMTI's own spelling (perf's agent writes the same).
  EXPECT_EQ(FormatMethodName(NameStyle::kJvm, "LWork$$Lambda.0x000000004f040210;", "run", "()V"),
            "LWork$$Lambda.0x000000004f040210;run()V");
  EXPECT_EQ(FormatMethodName(NameStyle::kSimple, "LWork;", "lambda$main$0", "()V"), "Work.lambda$main$0");
}

TEST(NamesTest, JvmStyleIsPerfAgentCompatible) {
  EXPECT_EQ(FormatMethodName(NameStyle::kJvm, "Ljava/lang/String;", "hashCode", "()I"), "Ljava/lang/String;hashCode()I");
}

TEST(NamesTest, SimpleStyleHasNoSignature) {
  EXPECT_EQ(FormatMethodName(NameStyle::kSimple, "Ljava/util/HashMap;", "getNode", "(I)V"), "java.util.HashMap.getNode");
}

TEST(NamesTest, NoSemicolonsOrControlCharactersInReadableStyles) {
  const std::string name = FormatMethodName(NameStyle::kJava, "LOdd;Name;", "we\nird;", "(LA;B;)V");
  EXPECT_EQ(name.find(';'), std::string::npos) << name;
  EXPECT_EQ(name.find('\n'), std::string::npos) << name;
}

TEST(NamesTest, MalformedSignaturesDoNotCrash) {
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "", "m", ""), "?.m()");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "LX;", "m", "(Ljava/lang/Str"), "X.m(java.lang.Str)");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "LX;", "m", "([[["), "X.m(?[][][])");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "LX;", "m", "(Q)V"), "X.m(?)");
}

TEST(NamesTest, ClassNameIsHowJavaSpellsTheClass) {
  EXPECT_EQ(ClassName("Ljava/util/HashMap$Node;"), "java.util.HashMap$Node");
  EXPECT_EQ(ClassName("LWork$$Lambda.0x0000000800c01000;"), "Work$$Lambda/0x0000000800c01000");
  EXPECT_EQ(ClassName("[I"), "int[]");
  EXPECT_EQ(ClassName("LFoo;"), "Foo");
  EXPECT_EQ(ClassName("LA\x01" "B;"), "A?B") << "control characters cleaned";
}

TEST(NamesTest, SourcePathCarriesThePackage) {
  EXPECT_EQ(SourcePath("Ljava/util/HashMap$Node;", "HashMap.java"), "java/util/HashMap.java");
  EXPECT_EQ(SourcePath("LFoo;", "Foo.java"), "Foo.java");
  EXPECT_EQ(SourcePath("Lcom/acme/Kt;", "Kt.kt"), "com/acme/Kt.kt");
  EXPECT_EQ(SourcePath("Lscala/collection/Seq;", "Seq.scala"), "scala/collection/Seq.scala");
  EXPECT_EQ(SourcePath("Lclojure/core$map;", "core.clj"), "clojure/core.clj");
  EXPECT_EQ(SourcePath("Lgroovy/lang/Script;", "Script.groovy"), "groovy/lang/Script.groovy");
}

TEST(NamesTest, SourcePathOfScriptLanguagesIsTheirSourceFile) {
  // Jython compiles fib.py into org/python/pycode/_pyx0: the package is Jython's, not the file's.
  EXPECT_EQ(SourcePath("Lorg/python/pycode/_pyx0;", "fib.py"), "fib.py");
  // JRuby and Nashorn name the script's path.
  EXPECT_EQ(SourcePath("Lorg/jruby/gen/Script;", "/srv/app/main.rb"), "/srv/app/main.rb");
  EXPECT_EQ(SourcePath("Ljdk/nashorn/internal/scripts/Script$Recompilation;", "lib/x.js"), "lib/x.js");
  // A file name with no extension says nothing of where it lives.
  EXPECT_EQ(SourcePath("Lcom/acme/Gen;", "generated"), "generated");
}

TEST(NamesTest, ModifiedUtf8BecomesStandardUtf8) {
  // U+1F600 in modified UTF-8: surrogates D83D DE00, each as a 3-byte sequence.
  EXPECT_EQ(ModifiedUtf8ToUtf8("a\xED\xA0\xBD\xED\xB8\x80" "b"), "a\xF0\x9F\x98\x80" "b");
  EXPECT_EQ(ModifiedUtf8ToUtf8("\xC3\xA9t\xC3\xA9"), "\xC3\xA9t\xC3\xA9");  // BMP text is unchanged
  EXPECT_EQ(ModifiedUtf8ToUtf8("x\xC0\x80y"), "x?y");                            // encoded NUL
  EXPECT_EQ(ModifiedUtf8ToUtf8("\xED\xA0\xBD" "z"), "?z");                         // lone high surrogate
  EXPECT_EQ(ModifiedUtf8ToUtf8("\xED\xB8\x80"), "?");                           // lone low surrogate
  EXPECT_EQ(ModifiedUtf8ToUtf8("\xED"), "\xED");                                 // truncated: left alone
}

// Spelled where the names are made: "" means the name itself is what the perf map gets.
TEST(NamesTest, PerfMapNamesNeverCarrySemicolons) {
  EXPECT_EQ(PerfMapMethodName(NameStyle::kJvm, "Ljava/lang/String;", "hashCode", "()I"), "java.lang.String.hashCode()");
  EXPECT_EQ(PerfMapMethodName(NameStyle::kJvm, "LWork;", "main", "([Ljava/lang/String;)V"),
            "Work.main(java.lang.String[])");
  EXPECT_EQ(FormatMethodName(NameStyle::kJava, "Ljava/util/HashMap;", "getNode", "(I)V"), "java.util.HashMap.getNode(int)");
  EXPECT_EQ(PerfMapMethodName(NameStyle::kJava, "Ljava/util/HashMap;", "getNode", "(I)V"), "");
  EXPECT_EQ(PerfMapMethodName(NameStyle::kSimple, "Ljava/util/HashMap;", "getNode", "(I)V"), "");
  EXPECT_EQ(PerfMapStubName("odd;stub"), "odd:stub");
  EXPECT_EQ(PerfMapStubName("call_stub"), "");
}

TEST(NamesTest, StubNamesAreVerbatimButOneLine) {
  EXPECT_EQ(StubName("I2C/C2I adapters(0xabc)"), "I2C/C2I adapters(0xabc)");
  EXPECT_EQ(StubName("Stub Generator call_stub"), "call_stub");
  EXPECT_EQ(StubName("bad\nname"), "bad name");
  EXPECT_EQ(StubName(""), "[stub]");
}

}  // namespace
}  // namespace jitdump_agent
