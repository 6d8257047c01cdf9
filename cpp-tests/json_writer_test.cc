// The agent's JSON writer, read back by an independent parser (nlohmann-json, what the tool uses).
#include "agent/core/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/core/stats.h"

namespace jitdump_agent {
namespace {

TEST(JsonWriterTest, NestedObjectsParse) {
  JsonWriter json;
  json.Field("a", uint64_t{1});
  json.Begin("empty").End();
  json.Begin("b").Field("c", "x").Begin("d").Field("e", UINT64_MAX).End().Field("f", uint64_t{0}).End();
  json.Field("g", "");
  const nlohmann::json parsed = nlohmann::json::parse(json.Finish());
  EXPECT_EQ(parsed["a"], 1);
  EXPECT_TRUE(parsed["empty"].is_object() && parsed["empty"].empty());
  EXPECT_EQ(parsed["b"]["c"], "x");
  EXPECT_EQ(parsed["b"]["d"]["e"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ(parsed["b"]["f"], 0);
  EXPECT_EQ(parsed["g"], "");
}

TEST(JsonWriterTest, FinishClosesWhatIsOpen) {
  JsonWriter json;
  json.Begin("a").Begin("b").Field("c", uint64_t{2});
  EXPECT_EQ(json.Finish(), "{\"a\":{\"b\":{\"c\":2}}}\n");
}

TEST(JsonWriterTest, StringsAreEscapedAndAlwaysValidUtf8) {
  JsonWriter json;
  json.Field("quote", "a\"b\\c\n\x01");
  json.Field("utf8", "Grüße 日本 \xF0\x9F\x98\x80");
  json.Field("latin1", "caf\xE9/x");               // a path in Latin-1
  json.Field("overlong", "\xC0\xAF|\xED\xA0\x80|\xF4\x90\x80\x80");  // overlong '/', a surrogate, > U+10FFFF
  json.Field("cut", "ab\xE6\x97");                 // a sequence cut short at the end
  const nlohmann::json parsed = nlohmann::json::parse(json.Finish());  // throws on invalid UTF-8
  EXPECT_EQ(parsed["quote"], "a\"b\\c\n\x01");
  EXPECT_EQ(parsed["utf8"], "Grüße 日本 \xF0\x9F\x98\x80");
  EXPECT_EQ(parsed["latin1"], "caf\uFFFD/x");
  EXPECT_EQ(parsed["overlong"], "\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD\uFFFD");
  EXPECT_EQ(parsed["cut"], "ab\uFFFD\uFFFD");
}

// Every section of the statistics parses, whatever the counters hold.
TEST(JsonWriterTest, StatsParseWhole) {
  Stats s;
  s.compiled_method_load.Add(3);
  s.lost_size_cap.Add(2);
  s.load_latency.Record(4000);
  const nlohmann::json parsed = nlohmann::json::parse(s.ToJson("/tmp/jit-\xFF.dump", "/tmp/perf-1.map", "stop"));
  EXPECT_EQ(parsed["dump"], "/tmp/jit-\uFFFD.dump");
  EXPECT_EQ(parsed["events"]["compiled_method_load"], 3);
  EXPECT_EQ(parsed["lost"]["total"], 2);
  EXPECT_EQ(parsed["lost"]["size_cap"], 2);
  EXPECT_EQ(parsed["session"]["stopped_by"], "stop");
  EXPECT_EQ(parsed["callback_latency"]["compiled_method_load"]["count"], 1);
  EXPECT_EQ(parsed["writer"].size(), 3u);
  for (const char* section : {"events", "written", "lost", "queue", "structures", "session", "unnamed_loads",
                              "method_handle_intrinsics", "method_cache", "callback_latency", "callback_cpu",
                              "writer_latency", "writer"}) {
    EXPECT_TRUE(parsed[section].is_object()) << section;
  }
}

}  // namespace
}  // namespace jitdump_agent
