// perf-java's run directory (jitdump/tool/run_dir.h) and the attach's reading of jattach's
// reply (jitdump/tool/jvm_attach.h): what can be checked without root or a JVM. The rest (a
// directory handed to another user, dumps copied from one, a real attach) is the faults suite's
// root-visit tests.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "cpp-tests/temp_dir_test.h"
#include "jitdump/tool/jvm_attach.h"
#include "jitdump/tool/run_dir.h"

namespace jitdump::tool {
namespace {

class RunDirTest : public TempDirTest {};

TEST_F(RunDirTest, MakesANewDirectoryWithJitAndItsCanonicalPath) {
  NewRun run;
  std::string error;
  ASSERT_TRUE(CreateRunDirectory(dir_ + "/./run/", false, 0, 0, {}, &run, &error)) << error;
  EXPECT_EQ(run.path, dir_ + "/run");
  struct stat st {};
  EXPECT_EQ(::stat((dir_ + "/run/jit").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  ::close(run.fd);
}

TEST_F(RunDirTest, RefusesANameThatExists) {
  ASSERT_EQ(::mkdir((dir_ + "/run").c_str(), 0755), 0);
  ASSERT_EQ(::symlink("/", (dir_ + "/run/jit").c_str()), 0);
  NewRun run;
  std::string error;
  EXPECT_FALSE(CreateRunDirectory(dir_ + "/run", false, 0, 0, {}, &run, &error));
  EXPECT_NE(error.find("already exists"), std::string::npos) << error;
  ASSERT_EQ(::symlink("/nonexistent", (dir_ + "/link").c_str()), 0);
  EXPECT_FALSE(CreateRunDirectory(dir_ + "/link", false, 0, 0, {}, &run, &error));  // a dangling link too
  EXPECT_NE(error.find("already exists"), std::string::npos) << error;
}

TEST_F(RunDirTest, RefusesAParentOthersCanChange) {
  const std::string shared = dir_ + "/shared";
  ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  NewRun run;
  std::string error;
  EXPECT_FALSE(CreateRunDirectory(shared + "/run", false, 0, 0, {}, &run, &error));
  EXPECT_NE(error.find("writable by other users (mode 0777"), std::string::npos) << error;
  EXPECT_NE(::access((shared + "/run").c_str(), F_OK), 0);  // nothing made
  ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);              // sticky, as /tmp: others cannot swap ours
  EXPECT_TRUE(CreateRunDirectory(shared + "/run", false, 0, 0, {}, &run, &error)) << error;
  ::close(run.fd);
  // A directory above the parent counts as much as the parent.
  ASSERT_EQ(::chmod(shared.c_str(), 0777), 0);
  ASSERT_EQ(::mkdir((shared + "/mine").c_str(), 0755), 0);
  EXPECT_FALSE(CreateRunDirectory(shared + "/mine/run", false, 0, 0, {}, &run, &error));
  EXPECT_NE(error.find(shared + " is writable by other users"), std::string::npos) << error;
}

TEST_F(RunDirTest, AnExistingRunMustBeARealDirectory) {
  NewRun run;
  std::string error;
  ASSERT_EQ(::mkdir((dir_ + "/run").c_str(), 0755), 0);
  ASSERT_EQ(::symlink((dir_ + "/run").c_str(), (dir_ + "/link").c_str()), 0);
  EXPECT_FALSE(OpenRunDirectory(dir_ + "/link", &run, &error));
  EXPECT_NE(error.find("a symlink is not followed"), std::string::npos) << error;
  ASSERT_TRUE(OpenRunDirectory(dir_ + "/run", &run, &error)) << error;
  EXPECT_EQ(run.path, dir_ + "/run");
  // RUN/jit of the caller: nothing to take.
  ASSERT_EQ(::mkdir((dir_ + "/run/jit").c_str(), 0755), 0);
  std::vector<std::string> notes;
  EXPECT_TRUE(TakeDumps(run.fd, run.path, &notes, &error)) << error;
  EXPECT_TRUE(notes.empty());
  ::close(run.fd);
}

TEST(JattachReply, ALoadIsDoneOnlyWhenAgentOnAttachReturnedZero) {
  AttachReply reply;
  reply.started = true;
  reply.exit_status = 0;
  ParseJattachOutput("Connected to remote JVM\nJVM response code = 0\nreturn code: 0\n", &reply);
  EXPECT_TRUE(Loaded(reply));
  // The agent refused its options.
  reply.exit_status = 255;
  ParseJattachOutput("Connected to remote JVM\nJVM response code = 0\nreturn code: -1\n", &reply);
  EXPECT_EQ(reply.return_code, -1);
  EXPECT_FALSE(Loaded(reply));
  // JDK 21+ refusing the load answers response code 0 and no return code, and jattach 2.1 exits 0.
  reply.exit_status = 0;
  ParseJattachOutput("Connected to remote JVM\nJVM response code = 0\nDynamic agent loading is not enabled. Use "
                     "-XX:+EnableDynamicAgentLoading to launch target VM.\n",
                     &reply);
  EXPECT_EQ(reply.response_code, 0);
  EXPECT_FALSE(reply.return_code.has_value());
  EXPECT_FALSE(Loaded(reply));
}

TEST(JattachReply, AMissingJattachIsNamedWithItsPackage) {
  const AttachReply reply = SendLoad("/nonexistent/jattach", 1, "/x.so", "", 1000);
  EXPECT_FALSE(reply.started);
  EXPECT_NE(reply.error.find("apt-get install jattach"), std::string::npos) << reply.error;
}

}  // namespace
}  // namespace jitdump::tool
