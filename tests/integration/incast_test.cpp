// Four unmodified ib_write_bw clients on four vHCAs into one vHCA behind one
// switch, through a real fabricd, on 2 Gb/s links: the emulated bottleneck
// link, not the CPU, limits them (the engine moves ~13 Gb/s on this class of
// host). Credit flow control must make that lossless -- no discard anywhere,
// no RC retransmission, the senders waiting for credit -- and keep the
// bottleneck close to its line rate with every sender getting a share. The
// exact goodput and fairness figures are asserted in virtual time
// (tests/unit/fabric/incast_test.cpp); this proves the daemon runs the same
// thing, measured from its counters over wall time.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

constexpr unsigned kSenders = 4;
constexpr double kRateBps = 2e9;

std::string incast_config() {
  std::string y = R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: ib
    link_layer: infiniband
    switches:
      - {name: sw, ports: 6}
    hcas:
      - name: vib0
      - name: vib1
      - name: vib2
      - name: vib3
      - name: vib4
    links:
)";
  for (unsigned i = 0; i <= kSenders; ++i)
    y += "      - {a: vib" + std::to_string(i) + ", b: sw/" + std::to_string(i + 1) +
         ", speed: EDR, rate: 2Gbps, delay: 500ns}\n";
  return y;
}

// `fabricctl metrics`, as family{labels} -> value.
std::map<std::string, double> metrics(const Fabricd& d) {
  const RunResult r = d.ctl({"metrics"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  std::map<std::string, double> m;
  static const std::regex line(R"(^(\w+\{[^}]*\}) (\S+)$)");
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    std::smatch s;
    if (std::regex_match(l, s, line)) m[s[1]] = std::stod(s[2]);
  }
  return m;
}

double port_metric(const std::map<std::string, double>& m, const std::string& family, const std::string& port) {
  const auto it = m.find(family + "{fabric=\"ib\",port=\"" + port + "\"}");
  EXPECT_NE(it, m.end()) << family << " of " << port;
  return it == m.end() ? 0 : it->second;
}

double hca_metric(const std::map<std::string, double>& m, const std::string& family, const std::string& hca) {
  const auto it = m.find(family + "{fabric=\"ib\",hca=\"" + hca + "\"}");
  EXPECT_NE(it, m.end()) << family << " of " << hca;
  return it == m.end() ? 0 : it->second;
}

std::string sw_port(unsigned host) { return "sw/" + std::to_string(host + 1); }

TEST(Incast, FourWriteBwClientsIntoOneVhcaAreLosslessAndFair) {
  Fabricd d(incast_config());
  std::vector<std::unique_ptr<Process>> servers, clients;
  for (unsigned i = 0; i < kSenders; ++i)
    servers.push_back(std::make_unique<Process>(
        std::vector<std::string>{"ib_write_bw", "-d", "vib4", "-i", "1", "-p", std::to_string(19500 + i),
                                 "-s", "65536", "-D", "5"},
        d.app_env()));
  for (unsigned i = 0; i < kSenders; ++i) {
    std::vector<std::string> a{"ib_write_bw", "-d", "vib" + std::to_string(i), "-i", "1", "-p",
                               std::to_string(19500 + i), "-s", "65536", "-D", "5",
                               // Local ACK timeout 4.096 us x 2^20 = 4.3 s instead of perftest's
                               // 67 ms: on a lossless fabric only a host that stalls the lcore
                               // (a busy 2-core CI machine) could time an ACK out, and the
                               // emulator then fires the timer before the target's next poll
                               // sends the ACK. Retransmissions must mean loss, not load.
                               "-u", "20", "127.0.0.1"};
    // The client retries while its server does not listen yet.
    for (int attempt = 0; attempt < 100; ++attempt) {
      clients.push_back(std::make_unique<Process>(a, d.app_env()));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (clients.back()->running() || clients.back()->wait(std::chrono::seconds(1)).exit_code == 0) break;
      clients.pop_back();
    }
    ASSERT_EQ(clients.size(), i + 1) << "client " << i << " never connected";
  }
  // All four send now: measure one window over the daemon's counters.
  auto all_sending = [&] {
    const auto a = metrics(d);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto b = metrics(d);
    for (unsigned i = 0; i < kSenders; ++i)
      if (port_metric(b, "vfabric_port_rcv_data_total", sw_port(i)) <=
          port_metric(a, "vfabric_port_rcv_data_total", sw_port(i)))
        return false;
    return true;
  };
  bool sending = false;
  for (int i = 0; i < 20 && !(sending = all_sending()); ++i) {
  }
  ASSERT_TRUE(sending) << "the four clients never sent at the same time";
  // Each sample is taken somewhere inside its fabricctl call: time it at the
  // call's midpoint.
  const auto sample = [&](std::chrono::steady_clock::time_point& at) {
    const auto before = std::chrono::steady_clock::now();
    auto m = metrics(d);
    at = before + (std::chrono::steady_clock::now() - before) / 2;
    return m;
  };
  std::chrono::steady_clock::time_point t0, t1;
  const auto m0 = sample(t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto m1 = sample(t1);
  const double secs = std::chrono::duration<double>(t1 - t0).count();
  // PortRcvData is in 4-byte words, the whole frame (LRH..VCRC).
  const auto bps = [&](const std::string& family, const std::string& port) {
    return (port_metric(m1, family, port) - port_metric(m0, family, port)) * 4 * 8 / secs;
  };
  const double bottleneck = bps("vfabric_port_xmit_data_total", "sw/5");
  std::printf("incast through fabricd: bottleneck %.3f Gb/s of 2, senders", bottleneck / 1e9);
  std::vector<double> in(kSenders);
  double sum = 0;
  for (unsigned i = 0; i < kSenders; ++i) {
    in[i] = bps("vfabric_port_rcv_data_total", sw_port(i));
    sum += in[i];
    std::printf(" %.3f", in[i] / 1e9);
  }
  std::printf(" Gb/s\n");
  // The link is the bottleneck and it is full (wall-clock sampling: a few %).
  // (No upper bound: under ASan a fabricctl call takes long enough that the
  // midpoint timing overstates the rate -- 2.15 Gb/s was seen. The exact
  // figure is the virtual-time test's.)
  EXPECT_GT(bottleneck, 0.9 * kRateBps);
  // Every sender gets a real share. Not an even one: five busy-polling
  // perftest processes and the lcore share two cores here, and a client the
  // kernel schedules less posts less (CI saw 0.37 against a 0.48 mean under
  // ASan). The arbiter's fairness is asserted in virtual time.
  for (unsigned i = 0; i < kSenders; ++i)
    EXPECT_GT(in[i], 0.4 * sum / kSenders) << "sender vib" << i;

  for (auto& c : clients) {
    const RunResult r = c->wait(std::chrono::seconds(60));
    EXPECT_EQ(r.exit_code, 0) << r.describe();
  }
  for (auto& s : servers) {
    const RunResult r = s->wait(std::chrono::seconds(30));
    EXPECT_EQ(r.exit_code, 0) << r.describe();
  }
  // Lossless: nothing discarded or in error anywhere, RC never recovered
  // anything, and the senders waited for credit instead.
  const auto end = metrics(d);
  for (unsigned p = 1; p <= 5; ++p)
    for (const char* f : {"vfabric_port_xmit_discards_total", "vfabric_port_rcv_errors_total",
                          "vfabric_excessive_buffer_overrun_errors_total", "vfabric_port_rcv_discards_total"})
      EXPECT_EQ(port_metric(end, f, "sw/" + std::to_string(p)), 0) << f << " sw/" << p;
  for (unsigned i = 0; i <= kSenders; ++i) {
    const std::string h = "vib" + std::to_string(i);
    EXPECT_EQ(port_metric(end, "vfabric_port_xmit_discards_total", h), 0) << h;
    EXPECT_EQ(hca_metric(end, "vfabric_retransmitted_packets_total", h), 0) << h;
    EXPECT_EQ(hca_metric(end, "vfabric_retransmit_timeouts_total", h), 0) << h;
    if (i < kSenders) {
      EXPECT_GT(port_metric(end, "vfabric_port_xmit_wait_total", h), 0) << h;
    }
  }
}

}  // namespace
}  // namespace vf::test
