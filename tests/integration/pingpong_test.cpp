// Unmodified ibv_*_pingpong between two vHCAs through the emulated switch,
// over native InfiniBand and over RoCEv2, and with both ends on one vHCA.
#include <gtest/gtest.h>

#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

struct Fabric {
  const char* name;
  const char* server_dev;
  const char* client_dev;
  std::vector<std::string> gid_args;  // RoCE v2 needs a GID: index 1 is ::ffff:<ip>, RoCE v2
};

const Fabric kIb{"ib", "vib1", "vib0", {}};
const Fabric kRoce{"roce", "vroce1", "vroce0", {"-g", "1"}};
// Both ends on one vHCA: the HCA loops the packets back inside itself.
const Fabric kIbLoopback{"ib", "vib0", "vib0", {}};
const Fabric kRoceLoopback{"roce", "vroce0", "vroce0", {"-g", "1"}};

class Pingpong : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }

  // Runs server and client; the client retries while the server is not yet
  // listening (ibv_rc_pingpong gives up on the first refused connect).
  static void pingpong(const Fabric& f, std::vector<std::string> extra) {
    run_pingpong("ibv_rc_pingpong", f, std::move(extra));
  }
  static void run_pingpong(const char* prog, const Fabric& f, std::vector<std::string> extra) {
    static int port = 19000;
    const std::string p = std::to_string(++port);
    auto args = [&](const char* dev) {
      std::vector<std::string> a{prog, "-d", dev, "-i", "1", "-p", p};
      a.insert(a.end(), f.gid_args.begin(), f.gid_args.end());
      a.insert(a.end(), extra.begin(), extra.end());
      return a;
    };
    Process server(args(f.server_dev), daemon_->app_env());
    RunResult client;
    for (int attempt = 0; attempt < 50; ++attempt) {
      auto a = args(f.client_dev);
      a.push_back("127.0.0.1");
      client = run(a, daemon_->app_env(), std::chrono::seconds(120));
      if (client.exit_code == 0 || client.err.find("Couldn't connect") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    RunResult srv = server.wait(std::chrono::seconds(60));
    ASSERT_EQ(client.exit_code, 0) << "client: " << client.describe() << "\nserver: " << srv.describe();
    ASSERT_EQ(srv.exit_code, 0) << "server: " << srv.describe();
    // Both sides report what they moved: "<bytes> bytes in <s> seconds = ...".
    EXPECT_NE(client.out.find(" bytes in "), std::string::npos) << client.describe();
    EXPECT_NE(srv.out.find(" iters in "), std::string::npos) << srv.describe();
  }
  static Fabricd* daemon_;
};
Fabricd* Pingpong::daemon_ = nullptr;

TEST_F(Pingpong, InfinibandDefaults) { pingpong(kIb, {}); }
TEST_F(Pingpong, RoceV2Defaults) { pingpong(kRoce, {}); }
TEST_F(Pingpong, InfinibandLargeMessages) { pingpong(kIb, {"-s", "65536", "-n", "1000"}); }
TEST_F(Pingpong, RoceV2LargeMessages) { pingpong(kRoce, {"-s", "65536", "-n", "1000"}); }
TEST_F(Pingpong, InfinibandDataCheck) { pingpong(kIb, {"-c"}); }
TEST_F(Pingpong, RoceV2DataCheck) { pingpong(kRoce, {"-c"}); }
TEST_F(Pingpong, InfinibandLargeDataCheck) { pingpong(kIb, {"-s", "65536", "-n", "200", "-c"}); }
TEST_F(Pingpong, RoceV2LargeDataCheck) { pingpong(kRoce, {"-s", "65536", "-n", "200", "-c"}); }

// The other transports' pingpongs, with data check (-c) and completion
// events (-e). ibv_ud_pingpong sends whole messages in one packet, so on the
// 1500-byte RoCE link (active MTU 1024) it needs -s 1024.
TEST_F(Pingpong, UcInfinibandDataCheck) { run_pingpong("ibv_uc_pingpong", kIb, {"-c"}); }
TEST_F(Pingpong, UcRoceV2DataCheck) { run_pingpong("ibv_uc_pingpong", kRoce, {"-c"}); }
TEST_F(Pingpong, UcInfinibandEvents) { run_pingpong("ibv_uc_pingpong", kIb, {"-e", "-c"}); }
TEST_F(Pingpong, UcRoceV2Events) { run_pingpong("ibv_uc_pingpong", kRoce, {"-e", "-c"}); }
TEST_F(Pingpong, UdInfinibandDataCheck) { run_pingpong("ibv_ud_pingpong", kIb, {"-c"}); }
TEST_F(Pingpong, UdRoceV2DataCheck) {
  run_pingpong("ibv_ud_pingpong", kRoce, {"-s", "1024", "-c"});
}
TEST_F(Pingpong, UdInfinibandEvents) { run_pingpong("ibv_ud_pingpong", kIb, {"-e", "-c"}); }
TEST_F(Pingpong, UdRoceV2Events) {
  run_pingpong("ibv_ud_pingpong", kRoce, {"-s", "1024", "-e", "-c"});
}
TEST_F(Pingpong, SrqInfinibandDataCheck) { run_pingpong("ibv_srq_pingpong", kIb, {"-c"}); }
TEST_F(Pingpong, SrqRoceV2DataCheck) { run_pingpong("ibv_srq_pingpong", kRoce, {"-c"}); }
TEST_F(Pingpong, SrqInfinibandEvents) { run_pingpong("ibv_srq_pingpong", kIb, {"-e", "-c"}); }
TEST_F(Pingpong, SrqRoceV2Events) { run_pingpong("ibv_srq_pingpong", kRoce, {"-e", "-c"}); }
TEST_F(Pingpong, RcInfinibandEvents) { pingpong(kIb, {"-e", "-c"}); }
TEST_F(Pingpong, RcRoceV2Events) { pingpong(kRoce, {"-e", "-c"}); }

// Server and client on the same vHCA, as test suites and runtimes often
// connect them: every transport, with data check and completion events.
TEST_F(Pingpong, LoopbackRcInfiniband) { pingpong(kIbLoopback, {"-e", "-c"}); }
TEST_F(Pingpong, LoopbackRcRoceV2) { pingpong(kRoceLoopback, {"-e", "-c"}); }
TEST_F(Pingpong, LoopbackUcInfiniband) { run_pingpong("ibv_uc_pingpong", kIbLoopback, {"-c"}); }
TEST_F(Pingpong, LoopbackUcRoceV2) { run_pingpong("ibv_uc_pingpong", kRoceLoopback, {"-c"}); }
TEST_F(Pingpong, LoopbackUdInfiniband) { run_pingpong("ibv_ud_pingpong", kIbLoopback, {"-e", "-c"}); }
TEST_F(Pingpong, LoopbackUdRoceV2) { run_pingpong("ibv_ud_pingpong", kRoceLoopback, {"-s", "1024", "-e", "-c"}); }
TEST_F(Pingpong, LoopbackSrqInfiniband) { run_pingpong("ibv_srq_pingpong", kIbLoopback, {"-c"}); }
TEST_F(Pingpong, LoopbackSrqRoceV2) { run_pingpong("ibv_srq_pingpong", kRoceLoopback, {"-e", "-c"}); }

// Looped back inside the HCA: the switch and the wire never see the packets
// (the suite's daemon is fresh for this test: every count is this run's).
TEST_F(Pingpong, LoopbackNeverLeavesTheHca) {
  pingpong(kIbLoopback, {"-s", "4096", "-n", "100", "-c"});
  const RunResult m = daemon_->ctl({"metrics"});
  ASSERT_EQ(m.exit_code, 0) << m.describe();
  const auto value = [&](const std::string& sample) {
    const size_t at = m.out.find(sample + " ");
    EXPECT_NE(at, std::string::npos) << sample;
    return at == std::string::npos ? -1.0 : std::stod(m.out.substr(at + sample.size() + 1));
  };
  EXPECT_GE(value("vfabric_loopback_packets_total{fabric=\"ib\",hca=\"vib0\"}"), 400);
  EXPECT_EQ(value("vfabric_loopback_drops_total{fabric=\"ib\",hca=\"vib0\"}"), 0);
  EXPECT_EQ(value("vfabric_port_xmit_packets_total{fabric=\"ib\",port=\"vib0\"}"), 0);
  EXPECT_EQ(value("vfabric_port_rcv_packets_total{fabric=\"ib\",port=\"ibsw0/1\"}"), 0);
}

}  // namespace
}  // namespace vf::test
