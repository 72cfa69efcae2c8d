// Unmodified Debian perftest (ib_{write,read,send,atomic}_{bw,lat}) between
// two vHCAs through the emulated switch, over native InfiniBand and over
// RoCEv2 (-x 1: the RoCE v2 GID). Each case runs the server, waits until it
// listens, then the client; both must exit 0 and print their result table.
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <thread>

#include "fabricd_fixture.hpp"
#include "perftest_pair.hpp"

namespace vf::test {
namespace {

struct Fabric {
  const char* name;
  const char* server_dev;
  const char* client_dev;
  std::vector<std::string> gid_args;
};

const Fabric kIb{"Ib", "vib1", "vib0", {}};
const Fabric kRoce{"Roce", "vroce1", "vroce0", {"-x", "1"}};

struct Case {
  const char* tool;
  std::vector<std::string> args;
  const char* label;  // test-name suffix for the options
};

// -a sweeps 2 B .. 8 MiB; -n bounds the iterations per size so a 2-core CI
// machine finishes in seconds (the default 5000 x 8 MiB would take minutes).
const std::vector<Case> kCases = {
    {"ib_write_bw", {}, "Default"},
    {"ib_write_bw", {"-a", "-n", "20"}, "All"},
    {"ib_write_lat", {}, "Default"},
    {"ib_read_bw", {}, "Default"},
    {"ib_read_bw", {"-a", "-n", "20"}, "All"},
    {"ib_read_lat", {}, "Default"},
    {"ib_send_bw", {}, "Default"},
    {"ib_send_bw", {"-a", "-n", "20"}, "All"},
    {"ib_send_bw", {"-e"}, "Events"},
    {"ib_send_lat", {}, "Default"},
    {"ib_send_lat", {"-e"}, "Events"},
    {"ib_atomic_bw", {}, "Default"},
    {"ib_atomic_lat", {}, "Default"},
};

class Perftest : public ::testing::TestWithParam<std::tuple<Case, Fabric>> {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static Fabricd* daemon_;
};
Fabricd* Perftest::daemon_ = nullptr;

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.tool;
  for (const auto& a : c.args) *os << ' ' << a;
}
void PrintTo(const Fabric& f, std::ostream* os) { *os << f.server_dev << "<-" << f.client_dev; }

bool has_result_row(const std::string& out) {
  const auto hdr = out.find("#bytes");
  if (hdr == std::string::npos) return false;
  const auto eol = out.find('\n', hdr);
  if (eol == std::string::npos) return false;
  size_t i = eol + 1;
  while (i < out.size() && out[i] == ' ') ++i;
  return i < out.size() && std::isdigit(static_cast<unsigned char>(out[i]));
}

TEST_P(Perftest, ServerAndClientPass) {
  // Not a structured binding: clang 14 cannot capture one in the lambda below.
  const auto& c = std::get<0>(GetParam());
  const auto& f = std::get<1>(GetParam());
  static int port = 20000;
  RunResult client, srv;
  // perftest calibrates its cycle counter against the clock at start and
  // gives up ("Correlation coefficient r^2 ... < 0.9", exit 1) when the host
  // is too busy to measure: that is the tool, not the fabric, so run the
  // pair again (at most three times).
  for (int run_no = 0; run_no < 3; ++run_no) {
    const std::string p = std::to_string(++port);
    auto args = [&](const char* dev) {
      std::vector<std::string> a{c.tool, "-d", dev, "-i", "1", "-p", p};
      a.insert(a.end(), f.gid_args.begin(), f.gid_args.end());
      a.insert(a.end(), c.args.begin(), c.args.end());
      return a;
    };
    Process server(args(f.server_dev), daemon_->app_env());
    // perftest's stdout is a pipe here, so "Waiting for client" shows only at
    // exit: the client retries while the server does not listen yet.
    auto a = args(f.client_dev);
    a.push_back("127.0.0.1");
    for (int attempt = 0; attempt < 100; ++attempt) {
      client = run(a, daemon_->app_env(), std::chrono::seconds(240));
      if (client.exit_code == 0 || client.err.find("Couldn't connect") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    srv = server.wait(std::chrono::seconds(60));
    const auto calibration = [](const RunResult& r) { return r.err.find("Correlation coefficient") != std::string::npos; };
    if (!calibration(client) && !calibration(srv)) break;
  }
  ASSERT_EQ(client.exit_code, 0) << "client: " << client.describe() << "\nserver: " << srv.describe();
  ASSERT_EQ(srv.exit_code, 0) << "server: " << srv.describe();
  // Every tool prints its result table under a "#bytes" header, then one row
  // per size starting with the size; a run that failed part way prints the
  // header and an error instead.
  EXPECT_TRUE(has_result_row(client.out)) << client.describe();
  EXPECT_EQ(client.out.find("rror"), std::string::npos) << client.describe();
  EXPECT_EQ(srv.out.find("rror"), std::string::npos) << srv.describe();
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, Fabric>>& info) {
  const auto& [c, f] = info.param;
  std::string tool;
  bool up = true;
  for (const char* s = c.tool + 3; *s; ++s) {  // ib_write_bw -> WriteBw
    if (*s == '_') {
      up = true;
      continue;
    }
    tool += up ? char(std::toupper(*s)) : *s;
    up = false;
  }
  return tool + c.label + f.name;
}

INSTANTIATE_TEST_SUITE_P(Tools, Perftest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(kIb, kRoce)),
                         case_name);

// Server and client on one vHCA: the HCA's internal loopback.
const Fabric kIbLoopback{"IbLoopback", "vib0", "vib0", {}};
const Fabric kRoceLoopback{"RoceLoopback", "vroce0", "vroce0", {"-x", "1"}};
const std::vector<Case> kLoopbackCases = {
    {"ib_write_bw", {}, "Default"},
    {"ib_read_lat", {}, "Default"},
    {"ib_send_bw", {}, "Default"},
};
INSTANTIATE_TEST_SUITE_P(Loopback, Perftest,
                         ::testing::Combine(::testing::ValuesIn(kLoopbackCases),
                                            ::testing::Values(kIbLoopback, kRoceLoopback)),
                         case_name);

// UD multicast with unmodified perftest (-g: the server attaches its QP to
// the group, the client sends to it). On RoCEv2 perftest attaches without an
// SA; -M names an IPv4 group (::ffff:239.1.1.x) because perftest requires the
// group's and the port's GID families to agree. ib_send_lat attaches both
// ends, each to its own group. (On InfiniBand perftest joins through the SA
// with libibumad first, which vfabric does not offer yet.)
TEST(PerftestMulticast, SendLatAndSendBwOverRoceV2) {
  Fabricd d(default_config());
  const std::string g1 = "0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:1", g2 = "0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:2";
  const PerftestPair lat =
      perftest_pair(d, "ib_send_lat", "vroce1", "vroce0", {"-i", "1", "-x", "1", "-g", "-M", g1}, 21501, {"-M", g2});
  ASSERT_TRUE(lat.ok()) << lat.describe();
  for (const RunResult* r : {&lat.client, &lat.server}) {
    EXPECT_NE(r->out.find("QPN 0xffffff"), std::string::npos) << r->out;
    EXPECT_TRUE(has_result_row(r->out)) << r->out;
  }
  const PerftestPair bw =
      perftest_pair(d, "ib_send_bw", "vroce1", "vroce0", {"-i", "1", "-x", "1", "-g", "-M", g1, "-n", "500"}, 21502);
  ASSERT_TRUE(bw.ok()) << bw.describe();
  EXPECT_NE(bw.client.out.find("MultiCast runs on UD"), std::string::npos) << bw.client.out;
  EXPECT_TRUE(has_result_row(bw.server.out)) << "the server received every datagram: " << bw.server.out;
  const RunResult m = d.ctl({"metrics"});
  EXPECT_NE(m.out.find("vfabric_mcast_rx_packets_total{fabric=\"roce\",hca=\"vroce1\"} "), std::string::npos);
}

// On InfiniBand perftest joins through the SA first (an MCMemberRecord Set
// to the SM's LID through umad), gets the group's MLID back, attaches, and
// leaves with a Delete at the end: the switch's MFT is empty again.
TEST(PerftestMulticast, SendLatAndSendBwOverInfiniBandJoinThroughTheSa) {
  Fabricd d(default_config());
  const std::string g1 = "255:18:96:27:0:0:0:0:0:0:0:0:0:0:0:1", g2 = "255:18:96:27:0:0:0:0:0:0:0:0:0:0:0:2";
  const PerftestPair lat = perftest_pair(d, "ib_send_lat", "vib1", "vib0", {"-i", "1", "-g", "-M", g1}, 21503, {"-M", g2});
  ASSERT_TRUE(lat.ok()) << lat.describe();
  for (const RunResult* r : {&lat.client, &lat.server}) {
    EXPECT_NE(r->out.find("LID 0xc00"), std::string::npos) << r->out;  // an MLID the SA chose
    EXPECT_TRUE(has_result_row(r->out)) << r->out;
  }
  const PerftestPair bw = perftest_pair(d, "ib_send_bw", "vib1", "vib0", {"-i", "1", "-g", "-M", g1, "-n", "500"}, 21504);
  ASSERT_TRUE(bw.ok()) << bw.describe();
  EXPECT_TRUE(has_result_row(bw.server.out)) << "the server received every datagram: " << bw.server.out;
  const RunResult routes = d.ctl({"--json", "routes", "ibsw0"});
  EXPECT_NE(routes.out.find("\"mft\": []"), std::string::npos) << "every join was left: " << routes.out;
}

}  // namespace
}  // namespace vf::test
