// A fabric's qos: section on a real fabricd: every port runs the configured
// operational VLs, SL→VL map and VL arbitration, ibv_devinfo and fabricctl
// show them, and traffic on an SL travels on the VL the map gives it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

const char* kConfig = R"(daemon:
  runtime_dir: /run/vfabric
fabrics:
  - name: ib
    link_layer: infiniband
    qos:
      data_vls: 2
      sl2vl: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]
      vlarb_high: [{vl: 1, weight: 16}]
      vlarb_low: [{vl: 0, weight: 255}]
      high_limit: 2
    switches: [{name: sw, ports: 4}]
    hcas: [{name: vib0}, {name: vib1}]
    links:
      - {a: vib0, b: sw/1, speed: EDR}
      - {a: vib1, b: sw/2, speed: EDR}
)";

uint64_t metric(const std::string& text, const std::string& sample) {
  const auto at = text.find(sample + " ");
  return at == std::string::npos ? ~0ull : std::stoull(text.substr(at + sample.size() + 1));
}

TEST(Qos, TheSectionReachesEveryPortAndTheWire) {
  Fabricd d(kConfig);
  const RunResult list = d.ctl({"--json", "hca", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  for (const auto& h : nlohmann::json::parse(list.out)) {
    EXPECT_EQ(h["qos"]["operational_vls"], 2) << h.dump();
    EXPECT_EQ(h["qos"]["vl_arbitration"]["high"].size(), 1u) << h.dump();
  }
  const RunResult info = run({"ibv_devinfo", "-v", "-d", "vib0"}, d.app_env());
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  EXPECT_TRUE(std::regex_search(info.out, std::regex(R"(max_vl_num:\s+2\b)"))) << info.out;

  // A pingpong on SL 3: VL 1 by the map, on every hop.
  Process server({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", "19801", "-l", "3", "-n", "20"}, d.app_env());
  RunResult client;
  for (int attempt = 0; attempt < 50; ++attempt) {
    client = run({"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", "19801", "-l", "3", "-n", "20", "127.0.0.1"},
                 d.app_env(), std::chrono::seconds(20));
    if (client.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(client.exit_code, 0) << client.describe();
  EXPECT_EQ(server.wait(std::chrono::seconds(20)).exit_code, 0);
  const RunResult m = d.ctl({"metrics"});
  ASSERT_EQ(m.exit_code, 0);
  EXPECT_GE(metric(m.out, R"(vfabric_class_xmit_packets_total{fabric="ib",port="vib0",class="vl1"})"), 20u) << m.out;
  EXPECT_GE(metric(m.out, R"(vfabric_class_xmit_packets_total{fabric="ib",port="sw/2",class="vl1"})"), 20u);
  EXPECT_EQ(metric(m.out, R"(vfabric_class_xmit_packets_total{fabric="ib",port="sw/2",class="vl3"})"), 0u)
      << "VL3 is not operational";
}

}  // namespace
}  // namespace vf::test
