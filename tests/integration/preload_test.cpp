// The launcher's side: `fabricctl exec` preloads libvhca-preload, which
// blocks RDMA netlink (so libibverbs scans the vHCAs' sysfs) and leaves every
// other socket alone; and fabricd's shutdown reaches apps as
// IBV_EVENT_DEVICE_FATAL on their async-event fd.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

const std::string kProbe = VF_PROBE_PATH;

class Preload : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static Fabricd* daemon_;
};
Fabricd* Preload::daemon_ = nullptr;

TEST_F(Preload, FabricdEnvPreloadsTheShimThatExists) {
  auto r = daemon_->ctl({"--json", "env"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  auto env = nlohmann::json::parse(r.out);
  ASSERT_TRUE(env.contains("LD_PRELOAD")) << r.out;
  EXPECT_EQ(env["LD_PRELOAD"].get<std::string>(), Paths::preload());
}

TEST_F(Preload, ExecBlocksRdmaNetlinkOnlyAndKeepsTheUsersPreload) {
  // A user preload that must survive, after ours.
  auto r = run({Paths::fabricctl(), "--runtime-dir", daemon_->runtime_dir(), "exec", "--", kProbe,
                "netlink"},
               {{"LD_PRELOAD", "libm.so.6"}}, std::chrono::seconds(30));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("socket from " + Paths::preload()), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("rdma EPROTONOSUPPORT\n"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("route ok\n"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("udp ok\n"), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("unix ok\n"), std::string::npos) << r.describe();
}

TEST_F(Preload, WithoutThePreloadSocketIsLibcs) {
  auto r = run({kProbe, "netlink"}, {}, std::chrono::seconds(30));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out.find("socket from " + Paths::preload()), std::string::npos) << r.describe();
  EXPECT_NE(r.out.find("route ok\n"), std::string::npos) << r.describe();
}

// A private daemon: stopping it is the test.
TEST(PreloadShutdown, SigtermDeliversDeviceFatalToOpenContexts) {
  Fabricd d(default_config());
  Process app({kProbe, "async", "vib0"}, d.app_env());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (app.out_so_far().find("ready") == std::string::npos) {
    ASSERT_TRUE(app.running()) << app.wait(std::chrono::seconds(1)).describe();
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "probe never opened vib0";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  RunResult daemon = d.stop(SIGTERM);
  EXPECT_EQ(daemon.exit_code, 0) << daemon.describe();
  RunResult r = app.wait(std::chrono::seconds(20));
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("event " + std::to_string(int(IBV_EVENT_DEVICE_FATAL)) + " port 1"), std::string::npos)
      << r.describe();
}

}  // namespace
}  // namespace vf::test
