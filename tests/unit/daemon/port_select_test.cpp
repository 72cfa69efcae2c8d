// Which ports `fabricctl counters [NAME]` means, against configs/fat-tree.yaml
// (16 vHCAs; leaves with 6 ports, spines with 4, every port cabled) and a
// config with an uncabled switch port.
#include "daemon/commands/port_select.hpp"

#include <gtest/gtest.h>

namespace vf {
namespace {

const config::Config& fat_tree() {
  static const config::Config c = config::load_config(std::string(VF_SOURCE_DIR) + "/configs/fat-tree.yaml");
  return c;
}

std::vector<std::string> names(const config::Config& cfg, std::string_view name) {
  const auto r = select_ports(cfg, name);
  if (const auto* e = std::get_if<PortSelectError>(&r)) return {"error: " + e->message + " | " + e->hint};
  std::vector<std::string> out;
  for (const PortRef& p : std::get<std::vector<PortRef>>(r)) out.push_back(p.text());
  return out;
}

TEST(PortSelect, ANodeOrPortNamesItsPorts) {
  EXPECT_EQ(names(fat_tree(), "vib3"), std::vector<std::string>{"vib3"});
  EXPECT_EQ(names(fat_tree(), "leaf0/5"), std::vector<std::string>{"leaf0/5"});
  EXPECT_EQ(names(fat_tree(), "spine1"), (std::vector<std::string>{"spine1/1", "spine1/2", "spine1/3", "spine1/4"}));
}

TEST(PortSelect, AFabricOrNothingMeansEveryCabledPortHcasFirst) {
  const auto all = names(fat_tree(), "");
  ASSERT_EQ(all.size(), 16u + 4 * 6 + 2 * 4);
  EXPECT_EQ(all.front(), "vib0");
  EXPECT_EQ(all[15], "vib15");
  EXPECT_EQ(all[16], "spine0/1");
  EXPECT_EQ(names(fat_tree(), "ib"), all);
}

TEST(PortSelect, UncabledSwitchPortsAreLeftOutUnlessNamed) {
  const config::Config cfg = config::load_config_string(R"(
fabrics:
  - name: ib
    link_layer: infiniband
    switches: [{name: sw, ports: 8}]
    hcas: [{name: vib0}, {name: vib1}]
    links:
      - {a: vib0, b: sw/2, speed: EDR}
      - {a: vib1, b: sw/7, speed: EDR}
)",
                                           "inline");
  EXPECT_EQ(names(cfg, "sw"), (std::vector<std::string>{"sw/2", "sw/7"}));
  EXPECT_EQ(names(cfg, ""), (std::vector<std::string>{"vib0", "vib1", "sw/2", "sw/7"}));
  EXPECT_EQ(names(cfg, "sw/3"), std::vector<std::string>{"sw/3"});
}

TEST(PortSelect, OnePortMeansAVhcaOrASwitchPort) {
  const auto one = [](std::string_view name) {
    const auto r = select_one_port(fat_tree(), name);
    if (const auto* e = std::get_if<PortSelectError>(&r)) return "error: " + e->message;
    return std::get<PortRef>(r).text();
  };
  EXPECT_EQ(one("vib3"), "vib3");
  EXPECT_EQ(one("leaf0/5"), "leaf0/5");
  EXPECT_EQ(one("spine1"), "error: 'spine1' names 4 ports");
  EXPECT_EQ(one("ib"), "error: 'ib' names 48 ports");
  EXPECT_EQ(one(""), "error: name a port");
  EXPECT_EQ(one("vib99"), "error: no vHCA, switch, port or fabric named 'vib99'");
}

TEST(PortSelect, WhatNamesNoPortIsRefusedWithAHint) {
  EXPECT_EQ(names(fat_tree(), "vib99")[0],
            "error: no vHCA, switch, port or fabric named 'vib99' | name a vHCA (vib0), a switch (leaf0), a switch "
            "port (leaf0/3) or a fabric, or nothing for all");
  EXPECT_EQ(names(fat_tree(), "leaf0/7")[0], "error: switch leaf0 has ports 1..6 | e.g. leaf0/1");
  EXPECT_EQ(names(fat_tree(), "leaf0/0")[0], "error: switch leaf0 has ports 1..6 | e.g. leaf0/1");
  EXPECT_EQ(names(fat_tree(), "leaf0/x")[0], "error: switch leaf0 has ports 1..6 | e.g. leaf0/1");
  EXPECT_EQ(names(fat_tree(), "vib0/1")[0], "error: a vHCA has one port: name it without a number | e.g. vib0");
  EXPECT_EQ(names(fat_tree(), "ib/1")[0].rfind("error: no vHCA, switch, port or fabric named 'ib/1'", 0), 0u);
}

}  // namespace
}  // namespace vf
