// UCX's own connection establishment through rdma_cm (UCP's sockaddr API,
// as UCX-based storage and AI libraries use it): Debian's io_demo, its
// server listening on HCA 1's address, its client connecting from HCA 0's,
// reads and writes with io_demo's data check on. UCX_SOCKADDR_TLS_PRIORITY
// keeps UCX from falling back to its TCP connection manager, so only the
// vHCAs' rdma_cm can connect them.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "stacks.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

class UcxSockaddr : public ::testing::TestWithParam<StackFabric> {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(stacks_config(2)); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  // Each side its own vHCA, as two hosts would be: the client binds to
  // HCA 0's address, so rdma_cm resolves the connection onto HCA 0.
  static Env env(const StackFabric& f, int hca) {
    Env e = daemon_->app_env();
    e["UCX_NET_DEVICES"] = f.hca(hca) + ":1";
    e["UCX_TLS"] = "rc_verbs,ud_verbs";
    e["UCX_SOCKADDR_TLS_PRIORITY"] = "rdmacm";
    return e;
  }
  static Fabricd* daemon_;
};
Fabricd* UcxSockaddr::daemon_ = nullptr;

// The listener is an rdma_cm id, not a TCP socket: io_demo says when it listens.
bool wait_listening(Process& p) {
  for (int i = 0; i < 300 && p.running(); ++i) {
    if (p.out_so_far().find("started listener") != std::string::npos ||
        p.err_so_far().find("started listener") != std::string::npos)
      return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

TEST_P(UcxSockaddr, IoDemoConnectsThroughRdmaCmAndChecksEveryTransfer) {
  const StackFabric& f = GetParam();
  static int port = 13600;
  const std::string p = std::to_string(++port);
  const std::vector<std::string> io = {"-p", p, "-q", "-o", "read,write", "-d", "1024:262144"};
  const PortTraffic before = port_traffic(*daemon_, f, 0);

  std::vector<std::string> srv_argv{"io_demo"};
  srv_argv.insert(srv_argv.end(), io.begin(), io.end());
  Process server(srv_argv, env(f, 1));
  ASSERT_TRUE(wait_listening(server)) << server.wait(1ms).describe();

  std::vector<std::string> cli_argv{"io_demo"};
  cli_argv.insert(cli_argv.end(), io.begin(), io.end());
  cli_argv.insert(cli_argv.end(), {"-i", "300", "-I", f.ip(0), f.ip(1)});
  const RunResult client = run(cli_argv, env(f, 0), 60s);
  server.signal(SIGTERM);
  const RunResult srv = server.wait(10s);

  ASSERT_EQ(client.exit_code, 0) << "client: " << client.describe() << "\nserver: " << srv.describe();
  const std::string said = client.out + client.err;
  EXPECT_NE(said.find("Connected to server [0] " + f.ip(1)), std::string::npos) << said;
  EXPECT_NE(said.find("Client exit with status 'OK'"), std::string::npos) << said;
  const std::string srv_said = srv.out + srv.err;
  for (const char* complaint : {"corruption", "mismatch"}) {  // -q's checks
    EXPECT_EQ(said.find(complaint), std::string::npos) << said;
    EXPECT_EQ(srv_said.find(complaint), std::string::npos) << srv_said;
  }
  EXPECT_NE(srv_said.find("got new connection request"), std::string::npos) << srv_said;
  EXPECT_EQ(srv_said.find("Assertion"), std::string::npos) << srv_said;

  // 300 reads and writes of up to 256 KiB crossed the client's port.
  PortTraffic after;
  for (int i = 0; i < 30 && (after = port_traffic(*daemon_, f, 0)).xmit_bytes < before.xmit_bytes + (1 << 20); ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_GE(after.xmit_bytes, before.xmit_bytes + (1 << 20)) << f.hca(0) << " carried less than 1 MiB";
  EXPECT_GE(after.rcv_bytes, before.rcv_bytes + (1 << 20)) << f.hca(0) << " received less than 1 MiB";
}

INSTANTIATE_TEST_SUITE_P(Fabrics, UcxSockaddr, ::testing::Values(kIbStack, kRoceStack),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
