// The memory-isolation exploit against a real fabricd: an unprivileged user
// opens a vHCA, forks, and the opening pid execs a setuid-root program (or a
// plain one, or exits). Through what the child inherited it must reach
// nothing of the new image: every verb on the opener's context is refused
// EACCES, the RDMA READ of the old MR completes in error with none of the
// secret, and the RDMA WRITE completes in error and leaves the secret intact.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

namespace fs = std::filesystem;
constexpr const char* kNobody = "65534";

// Copies a built program into `dir`, which every user can traverse: CI's
// checkout may sit below a directory only root can enter.
std::string install(const std::string& from, const fs::path& dir, mode_t mode) {
  const fs::path to = dir / fs::path(from).filename();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  EXPECT_EQ(chown(to.c_str(), 0, 0), 0);
  EXPECT_EQ(chmod(to.c_str(), mode), 0);  // after chown, which clears set-uid
  return to;
}

class MemoryIsolation : public ::testing::TestWithParam<std::string> {};

TEST_P(MemoryIsolation, NothingOfTheNextImageIsReachable) {
  // Like every integration test (they create /dev/infiniband nodes): root,
  // here also to become uid 65534 and to install a set-uid-root program.
  ASSERT_EQ(geteuid(), 0u) << "run the integration tests as root (sudo scripts/test.sh)";
  const std::string mode = GetParam();
  Fabricd d(default_config());
  const fs::path top = fs::path(d.runtime_dir()).parent_path();
  const fs::path bin = top / "bin";
  fs::create_directories(bin);
  ASSERT_EQ(chmod(top.c_str(), 0755), 0);
  ASSERT_EQ(chmod(bin.c_str(), 0755), 0);
  const std::string holder =
      install(VF_HOLDER_PATH, bin, mode == "setuid" ? S_ISUID | 0755 : 0755);
  const std::string exploit = install(VF_EXPLOIT_PATH, bin, 0755);
  install(Paths::provider_dir() + "/libvhca-rdmav34.so", bin, 0755);
  Env env = d.app_env();
  env["RDMAV_DRIVERS"] = (bin / "libvhca").string();

  Process p({exploit, mode == "exit" ? "exit" : "exec", holder, kNobody}, env);
  RunResult r = p.wait(std::chrono::seconds(60));
  // In "exit" mode the child outlives the process the test waits for.
  for (int i = 0; i < 200 && p.out_so_far().find("verdict") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string out = p.out_so_far();
  SCOPED_TRACE(out + r.err);
  EXPECT_NE(out.find("inherited-alloc-pd Permission denied"), std::string::npos);
  EXPECT_NE(out.find("inherited-reg-mr Permission denied"), std::string::npos);
  EXPECT_NE(out.find("leaked no"), std::string::npos);
  EXPECT_EQ(out.find("VFABRIC-SECRET"), std::string::npos);
  EXPECT_NE(out.find("verdict protected"), std::string::npos);
  if (mode != "exit") {
    // The exec'd program's verdict is the exit status the test sees.
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(out.find("holder: secret intact"), std::string::npos);
    EXPECT_NE(out.find(mode == "setuid" ? "holder euid=0" : "holder euid=65534"), std::string::npos);
  }
  // And fabricd still serves everyone else.
  EXPECT_EQ(run({"ibv_devinfo", "-d", "vib1"}, d.app_env()).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(, MemoryIsolation, ::testing::Values("setuid", "plain", "exit"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
}  // namespace vf::test
