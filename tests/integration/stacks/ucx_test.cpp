// Unmodified Debian ucx_perftest (UCX 1.13, UCP level) between two vHCAs of
// one fabric, over rc_verbs and ud_verbs: the server on HCA 1, the client on
// HCA 0, wired up by ucx_perftest's own TCP exchange on loopback. Only what a
// ConnectX user sets: UCX_NET_DEVICES and UCX_TLS.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include "stacks.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

struct Tl {
  const char* name;  // test-name part
  const char* tls;   // UCX_TLS: rc_verbs wires up through ud_verbs, as UCX's own "rc_v" alias
};
const Tl kRc{"Rc", "rc_verbs,ud_verbs:aux"};
const Tl kUd{"Ud", "ud_verbs"};

struct PerfCase {
  const char* test;  // ucx_perftest -t
  const char* size;   // -s
  bool bandwidth;     // a bandwidth test: MB/s must be > 0 (a latency test: usec)
  long iters = 1000;  // -n: seconds on 2 cores, not minutes
};

void PrintTo(const Tl& t, std::ostream* os) { *os << t.tls; }
void PrintTo(const PerfCase& c, std::ostream* os) { *os << c.test << " -s " << c.size << " -n " << c.iters; }

// Final: <iters> <p50 usec> <avg usec> <overall usec> <avg MB/s> <overall MB/s> <avg msg/s> <overall msg/s>
struct Final {
  long iters = 0;
  double lat_us = 0, bw_mbs = 0, msg_rate = 0;
};

// ucx_perftest's last line: iterations, then latency (p50, average,
// overall), bandwidth (average, overall) and message rate (average,
// overall). "average" covers the last report interval only, which is empty
// (inf, 0.00) when a periodic report fell on the last iteration; the run's
// figures are the overall ones.
bool parse_final(const std::string& out, Final& f) {
  const size_t at = out.find("Final:");
  if (at == std::string::npos) return false;
  std::istringstream in(out.substr(at + 6, out.find('\n', at) - at - 6));
  std::string t[8];
  for (auto& w : t)
    if (!(in >> w)) return false;
  double v[8];
  for (int i = 0; i < 8; ++i) {
    char* end = nullptr;
    v[i] = std::strtod(t[i].c_str(), &end);  // takes "inf" too
    if (end == t[i].c_str() || *end) return false;
  }
  f.iters = static_cast<decltype(f.iters)>(v[0]);
  f.lat_us = v[3];
  f.bw_mbs = v[5];
  f.msg_rate = v[7];
  return true;
}

class UcxPerftest : public ::testing::TestWithParam<std::tuple<PerfCase, Tl, StackFabric>> {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(stacks_config(2)); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static Env env(const StackFabric& f, int hca, const Tl& tl) {
    Env e = daemon_->app_env();
    e["UCX_NET_DEVICES"] = f.hca(hca) + ":1";
    e["UCX_TLS"] = tl.tls;
    return e;
  }
  static Fabricd* daemon_;
};
Fabricd* UcxPerftest::daemon_ = nullptr;

TEST_P(UcxPerftest, ServerAndClientReportFigures) {
  const auto& [c, tl, f] = GetParam();
  static int port = 13400;
  const std::string p = std::to_string(++port);
  const PortTraffic before = port_traffic(*daemon_, f, 0);
  Process server({"ucx_perftest", "-p", p}, env(f, 1, tl));
  ASSERT_TRUE(wait_tcp_listening(port)) << server.wait(1ms).describe();
  const RunResult client = run({"ucx_perftest", "127.0.0.1", "-p", p, "-t", c.test, "-s", c.size, "-n", std::to_string(c.iters),
                                "-w", "20"},
                               env(f, 0, tl), 30s);
  const RunResult srv = server.wait(30s);
  ASSERT_EQ(client.exit_code, 0) << "client: " << client.describe() << "\nserver: " << srv.describe();
  ASSERT_EQ(srv.exit_code, 0) << "server: " << srv.describe();
  Final fin;
  ASSERT_TRUE(parse_final(client.out, fin)) << client.describe();
  EXPECT_EQ(fin.iters, c.iters) << client.out;
  EXPECT_GT(fin.lat_us, 0) << client.out;
  EXPECT_GT(fin.msg_rate, 0) << client.out;
  if (c.bandwidth) {
    EXPECT_GT(fin.bw_mbs, 0) << client.out;
  }
  // The data crossed the vHCA's port (sysfs refreshes every second).
  PortTraffic after;
  for (int i = 0; i < 30 && (after = port_traffic(*daemon_, f, 0)).xmit_bytes <= before.xmit_bytes; ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_GT(after.xmit_bytes, before.xmit_bytes) << f.hca(0) << " sent nothing: another transport carried it";
}

// put/get and active messages: UCP emulates RMA over ud_verbs' sends.
const std::vector<PerfCase> kCases = {
    {"tag_lat", "8", false},        {"tag_bw", "8", true},        {"tag_bw", "1048576", true, 100},
    {"ucp_put_lat", "8", false},    {"ucp_put_bw", "65536", true}, {"ucp_get", "65536", true},
    {"ucp_am_lat", "8", false},     {"ucp_am_bw", "65536", true},  {"stream_lat", "8", false},
    {"stream_bw", "65536", true},
};

std::string case_name(const ::testing::TestParamInfo<std::tuple<PerfCase, Tl, StackFabric>>& info) {
  const auto& [c, tl, f] = info.param;
  std::string n;
  bool up = true;
  for (const char* s = c.test; *s; ++s) {  // ucp_put_bw -> UcpPutBw
    if (*s == '_') {
      up = true;
      continue;
    }
    n += up ? char(std::toupper(*s)) : *s;
    up = false;
  }
  return n + c.size + tl.name + f.name;
}

// RoCE's rc_verbs wires up through ud_verbs too: UCX takes a UD datagram
// only if the completion's sl says IPv4 (2) or IPv6 as mlx5's does.
INSTANTIATE_TEST_SUITE_P(Ucp, UcxPerftest,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::Values(kRc, kUd),
                                            ::testing::Values(kIbStack, kRoceStack)),
                         case_name);

}  // namespace
}  // namespace vf::test
