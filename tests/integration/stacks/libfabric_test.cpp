// Unmodified Debian libfabric 1.17 (fi_pingpong, the one fabtest
// libfabric-bin ships) on the verbs provider: its MSG endpoints (connected
// through rdma_cm) and its RDM endpoints (ofi_rxm over verbs MSG), with data
// checks (-c), on each fabric. fi_pingpong names no address: the verbs
// provider binds "localhost", which rdma_cm gives the first RDMA device (the
// kernel's cma_bind_loopback), so both ends meet on device 0 through its
// loopback; the config puts the fabric under test first. fi_pingpong
// exchanges its endpoint names over its own TCP socket on loopback.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "stacks.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

struct Endpoint {
  const char* name;
  const char* provider;  // -p
  const char* type;      // -e
  Env extra;
};
const Endpoint kMsg{"Msg", "verbs", "msg", {}};
// ofi_rxm's defaults: one MSG CQ sized for 256 peers (~200k entries), which
// the vHCA takes as ConnectX does (max_cqe 2^22 - 1).
const Endpoint kRdm{"Rdm", "verbs;ofi_rxm", "rdm", {}};

void PrintTo(const Endpoint& e, std::ostream* os) { *os << "-p " << e.provider << " -e " << e.type; }

// Rows under the "bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec"
// header: how many, and whether each moved its data at a non-zero rate.
struct Table {
  int rows = 0, zero_rates = 0;
};

Table parse_table(const std::string& out) {
  Table t;
  std::istringstream in(out.substr(std::min(out.find("bytes"), out.size())));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string bytes, sent, ack, total, time;
    double mbs = 0, usec = 0;
    if (!(row >> bytes >> sent >> ack >> total >> time >> mbs >> usec)) continue;
    ++t.rows;
    if (!(mbs > 0 && usec > 0)) ++t.zero_rates;
  }
  return t;
}

class FiPingpong : public ::testing::TestWithParam<std::tuple<Endpoint, StackFabric>> {};

TEST_P(FiPingpong, VerbsProviderPingsEverySizeWithDataChecks) {
  const auto& [ep, f] = GetParam();
  static int port = 14600;  // below the ephemeral range (32768-60999): no outgoing connection holds it
  const std::string p = std::to_string(++port);
  const Fabricd d(stacks_config(2, std::string(f.fabric) == "roce"));
  Env env = d.app_env();
  env.insert(ep.extra.begin(), ep.extra.end());
  const PortTraffic before = port_traffic(d, f, 0);
  const std::vector<std::string> common{"fi_pingpong", "-p", ep.provider, "-e", ep.type, "-I", "50", "-c"};
  auto server = common, client = common;
  server.insert(server.end(), {"-B", p});
  client.insert(client.end(), {"-P", p, "127.0.0.1"});
  Process srv(server, env);
  ASSERT_TRUE(wait_tcp_listening(port)) << srv.wait(1ms).describe();
  const RunResult c = run(client, env, 30s);
  const RunResult s = srv.wait(30s);
  ASSERT_EQ(c.exit_code, 0) << "client: " << c.describe() << "\nserver: " << s.describe();
  ASSERT_EQ(s.exit_code, 0) << "server: " << s.describe();
  const Table t = parse_table(c.out);
  EXPECT_GE(t.rows, 5) << "fi_pingpong -S all: 64 B .. 1 MiB\n" << c.out;
  EXPECT_EQ(t.zero_rates, 0) << c.out;
  // 50 round trips of each size turned round inside the fabric's device 0.
  PortTraffic after;
  for (int i = 0; i < 30 && (after = port_traffic(d, f, 0)).loopback_pkts < before.loopback_pkts + 500; ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_GE(after.loopback_pkts, before.loopback_pkts + 500) << f.hca(0);
}

INSTANTIATE_TEST_SUITE_P(Verbs, FiPingpong,
                         ::testing::Combine(::testing::Values(kMsg, kRdm), ::testing::Values(kIbStack, kRoceStack)),
                         [](const auto& p) { return std::string(std::get<0>(p.param).name) + std::get<1>(p.param).name; });

}  // namespace
}  // namespace vf::test
