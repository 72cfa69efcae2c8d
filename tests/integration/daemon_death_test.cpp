// fabricd dies (SIGKILL) or stops (SIGTERM) under running, unmodified
// pingpongs: every one must notice and end by itself within seconds (a flush
// error completion, a failed event wait), never spin or block forever; a
// restarted fabricd then serves a fresh pair.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

struct DeathCase {
  const char* name;
  const char* prog;
  std::vector<std::string> extra;
  int sig;
};

void PrintTo(const DeathCase& c, std::ostream* os) { *os << c.name; }

std::vector<std::string> args(const DeathCase& c, const char* dev, const std::string& port,
                              const std::string& iters) {
  std::vector<std::string> a{c.prog, "-d", dev, "-i", "1", "-p", port, "-n", iters};
  a.insert(a.end(), c.extra.begin(), c.extra.end());
  return a;
}

// Server and client connected and exchanging: the client did not fail its
// connect and is still running after a moment.
std::unique_ptr<Process> start_client(const Fabricd& d, const DeathCase& c, const std::string& port,
                                      const std::string& iters) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto a = args(c, "vib0", port, iters);
    a.push_back("127.0.0.1");
    auto p = std::make_unique<Process>(a, d.app_env());
    std::this_thread::sleep_for(300ms);
    if (p->running()) return p;
    std::this_thread::sleep_for(100ms);
  }
  return nullptr;
}

class DaemonDeath : public ::testing::TestWithParam<DeathCase> {};

TEST_P(DaemonDeath, AppsEndByThemselvesAndARestartServesAFreshPair) {
  const DeathCase& c = GetParam();
  Fabricd d(default_config());
  static int port = 19500;
  const std::string p = std::to_string(++port);
  Process server(args(c, "vib1", p, "100000000"), d.app_env());
  auto client = start_client(d, c, p, "100000000");
  ASSERT_TRUE(client) << "the pingpong never got going";
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(server.running() && client->running()) << server.wait(1s).describe();

  d.stop(c.sig);
  const auto t0 = std::chrono::steady_clock::now();
  RunResult cr = client->wait(15s), sr = server.wait(15s);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_FALSE(cr.timed_out) << "client still running 15 s after fabricd went away";
  EXPECT_FALSE(sr.timed_out) << "server still running 15 s after fabricd went away";
  EXPECT_NE(cr.exit_code, 0) << cr.describe();  // it could not have finished 10^8 iterations
  EXPECT_NE(sr.exit_code, 0) << sr.describe();
  EXPECT_EQ(cr.term_signal, 0) << cr.describe();  // ended, not crashed
  EXPECT_EQ(sr.term_signal, 0) << sr.describe();
  RecordProperty("seconds_to_end", std::to_string(std::chrono::duration<double>(took).count()));

  d.restart();
  const std::string p2 = std::to_string(++port);
  Process server2(args(c, "vib1", p2, "200"), d.app_env());
  RunResult fresh;
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto a = args(c, "vib0", p2, "200");
    a.push_back("127.0.0.1");
    fresh = run(a, d.app_env(), 60s);
    if (fresh.exit_code == 0 || fresh.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_EQ(fresh.exit_code, 0) << fresh.describe();
  EXPECT_EQ(server2.wait(60s).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Pingpongs, DaemonDeath,
    ::testing::Values(DeathCase{"RcPollingKill", "ibv_rc_pingpong", {}, SIGKILL},
                      DeathCase{"RcPollingTerm", "ibv_rc_pingpong", {}, SIGTERM},
                      DeathCase{"RcEventsKill", "ibv_rc_pingpong", {"-e"}, SIGKILL},
                      DeathCase{"RcEventsTerm", "ibv_rc_pingpong", {"-e"}, SIGTERM},
                      DeathCase{"UdPollingKill", "ibv_ud_pingpong", {}, SIGKILL},
                      DeathCase{"UdEventsTerm", "ibv_ud_pingpong", {"-e"}, SIGTERM}),
    [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
