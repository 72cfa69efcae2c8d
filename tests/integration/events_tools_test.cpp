// Unmodified Debian ibv_rc_pingpong sleeping on completion events (-e) through the
// preload shim's completion channels, over native InfiniBand and RoCEv2.
#include <gtest/gtest.h>

#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

struct Link {
  const char* server_dev;
  const char* client_dev;
  std::vector<std::string> pingpong_gid;  // ibv_rc_pingpong: -g 1 (the RoCE v2 GID)
};
const Link kIb{"vib1", "vib0", {}};
const Link kRoce{"vroce1", "vroce0", {"-g", "1"}};

class EventTools : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }

  // Server then client (retrying while the server is not listening yet);
  // both must exit 0 and print `server_says` / `client_says`.
  static void pair(std::vector<std::string> server_args, std::vector<std::string> client_args,
                   const std::string& server_says, const std::string& client_says) {
    Process server(server_args, daemon_->app_env());
    RunResult client;
    for (int attempt = 0; attempt < 50; ++attempt) {
      client = run(client_args, daemon_->app_env(), std::chrono::seconds(20));
      if (client.exit_code == 0 || client.err.find("Couldn't connect") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    RunResult srv = server.wait(std::chrono::seconds(20));
    ASSERT_EQ(client.exit_code, 0) << "client: " << client.describe() << "\nserver: " << srv.describe();
    ASSERT_EQ(srv.exit_code, 0) << "server: " << srv.describe();
    EXPECT_NE(srv.out.find(server_says), std::string::npos) << srv.describe();
    EXPECT_NE(client.out.find(client_says), std::string::npos) << client.describe();
  }

  static std::string next_port() {
    static int port = 19300;
    return std::to_string(++port);
  }

  static void pingpong(const Link& l, std::vector<std::string> extra) {
    const std::string p = next_port();
    auto args = [&](const char* dev) {
      std::vector<std::string> a{"ibv_rc_pingpong", "-d", dev, "-i", "1", "-p", p, "-n", "300"};
      a.insert(a.end(), l.pingpong_gid.begin(), l.pingpong_gid.end());
      a.insert(a.end(), extra.begin(), extra.end());
      return a;
    };
    auto client = args(l.client_dev);
    client.push_back("127.0.0.1");
    pair(args(l.server_dev), client, " iters in ", " bytes in ");
  }

  static Fabricd* daemon_;
};
Fabricd* EventTools::daemon_ = nullptr;

TEST_F(EventTools, RcPingpongEventsInfiniband) { pingpong(kIb, {"-e"}); }
TEST_F(EventTools, RcPingpongEventsRoceV2) { pingpong(kRoce, {"-e"}); }
TEST_F(EventTools, RcPingpongEventsDataCheckInfiniband) { pingpong(kIb, {"-e", "-c"}); }
TEST_F(EventTools, RcPingpongEventsDataCheckRoceV2) { pingpong(kRoce, {"-e", "-c"}); }
// perftest's -e (ib_send_bw, ib_send_lat; the only perftest tools with it)
// runs in perftest_test.cpp on both link layers, under the same app_env().

// Without the shim, -e fails cleanly at channel creation (no crash, no hang).
TEST_F(EventTools, RcPingpongEventsWithoutPreloadFailsCleanly) {
  auto r = run({"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", next_port(), "-e", "127.0.0.1"},
               daemon_->app_env(/*preload=*/false), std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("Couldn't create completion channel"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace vf::test
