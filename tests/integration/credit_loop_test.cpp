// The credit-loop lesson on a real fabricd (configs/ring.yaml): every vHCA
// runs ib_write_bw to the vHCA two switches clockwise. With min-hop routing
// the ring links' buffers fill in a circle and the fabric deadlocks: fabricd
// finds the circle, says so in its log and counts it, stays responsive and
// still stops cleanly. With Up/Down routing the same load completes.
// (The deadlock itself, frame by frame, is tests/unit/fabric/credit_loop_test.cpp.)
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

std::string ring(const std::string& routing) {
  std::string y = read_file(Paths::source_dir() + "/configs/ring.yaml");
  const std::string from = "routing: minhop";
  const auto at = y.find(from);
  if (at == std::string::npos) throw std::runtime_error("configs/ring.yaml no longer says " + from);
  return y.replace(at, from.size(), "routing: " + routing);
}

double deadlocks(const Fabricd& d) {
  const RunResult r = d.ctl({"metrics"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  static const std::regex line(R"(vfabric_credit_loop_deadlocks_total\{fabric="ib"\} (\d+))");
  std::smatch m;
  return std::regex_search(r.out, m, line) ? std::stod(m[1]) : -1;
}

// Five servers, five clients: vibN -> vib(N+2).
struct Load {
  std::vector<std::unique_ptr<Process>> servers, clients;
  Load(const Fabricd& d, const std::string& iters) {
    for (unsigned i = 0; i < 5; ++i)
      servers.push_back(std::make_unique<Process>(
          std::vector<std::string>{"ib_write_bw", "-d", "vib" + std::to_string((i + 2) % 5), "-i", "1", "-p",
                                   std::to_string(19600 + i), "-s", "65536", "-n", iters},
          d.app_env()));
    for (unsigned i = 0; i < 5; ++i) {
      const std::vector<std::string> a{"ib_write_bw", "-d", "vib" + std::to_string(i), "-i", "1", "-p",
                                       std::to_string(19600 + i), "-s", "65536", "-n", iters, "127.0.0.1"};
      for (int attempt = 0; attempt < 100; ++attempt) {  // until its server listens
        clients.push_back(std::make_unique<Process>(a, d.app_env()));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (clients.back()->running()) break;
        const RunResult r = clients.back()->wait(std::chrono::seconds(1));
        if (r.exit_code == 0 || r.err.find("Couldn't connect") == std::string::npos) break;
        clients.pop_back();
      }
    }
  }
};

TEST(CreditLoop, MinHopDeadlocksTheRingAndFabricdSaysSo) {
  Fabricd d(ring("minhop"));
  Load load(d, "100000");
  // Detected within a few of fabricd's once-a-second checks.
  double n = 0;
  for (int i = 0; i < 100 && (n = deadlocks(d)) < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(n, 1) << "one circle, reported once";
  // The daemon still answers, and the log says what happened in plain words.
  const RunResult status = d.ctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.describe();
  for (auto& c : load.clients) c->signal(SIGKILL);
  for (auto& s : load.servers) s->signal(SIGKILL);
  const RunResult stopped = d.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.describe();
  const std::string log = stopped.out + stopped.err;
  EXPECT_NE(log.find("routing has a credit loop"), std::string::npos) << "the start-up warning\n" << log;
  const auto at = log.find("credit loop deadlock: sw");
  ASSERT_NE(at, std::string::npos) << log;
  std::printf("fabricd said: ...%s\n", log.substr(at, log.find('\n', at) - at).c_str());
  EXPECT_NE(log.find("sm: {routing: updn}"), std::string::npos) << log;
}

TEST(CreditLoop, UpDownCompletesTheSameLoad) {
  Fabricd d(ring("updn"));
  Load load(d, "300");
  ASSERT_EQ(load.clients.size(), 5u);
  for (auto& c : load.clients) {
    const RunResult r = c->wait(std::chrono::seconds(120));
    EXPECT_EQ(r.exit_code, 0) << r.describe();
  }
  for (auto& s : load.servers) {
    const RunResult r = s->wait(std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 0) << r.describe();
  }
  EXPECT_EQ(deadlocks(d), 0);
  const RunResult stopped = d.stop();
  EXPECT_EQ((stopped.out + stopped.err).find("credit loop"), std::string::npos) << stopped.out + stopped.err;
}

}  // namespace
}  // namespace vf::test
