// Which JVMs get their loads resolved on the writer thread under resolve=auto.
#include "agent/core/jvm_version.h"

#include <gtest/gtest.h>

namespace jitdump_agent {
namespace {

JvmVersion Parsed(const char* text) {
  const auto version = ParseJvmVersion(text);
  EXPECT_TRUE(version.has_value()) << text;
  return version.value_or(JvmVersion{});
}

TEST(JvmVersionTest, ReadsTheVersionStringsJvmsReport) {
  const JvmVersion debian = Parsed("17.0.21.1+2-Debian-1deb12u1");  // java.vm.version here
  EXPECT_EQ(debian.feature, 17);
  EXPECT_EQ(debian.interim, 0);
  EXPECT_EQ(debian.update, 21);
  const JvmVersion temurin = Parsed("25.0.1+8-LTS");
  EXPECT_EQ(temurin.feature, 25);
  EXPECT_EQ(temurin.update, 1);
  const JvmVersion ga = Parsed("21+35");  // a GA build has no update number
  EXPECT_EQ(ga.feature, 21);
  EXPECT_EQ(ga.update, 0);
  EXPECT_EQ(Parsed("26-ea").feature, 26);
  const JvmVersion eight = Parsed("1.8.0_402-b06");
  EXPECT_EQ(eight.feature, 8);
  EXPECT_EQ(eight.update, 402);
  for (const char* bad : {"", "ea", "+17", "99999999999"}) EXPECT_FALSE(ParseJvmVersion(bad).has_value()) << bad;
}

TEST(JvmVersionTest, OnlyJvmsWithBothJmethodIdFixesResolveOnTheWriter) {
  for (const char* safe : {"17.0.14+7", "17.0.21.1+2-Debian-1deb12u1", "21.0.3+9", "22+36", "25.0.1+8-LTS", "26-ea"}) {
    EXPECT_TRUE(LooksUpStaleMethodIdsSafely(Parsed(safe))) << safe;
  }
  for (const char* unsafe : {"17.0.13+11", "17+35", "18.0.2+9", "20.0.2+9", "21.0.2+13", "21+35", "11.0.25+9",
                             "1.8.0_402"}) {
    EXPECT_FALSE(LooksUpStaleMethodIdsSafely(Parsed(unsafe))) << unsafe;
  }
}

}  // namespace
}  // namespace jitdump_agent
