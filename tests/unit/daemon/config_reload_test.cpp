// What a reload applies live (a link's rate and delay) and what it names as
// needing a restart, against configs/default.yaml edited as a lab would.
#include "daemon/config/config_reload.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace vf {
namespace {

std::string default_yaml() {
  std::ifstream f(std::string(VF_SOURCE_DIR) + "/configs/default.yaml");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

config::Config with(const std::string& from, const std::string& to) {
  std::string y = default_yaml();
  const size_t at = y.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) y.replace(at, from.size(), to);
  return config::load_config_string(y, "edited.yaml");
}

const config::Config& running() {
  static const config::Config c = config::load_config_string(default_yaml(), "default.yaml");
  return c;
}

TEST(ConfigReload, TheSameFileChangesNothing) {
  const ReloadPlan p = plan_reload(running(), running());
  EXPECT_TRUE(p.live.empty());
  EXPECT_TRUE(p.restart.empty());
}

TEST(ConfigReload, ALinksRateAndDelayChangeLive) {
  const ReloadPlan p = plan_reload(running(), with("{a: vroce1, b: ethsw0/2, speed: 100G, delay: 100ns, mtu: 1500}",
                                                   "{a: vroce1, b: ethsw0/2, speed: 100G, rate: 25G, delay: 2us, mtu: 1500}"));
  ASSERT_EQ(p.live.size(), 1u);
  EXPECT_EQ(p.live[0].fabric, 1u);
  EXPECT_EQ(p.live[0].link, 1u);
  EXPECT_EQ(p.live[0].rate_bps, 25'000'000'000ULL);
  EXPECT_EQ(p.live[0].delay_ns, 2000u);
  EXPECT_EQ(p.live[0].what, "fabric roce: link vroce1 - ethsw0/2: rate 100 Gb/s -> 25 Gb/s delay 100ns -> 2us");
  EXPECT_TRUE(p.restart.empty());
}

TEST(ConfigReload, WhatShapesTheFabricNeedsARestart) {
  const auto restart = [](const config::Config& next) { return plan_reload(running(), next).restart; };
  EXPECT_EQ(restart(with("mtu: 1500}\n      - {a: vroce1", "mtu: 9000}\n      - {a: vroce1")),
            std::vector<std::string>{"fabric roce: link vroce0 - ethsw0/1: mtu 1500 -> 9000"});
  EXPECT_EQ(restart(with("name: ibsw0\n        ports: 8", "name: ibsw0\n        ports: 12")),
            std::vector<std::string>{"fabric ib: switches"});
  EXPECT_EQ(restart(with("{a: vib1, b: ibsw0/2,", "{a: vib1, b: ibsw0/3,")),
            std::vector<std::string>{"fabric ib: links (cabling)"});
  EXPECT_EQ(restart(with("ip: 198.18.0.2", "ip: 198.18.0.9")), std::vector<std::string>{"fabric roce: hcas"});
  EXPECT_EQ(restart(with("pfc: [3]", "pfc: off")), std::vector<std::string>{"fabric roce: qos (trust, DSCP map, PFC, ECN, DCQCN, ETS)"});
  EXPECT_EQ(restart(with("time_dilation: 1 ", "time_dilation: 2 ")), std::vector<std::string>{"daemon.time_dilation"});
  EXPECT_EQ(restart(with("catch_up: batched", "catch_up: exact")), std::vector<std::string>{"daemon.catch_up"});
  EXPECT_EQ(restart(with("metrics_listen: 127.0.0.1:9469", "metrics_listen: 127.0.0.1:9470")),
            std::vector<std::string>{"daemon.metrics_listen"});
  // The switches take their adaptive mode when they are built.
  config::Config adaptive = running();
  adaptive.fabrics[0].adaptive.mode = config::AdaptiveRouting::Mode::PerPacket;
  EXPECT_EQ(restart(adaptive), std::vector<std::string>{"fabric ib: adaptive_routing off -> per-packet"});
}

}  // namespace
}  // namespace vf
