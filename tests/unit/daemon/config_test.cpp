// The config loader: the shipped default, derived values, and a table of
// broken configs, each of which must be reported at the right line with the
// right problem.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "daemon/config/pfc_watchdog_check.hpp"
#include "daemon/config/addr.hpp"
#include "daemon/config/config.hpp"
#include "daemon/sm/lid_assign.hpp"
#include "daemon/config/link_attrs.hpp"
#include "daemon/sm/sm_qos.hpp"
#include "test_util.hpp"

namespace vf::config {
namespace {

const std::string kDefault = std::string(VF_SOURCE_DIR) + "/configs/default.yaml";

TEST(Config, DefaultLoadsWithExpectedValues) {
  Config c = load_config(kDefault);
  EXPECT_EQ(c.source, kDefault);
  EXPECT_EQ(c.daemon.runtime_dir, "/run/vfabric");
  EXPECT_EQ(c.daemon.eal_args,
            (std::vector<std::string>{"--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "512"}));
  EXPECT_EQ(c.daemon.time_dilation, 1.0);
  EXPECT_FALSE(c.daemon.exact_catch_up);
  ASSERT_EQ(c.fabrics.size(), 2u);

  const Fabric& ib = c.fabrics[0];
  EXPECT_EQ(ib.name, "ib");
  EXPECT_EQ(ib.link_layer, LinkLayer::Infiniband);
  EXPECT_EQ(ib.subnet_prefix, 0xfe80000000000000ULL);
  ASSERT_EQ(ib.switches.size(), 1u);
  EXPECT_EQ(ib.switches[0].name, "ibsw0");
  EXPECT_EQ(ib.switches[0].ports, 8u);
  EXPECT_EQ(ib.switches[0].latency_ns, 100u);
  ASSERT_EQ(ib.hcas.size(), 2u);
  EXPECT_EQ(ib.hcas[0].name, "vib0");
  EXPECT_EQ(ib.hcas[0].index, 0u);
  EXPECT_EQ(ib.hcas[1].name, "vib1");
  EXPECT_EQ(ib.hcas[1].index, 1u);
  ASSERT_TRUE(ib.hcas[0].ipv4);  // IPoIB-style, for rdma_cm
  EXPECT_EQ(addr::format_ipv4(*ib.hcas[0].ipv4), "198.18.0.101");
  EXPECT_EQ(ib.hcas[0].node_guid >> 40, 0x025646u);  // derived: "VF" pseudo-OUI
  ASSERT_EQ(ib.links.size(), 2u);
  const Link& l0 = ib.links[0];
  EXPECT_EQ(l0.a.text(), "vib0");
  EXPECT_FALSE(l0.a.is_switch);
  EXPECT_EQ(l0.b.text(), "ibsw0/1");
  EXPECT_TRUE(l0.b.is_switch);
  EXPECT_EQ(l0.b.port, 1u);
  EXPECT_EQ(l0.width, IbWidth::X4);
  EXPECT_EQ(l0.speed, IbSpeed::EDR);
  EXPECT_EQ(l0.rate_bps, 100'000'000'000ULL);
  EXPECT_EQ(l0.delay_ns, 100u);
  EXPECT_EQ(l0.mtu, 4096u);
  EXPECT_EQ(ib.link_of("vib1"), &ib.links[1]);

  const Fabric& roce = c.fabrics[1];
  EXPECT_EQ(roce.name, "roce");
  EXPECT_EQ(roce.link_layer, LinkLayer::Ethernet);
  EXPECT_EQ(roce.switches[0].latency_ns, 300u);
  ASSERT_EQ(roce.hcas.size(), 2u);
  EXPECT_EQ(roce.hcas[0].name, "vroce0");
  EXPECT_EQ(roce.hcas[0].index, 2u);
  EXPECT_EQ(roce.hcas[0].ipv4, 0xc6120001u);
  EXPECT_EQ(roce.hcas[1].ipv4, 0xc6120002u);
  EXPECT_EQ(roce.hcas[0].mac[0], 0x02);
  EXPECT_EQ(roce.hcas[0].mac[1], 0x56);
  EXPECT_NE(roce.hcas[0].mac, roce.hcas[1].mac);
  EXPECT_EQ(roce.hcas[0].node_guid, addr::eui64_from_mac(roce.hcas[0].mac));
  const Link& e0 = roce.links[0];
  EXPECT_EQ(e0.eth_speed_gbps, 100u);
  EXPECT_EQ(e0.width, IbWidth::X4);  // mlx5: 100GBASE-CR4 -> 4X EDR
  EXPECT_EQ(e0.speed, IbSpeed::EDR);
  EXPECT_EQ(e0.rate_bps, 100'000'000'000ULL);
  EXPECT_EQ(e0.mtu, 1500u);

  auto all = c.hcas();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[3].hca->name, "vroce1");
  EXPECT_EQ(all[3].fabric, &roce);
  EXPECT_EQ(all[3].link, &roce.links[1]);
  ASSERT_TRUE(c.find_hca("vib1"));
  EXPECT_EQ(c.find_hca("vib1")->hca->index, 1u);
  EXPECT_FALSE(c.find_hca("nope"));
}

TEST(Config, DerivedIdentifiersDependOnlyOnNames) {
  Config a = load_config(kDefault);
  Config b = load_config(kDefault);
  EXPECT_EQ(a.fabrics[1].hcas[0].mac, b.fabrics[1].hcas[0].mac);
  EXPECT_EQ(a.fabrics[0].hcas[0].node_guid, b.fabrics[0].hcas[0].node_guid);
  // Adding an HCA in front renumbers indices but leaves identities alone.
  std::string text = test::read_file(kDefault);
  auto pos = text.find("      - name: vib0");
  text.insert(pos, "      - name: vib9\n");
  pos = text.find("      - {a: vib0");
  text.insert(pos, "      - {a: vib9, b: ibsw0/3, width: 4x, speed: EDR}\n");
  Config c = load_config_string(text, "x.yaml");
  EXPECT_EQ(c.find_hca("vib0")->hca->index, 1u);
  EXPECT_EQ(c.find_hca("vib0")->hca->node_guid, a.fabrics[0].hcas[0].node_guid);
  EXPECT_EQ(c.find_hca("vroce0")->hca->mac, a.fabrics[1].hcas[0].mac);
}

TEST(Config, ExamplesInDataDirLoad) {
  Config big = load_config(std::string(VF_TEST_DATA_DIR) + "/two_tier_ib.yaml");
  ASSERT_EQ(big.fabrics.size(), 1u);
  const Fabric& f = big.fabrics[0];
  EXPECT_EQ(f.subnet_prefix, 0xfec0000000000001ULL);
  EXPECT_EQ(f.switches.size(), 3u);
  EXPECT_EQ(f.hcas.size(), 4u);
  const Link* l = f.link_of("n3");
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->width, IbWidth::X2);
  EXPECT_EQ(l->speed, IbSpeed::HDR);
  EXPECT_EQ(l->rate_bps, 100'000'000'000ULL);  // HDR100
  EXPECT_EQ(f.find_hca("n0")->node_guid, 0x0002c90300000001ULL);
  EXPECT_EQ(f.find_switch("spine")->latency_ns, 130u);

  Config roce = load_config(std::string(VF_TEST_DATA_DIR) + "/roce_jumbo.yaml");
  const Fabric& r = roce.fabrics[0];
  EXPECT_EQ(r.find_hca("r0")->mac, (addr::Mac{0x02, 0, 0, 0, 0, 0x10}));
  EXPECT_EQ(r.links[0].mtu, 9000u);
  EXPECT_EQ(r.links[0].rate_bps, 40'000'000'000ULL);  // rate: override of a 100G port
  EXPECT_EQ(r.links[0].eth_speed_gbps, 100u);
  EXPECT_EQ(r.links[0].delay_ns, 1500u);
  EXPECT_EQ(roce.daemon.time_dilation, 4.0);
  EXPECT_TRUE(roce.daemon.exact_catch_up);
}

TEST(LinkAttrs, IbvEncodingsAndRates) {
  EXPECT_EQ(ibv_active_width(IbWidth::X1), 1);
  EXPECT_EQ(ibv_active_width(IbWidth::X4), 2);
  EXPECT_EQ(ibv_active_width(IbWidth::X8), 4);
  EXPECT_EQ(ibv_active_width(IbWidth::X12), 8);
  EXPECT_EQ(ibv_active_width(IbWidth::X2), 16);
  EXPECT_EQ(ibv_active_speed(IbSpeed::SDR), 1);
  EXPECT_EQ(ibv_active_speed(IbSpeed::FDR10), 8);
  EXPECT_EQ(ibv_active_speed(IbSpeed::EDR), 32);
  EXPECT_EQ(ibv_active_speed(IbSpeed::NDR), 128);
  EXPECT_EQ(sysfs_rate_text(IbWidth::X4, IbSpeed::EDR), "100 Gb/sec (4X EDR)");
  EXPECT_EQ(sysfs_rate_text(IbWidth::X1, IbSpeed::SDR), "2.5 Gb/sec (1X SDR)");
  EXPECT_EQ(sysfs_rate_text(IbWidth::X4, IbSpeed::FDR), "56 Gb/sec (4X FDR)");
  EXPECT_EQ(sysfs_rate_text(IbWidth::X12, IbSpeed::QDR), "120 Gb/sec (12X QDR)");
  EXPECT_EQ(sysfs_rate_text(IbWidth::X4, IbSpeed::NDR), "400 Gb/sec (4X NDR)");
  EXPECT_EQ(ibv_mtu_enum(256), 1);
  EXPECT_EQ(ibv_mtu_enum(4096), 5);
  EXPECT_EQ(ibv_mtu_enum(1500), 0);
}

TEST(LinkAttrs, RoceActiveMtuLeavesRoomForHeaders) {
  Link l;
  for (auto [eth, ib] : std::vector<std::pair<uint32_t, uint32_t>>{
           {1500, 1024}, {4200, 4096}, {9000, 4096}, {1100, 512}, {576, 256}, {2144, 2048}, {2143, 1024}}) {
    l.mtu = eth;
    EXPECT_EQ(active_mtu_bytes(LinkLayer::Ethernet, l), ib) << "eth mtu " << eth;
  }
  l.mtu = 2048;
  EXPECT_EQ(active_mtu_bytes(LinkLayer::Infiniband, l), 2048u);
}

TEST(LinkAttrs, EthernetSpeedsReportWhatMlx5Reports) {
  auto load = [](const std::string& speed) {
    return load_config_string(fmt::format(R"(fabrics:
  - name: e
    link_layer: ethernet
    switches: [{{name: s, ports: 2}}]
    hcas: [{{name: h, ip: 10.0.0.1}}]
    links: [{{a: h, b: s/1, speed: {}}}]
)", speed), "t.yaml");
  };
  struct Row {
    const char* speed;
    const char* text;
  };
  for (auto [speed, text] : std::vector<Row>{{"1G", "2.5 Gb/sec (1X SDR)"},
                                             {"10G", "10 Gb/sec (1X QDR)"},
                                             {"25G", "25 Gb/sec (1X EDR)"},
                                             {"40G", "40 Gb/sec (4X QDR)"},
                                             {"50G", "50 Gb/sec (1X HDR)"},
                                             {"100G", "100 Gb/sec (4X EDR)"},
                                             {"200Gbps", "200 Gb/sec (4X HDR)"},
                                             {"400G", "400 Gb/sec (4X NDR)"}}) {
    Config c = load(speed);
    const Fabric& f = c.fabrics[0];
    auto p = port_attrs(f, f.links[0]);
    EXPECT_EQ(p.rate_text, text) << speed;
    EXPECT_EQ(p.link_layer, 2);
    EXPECT_EQ(p.port_cap_flags, 0x04010000u);
    EXPECT_EQ(p.pkey_tbl_len, kPkeyTableLenEth);
  }
}

TEST(LidAssign, HcasThenSwitchesPerSubnet) {
  Config c = load_config(kDefault);
  auto ib = sm::assign_lids(c.fabrics[0]);
  EXPECT_EQ(ib.lid("vib0"), 1);
  EXPECT_EQ(ib.lid("vib1"), 2);
  EXPECT_EQ(ib.lid("ibsw0"), 3);
  EXPECT_EQ(ib.sm_lid, 3);
  EXPECT_EQ(ib.lid("vroce0"), 0);
  auto roce = sm::assign_lids(c.fabrics[1]);
  EXPECT_TRUE(roce.lids.empty());
  EXPECT_EQ(roce.sm_lid, 0);
}

// ---- broken configs -------------------------------------------------------

constexpr const char* kIb = R"(fabrics:
  - name: ib
    link_layer: infiniband
    switches:
      - {name: sw0, ports: 4}
    hcas:
      - name: h0
      - name: h1
    links:
      - {a: h0, b: sw0/1, speed: EDR}
      - {a: h1, b: sw0/2, speed: EDR}
)";

constexpr const char* kEth = R"(fabrics:
  - name: eth
    link_layer: ethernet
    switches:
      - {name: sw0, ports: 4}
    hcas:
      - {name: h0, ip: 10.0.0.1}
      - {name: h1, ip: 10.0.0.2}
    links:
      - {a: h0, b: sw0/1, speed: 100G}
      - {a: h1, b: sw0/2, speed: 100G}
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  if (pos == std::string::npos) throw std::runtime_error("test bug: no '" + from + "' in base config");
  return text.replace(pos, from.size(), to);
}

// Two routing leaves joined by one routed link, a host on each.
constexpr const char* kRouted = R"(fabrics:
  - name: eth
    link_layer: ethernet
    switches:
      - {name: leaf0, ports: 4, router: {gateway: 10.0.0.1/24, routed_ports: [4]}}
      - {name: leaf1, ports: 4, router: {gateway: 10.0.1.1/24, routed_ports: [4]}}
    hcas:
      - {name: h0, ip: 10.0.0.10}
      - {name: h1, ip: 10.0.1.10}
    links:
      - {a: h0, b: leaf0/1, speed: 100G}
      - {a: h1, b: leaf1/1, speed: 100G}
      - {a: leaf0/4, b: leaf1/4, speed: 100G}
)";

struct BadCase {
  const char* name;
  std::string yaml;
  std::string at;       // text on the line the error must point to
  std::string problem;  // must appear in the message
  std::string fix = {}; // must appear after the "; "
};

// kIb plus switch sw1 carrying HCA h2, and nothing joining sw1 to sw0.
std::string ib_with_island() {
  std::string y = replace(kIb, "      - {name: sw0, ports: 4}\n", "      - {name: sw0, ports: 4}\n      - {name: sw1, ports: 2}\n");
  y = replace(y, "      - name: h1\n", "      - name: h1\n      - name: h2\n");
  return y + "      - {a: h2, b: sw1/1, speed: EDR}\n";
}

// A router with 65 routed ports: more than one ECMP group can hold.
std::string many_routed_ports() {
  std::string ports;
  for (int p = 1; p <= 65; ++p) ports += (p > 1 ? ", " : "") + std::to_string(p);
  return replace(kRouted, "{name: leaf1, ports: 4, router: {gateway: 10.0.1.1/24, routed_ports: [4]}}",
                 "{name: leaf1, ports: 80, router: {gateway: 10.0.1.1/24, routed_ports: [" + ports + "]}}");
}

std::vector<BadCase> bad_cases() {
  std::string many_hcas = "fabrics:\n  - name: big\n    link_layer: infiniband\n    switches: [{name: s, ports: 254}]\n    hcas:\n";
  for (int i = 0; i < 65; ++i) many_hcas += fmt::format("      - name: h{}\n", i);
  many_hcas += "    links: []\n";
  return {
      {"yaml_syntax", replace(kIb, "    link_layer: infiniband", "   link_layer: infiniband"), "link_layer",
       "YAML syntax error", "fix the YAML"},
      {"unbalanced_flow", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR"), "",
       "YAML syntax error"},
      {"empty", "# nothing\n", "", "the config is empty"},
      {"unknown_top_key", replace(kIb, "fabrics:", "fabrcs:"), "fabrcs", "unknown key 'fabrcs' in the top level",
       "did you mean 'fabrics'?"},
      {"unknown_key_suggestion", replace(kIb, "link_layer:", "link_layr:"), "link_layr",
       "unknown key 'link_layr' in fabric 1", "did you mean 'link_layer'?"},
      {"unknown_key_no_suggestion", replace(kIb, "      - name: h1\n", "      - name: h1\n        colour: red\n"),
       "colour", "unknown key 'colour' in HCA 2 of fabric 'ib'", "allowed keys: name, ip, mac, node_guid"},
      {"duplicate_key", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    link_layer: ethernet\n"),
       "link_layer: ethernet", "duplicate key 'link_layer'"},
      {"missing_required", replace(kIb, "    link_layer: infiniband\n", ""), "- name: ib",
       "fabric 'ib' has no 'link_layer'", "add it"},
      {"fabrics_not_list", "fabrics: {name: ib}\n", "fabrics", "fabrics must be a list"},
      {"no_fabrics", "fabrics: []\n", "fabrics", "no fabrics are defined"},
      {"duplicate_hca", replace(kIb, "      - name: h1\n", "      - {name: h0}\n"), "{name: h0}",
       "name 'h0' is already used (line 7)", "unique across the whole config"},
      {"duplicate_across_kinds", replace(kIb, "{name: sw0, ports: 4}", "{name: h1, ports: 4}"), "      - name: h1",
       "name 'h1' is already used (line 5)"},
      {"bad_name", replace(kIb, "name: h1", "name: Vib-1"), "Vib-1", "HCA name 'Vib-1' is not valid", "a-z, 0-9 and _"},
      {"name_too_long", replace(kIb, "name: h1", "name: " + std::string(64, 'a')), "aaaa", "is not valid"},
      {"too_many_hcas", many_hcas, "name: h64", "more than 64 HCAs", "uverbs0..63"},
      {"bad_link_layer", replace(kIb, "link_layer: infiniband", "link_layer: infiniband2"), "infiniband2",
       "unknown link_layer 'infiniband2'", "did you mean 'infiniband'?"},
      {"bad_ip", replace(kEth, "ip: 10.0.0.2", "ip: 10.0.0.256"), "10.0.0.256", "ip '10.0.0.256' of HCA 'h1' is not an IPv4 address"},
      {"loopback_ip", replace(kEth, "ip: 10.0.0.2", "ip: 127.0.0.2"), "127.0.0.2", "loopback"},
      {"duplicate_ip", replace(kEth, "ip: 10.0.0.2", "ip: 10.0.0.1"), "{name: h1", "ip 10.0.0.1 of HCA 'h1' is already used by 'h0' (line 7)"},
      {"missing_ip", replace(kEth, "{name: h1, ip: 10.0.0.2}", "{name: h1}"), "{name: h1}", "has no 'ip'"},
      {"ip_taken_on_ib", replace(kIb, "      - name: h0\n      - name: h1\n",
                                 "      - name: h0\n        ip: 10.0.0.1\n      - name: h1\n        ip:  10.0.0.1\n"),
       "ip:  10.0.0.1", "is already used by 'h0'", "its own address"},
      {"netdev_not_an_ifname", replace(kEth, "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, netdev: eth/1}"),
       "eth/1", "netdev 'eth/1' of HCA 'h1' is not a Linux interface name", "1 to 15 letters"},
      {"netdev_taken", replace(kEth, "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, netdev: h0}"), "{name: h1",
       "netdev h0 of HCA 'h1' is already the interface of 'h0' (line 7)", "an interface of its own"},
      {"netdev_without_ip", replace(kIb, "      - name: h1\n", "      - name: h1\n        netdev: ib1\n"), "ib1",
       "netdev of HCA 'h1' is set but the HCA has no ip"},
      {"netdev_name_too_long", replace(replace(kEth, "{name: h1,", "{name: h1_with_a_long_name,"), "{a: h1,", "{a: h1_with_a_long_name,"),
       "h1_with_a_long_name", "HCA name 'h1_with_a_long_name' is too long for the Linux interface", "add netdev: NAME"},
      {"netdev_while_off", "daemon:\n  netdevs: off\n" + replace(kEth, "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, netdev: x}"),
       "netdev: x", "netdev of HCA 'h1' is set but daemon.netdevs is off"},
      {"netdevs_not_a_switch", "daemon:\n  netdevs: maybe\n" + std::string(kEth), "maybe", "netdevs 'maybe' is neither on nor off"},
      {"multicast_mac", replace(kEth, "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, mac: 01:00:5e:00:00:01}"),
       "01:00:5e", "is a multicast address"},
      {"duplicate_mac", replace(replace(kEth, "{name: h0, ip: 10.0.0.1}", "{name: h0, ip: 10.0.0.1, mac: 02:00:00:00:00:01}"),
                                "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, mac: 02:00:00:00:00:01}"),
       "{name: h1", "mac 02:00:00:00:00:01 of HCA 'h1' is already used by 'h0'"},
      {"duplicate_guid", replace(replace(kIb, "      - name: h0\n", "      - {name: h0, node_guid: 0x1}\n"),
                                 "      - name: h1\n", "      - {name: h1, node_guid: \"0000:0000:0000:0001\"}\n"),
       "name: h1", "node_guid 0000:0000:0000:0001 of 'h1' is already used by 'h0'"},
      {"bad_guid", replace(kIb, "      - name: h1\n", "      - {name: h1, node_guid: zz}\n"), "zz", "node_guid 'zz' of 'h1' is not a GUID"},
      {"ib_mtu", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, mtu: 1500}"),
       "mtu: 1500", "InfiniBand MTU '1500' is not valid", "256, 512, 1024, 2048 or 4096"},
      {"eth_mtu", replace(kEth, "{a: h1, b: sw0/2, speed: 100G}", "{a: h1, b: sw0/2, speed: 100G, mtu: 100}"),
       "mtu: 100", "Ethernet MTU '100' is out of range", "576 to 9216"},
      {"delay_without_unit", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, delay: 100}"),
       "delay: 100", "delay '100' is not a delay", "with a unit"},
      {"delay_fraction_ns", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, delay: 1.5ns}"),
       "1.5ns", "delay '1.5ns' is not a delay", "whole number of nanoseconds"},
      {"bad_rate", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, rate: 10GB/s}"),
       "10GB/s", "rate '10GB/s' is not a bit rate"},
      {"bad_latency", replace(kIb, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, latency: soon}"), "soon",
       "latency 'soon' of switch 'sw0' is not a delay"},
      {"ports_zero", replace(kIb, "ports: 4", "ports: 0"), "ports: 0", "ports '0' of switch 'sw0' is not a port count"},
      {"ports_huge", replace(kIb, "ports: 4", "ports: 300"), "ports: 300", "is not a port count", "1 to 254"},
      {"port_out_of_range", replace(kIb, "b: sw0/2", "b: sw0/9"), "sw0/9", "switch 'sw0' has ports 1..4; port 9 does not exist"},
      {"port_not_number", replace(kIb, "b: sw0/2", "b: sw0/two"), "sw0/two", "'two' is not a port number"},
      {"switch_without_port", replace(kIb, "b: sw0/2", "b: sw0"), "{a: h1, b: sw0,", "link end 'sw0' is a switch but names no port"},
      {"dangling_endpoint", replace(kIb, "b: sw0/2", "b: sw1/2"), "sw1/2", "link end 'sw1' names no switch or HCA of fabric 'ib'",
       "did you mean 'sw0'?"},
      {"hca_on_two_links", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h0, b: sw0/2, speed: EDR}"), "{a: h0, b: sw0/2",
       "HCA 'h0' is already connected (link at line 10)", "remove one of the links"},
      {"port_reused", replace(kIb, "b: sw0/2", "b: sw0/1"), "{a: h1", "port sw0/1 is already cabled (link at line 10)"},
      {"hca_unconnected", replace(kIb, "      - name: h1\n", "      - name: h1\n      - name: h2\n"), "name: h2",
       "HCA 'h2' is not connected to anything", "{a: h2, b: <switch>/<port>}"},
      {"hca_to_hca", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: h0, speed: EDR}"), "{a: h1, b: h0",
       "joins two HCAs"},
      {"hca_port_2", replace(kIb, "{a: h1, b: sw0/2", "{a: h1/2, b: sw0/2"), "h1/2", "HCA 'h1' has a single port, 1"},
      {"switch_loop", replace(kIb, "    links:\n", "    links:\n      - {a: sw0/3, b: sw0/4, speed: EDR}\n"), "sw0/3",
       "loops switch 'sw0' back to itself"},
      {"cross_fabric", std::string(kIb) + R"(  - name: ib2
    link_layer: infiniband
    switches: [{name: sw9, ports: 2}]
    hcas: [{name: h9}]
    links: [{a: h9, b: sw0/3, speed: EDR}]
)", "h9, b: sw0/3", "link end 'sw0' is not part of fabric 'ib2'"},
      {"ib_speed_typo", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR4}"), "EDR4",
       "unknown InfiniBand speed 'EDR4'", "did you mean 'EDR'?"},
      {"ib_width", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, width: 3x}"), "3x",
       "unknown link width '3x'"},
      {"eth_speed", replace(kEth, "{a: h1, b: sw0/2, speed: 100G}", "{a: h1, b: sw0/2, speed: 30G}"), "30G",
       "unknown Ethernet speed '30G'"},
      {"width_on_eth", replace(kEth, "{a: h1, b: sw0/2, speed: 100G}", "{a: h1, b: sw0/2, speed: 100G, width: 4x}"),
       "width: 4x", "'width' applies to infiniband fabrics"},
      {"missing_speed", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2}"), "{a: h1",
       "link 2 of fabric 'ib' has no 'speed'"},
      {"time_dilation_below_one", "daemon:\n  time_dilation: 0.5\n" + std::string(kIb), "time_dilation",
       "time_dilation 0.5 is out of range"},
      {"time_dilation_nan", "daemon:\n  time_dilation: .nan\n" + std::string(kIb), "time_dilation",
       "time_dilation '.nan' is not a number"},
      {"catch_up_unknown", "daemon:\n  catch_up: always\n" + std::string(kIb), "catch_up",
       "catch_up 'always' is not a catch-up mode"},
      {"relative_runtime_dir", "daemon:\n  runtime_dir: run/vfabric\n" + std::string(kIb), "runtime_dir",
       "runtime_dir 'run/vfabric' is not an absolute path"},
      {"long_runtime_dir", "daemon:\n  runtime_dir: /" + std::string(100, 'r') + "\n" + std::string(kIb), "runtime_dir",
       "runtime_dir is 101 characters long"},
      {"eal_args_not_list", "daemon:\n  eal_args: --no-huge\n" + std::string(kIb), "eal_args", "daemon.eal_args must be a list"},
      {"admin_group_missing", "daemon:\n  admin_group: no_such_group_vfabric\n" + std::string(kIb), "admin_group",
       "admin_group 'no_such_group_vfabric' does not exist on this host", "groupadd no_such_group_vfabric"},
      {"metrics_listen_host_name", "daemon:\n  metrics_listen: localhost:9469\n" + std::string(kIb), "metrics_listen",
       "metrics_listen 'localhost:9469' is not an address and port", "not a host name"},
      {"metrics_listen_port", "daemon:\n  metrics_listen: 127.0.0.1:70000\n" + std::string(kIb), "metrics_listen",
       "metrics_listen '127.0.0.1:70000' is not an address and port"},
      {"metrics_listen_v6_brackets", "daemon:\n  metrics_listen: \"::1:9469\"\n" + std::string(kIb), "metrics_listen",
       "metrics_listen '::1:9469' is not an address and port", "[::1]:9469"},
      {"admin_group_bad_name", "daemon:\n  admin_group: \"wheel; rm\"\n" + std::string(kIb), "admin_group",
       "admin_group 'wheel; rm' is not a group name"},
      {"admin_group_list", "daemon:\n  admin_group: [adm]\n" + std::string(kIb), "admin_group",
       "daemon.admin_group must be a single value"},
      {"unquoted_prefix", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    subnet_prefix: fe80::\n"),
       "subnet_prefix", "YAML syntax error: illegal map value", "quote values that contain ': ' or end in ':'"},
      {"prefix_low_bits", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    subnet_prefix: \"fe80::1\"\n"),
       "subnet_prefix", "sets bits in the lower 64 bits"},
      {"prefix_on_eth", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    subnet_prefix: \"fe80::\"\n"),
       "subnet_prefix", "'subnet_prefix' applies to infiniband fabrics"},
      {"name_is_list", replace(kIb, "name: h1", "name: [h1]"), "[h1]", "HCA name must be a single value"},
      {"name_is_null", replace(kIb, "name: h1", "name: ~"), "name: ~", "HCA name has no value"},
      {"island", ib_with_island(), "{name: sw1",
       "fabric 'ib' is split: switch 'sw1' and HCA 'h2' cannot reach switch 'sw0' and HCAs 'h0', 'h1'; "
       "their QPs would fail with RETRY_EXC_ERR",
       "add a link joining them, e.g. {a: sw1/2, b: sw0/3}"},
      {"lone_switch", replace(kIb, "      - {name: sw0, ports: 4}\n", "      - {name: sw0, ports: 4}\n      - {name: spare, ports: 2}\n"),
       "{name: spare", "switch 'spare' cannot reach switch 'sw0' and HCAs 'h0', 'h1'", "{a: spare/1, b: sw0/3}"},
      {"three_islands", replace(ib_with_island(), "      - {name: sw1, ports: 2}\n", "      - {name: sw1, ports: 2}\n      - {name: sw2, ports: 1}\n"),
       "{name: sw2", "switch 'sw2' cannot reach switch 'sw0' and HCAs 'h0', 'h1' (it falls apart into 3 islands)"},
      {"full_island_no_free_port", replace(replace(ib_with_island(), "{name: sw1, ports: 2}", "{name: sw1, ports: 1}"),
                                           "ports: 4", "ports: 2"),
       "{name: sw1", "cannot reach", "e.g. {a: sw1/<port>, b: sw0/<port>}"},
      {"rate_above_ib", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, rate: 200Gbps}"),
       "rate: 200Gbps", "rate 200Gbps of link 2 of fabric 'ib' (h1 - sw0/2) is above the 100 Gb/s that 4X EDR carries",
       "use at most rate: 100Gbps (rate only slows a link down), or a faster speed or a wider width"},
      {"rate_above_1x_fdr", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, width: 1x, speed: FDR, rate: 14G}"),
       "rate: 14G", "is above the 13.64 Gb/s that 1X FDR carries", "use at most rate: 13636Mbps"},
      {"vl_buffer_below_mtu", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, vl_buffer: 4KiB}"),
       "vl_buffer: 4KiB", "vl_buffer 4KiB of link 2 of fabric 'ib' cannot hold one packet of its MTU 4096 (4224 bytes with headers)",
       "use at least vl_buffer: 4224B, or a smaller mtu"},
      {"switch_vl_buffer_below_mtu", replace(kIb, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, vl_buffer: 2KiB}"),
       "vl_buffer: 2KiB", "vl_buffer of switch 'sw0' (2048 bytes) cannot hold one packet of the MTU 4096 of link 1",
       "or give the link its own vl_buffer"},
      {"vl_buffer_without_unit", replace(kIb, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, vl_buffer: 32768}"),
       "vl_buffer: 32768", "vl_buffer '32768' of switch 'sw0' is not a buffer size", "e.g. 32KiB"},
      {"vl_buffer_huge", replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, vl_buffer: 1GiB}"),
       "vl_buffer: 1GiB", "is not a buffer size", "at most 16MiB"},
      {"l2_loop", std::string("fabrics:\n  - name: eth\n    link_layer: ethernet\n") + R"(    switches:
      - {name: sw0, ports: 4}
      - {name: sw1, ports: 4}
      - {name: sw2, ports: 4}
    hcas:
      - {name: h0, ip: 10.0.0.1}
      - {name: h1, ip: 10.0.0.2}
    links:
      - {a: h0, b: sw0/1, speed: 100G}
      - {a: h1, b: sw1/1, speed: 100G}
      - {a: sw0/2, b: sw1/2, speed: 100G}
      - {a: sw1/3, b: sw2/1, speed: 100G}
      - {a: sw2/2, b: sw0/3, speed: 100G}
)",
       "{a: sw2/2, b: sw0/3, speed: 100G}", "link 5 (sw2/2 - sw0/3) closes a loop among the Ethernet switches",
       "must be a tree"},
      {"l2_parallel_links", std::string("fabrics:\n  - name: eth\n    link_layer: ethernet\n") +
                                R"(    switches: [{name: sw0, ports: 4}, {name: sw1, ports: 4}]
    hcas: [{name: h0, ip: 10.0.0.1}]
    links:
      - {a: h0, b: sw0/1, speed: 10G}
      - {a: sw0/2, b: sw1/1, speed: 10G}
      - {a: sw1/2, b: sw0/3, speed: 10G}
)",
       "{a: sw1/2, b: sw0/3, speed: 10G}", "closes a loop", "remove this link"},
      {"vlan_reserved", replace(kEth, "{name: h0, ip: 10.0.0.1}", "{name: h0, ip: 10.0.0.1, vlan: 4095}"),
       "vlan: 4095", "vlan 4095 of HCA 'h0' is not a VLAN ID", "use 1 to 4094"},
      {"vlan_on_ib", replace(kIb, "      - name: h0\n", "      - {name: h0, vlan: 10}\n"), "vlan: 10",
       "'vlan' applies to ethernet fabrics", "P_Keys"},
      {"pkeys_on_ethernet", replace(kEth, "{name: h0, ip: 10.0.0.1}", "{name: h0, ip: 10.0.0.1, pkeys: [0xffff]}"),
       "pkeys: [0xffff]", "'pkeys' applies to infiniband fabrics", "0xffff only"},
      {"pkey_in_decimal", replace(kIb, "      - name: h0\n", "      - {name: h0, pkeys: [32769]}\n"), "pkeys:",
       "P_Key '32769' of HCA 'h0' is not a P_Key", "in hex"},
      {"pkey_invalid", replace(kIb, "      - name: h0\n", "      - {name: h0, pkeys: [0xffff, 0x8000]}\n"),
       "pkeys:", "P_Key 0x8000 of HCA 'h0' is invalid", "0x0000 and 0x8000"},
      {"pkey_partition_twice",
       replace(kIb, "      - name: h0\n", "      - {name: h0, pkeys: [0xffff, 0x8001, 0x0001]}\n"), "pkeys:",
       "P_Key 0x0001 of HCA 'h0' repeats partition 0x0001", "keep one"},
      {"pkeys_empty", replace(kIb, "      - name: h0\n", "      - {name: h0, pkeys: []}\n"), "pkeys:",
       "pkeys of HCA 'h0' lists 0 P_Keys", "1 to 16"},
      {"pkeys_beyond_the_table", replace(kIb, "      - name: h0\n", "      - {name: h0, pkeys: [0x8001, 0x8002, 0x8003, 0x8004, 0x8005, 0x8006, 0x8007, 0x8008, 0x8009, 0x800a, 0x800b, 0x800c, 0x800d, 0x800e, 0x800f, 0x8010, 0x8011]}\n"),
       "pkeys:", "lists 17 P_Keys", "1 to 16"},
      {"ageing_too_short", replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, ageing: 10ms}"),
       "ageing: 10ms", "ageing 10ms of switch 'sw0' is not an FDB ageing time", "from 1s"},
      {"fdb_port_out_of_range",
       replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, fdb: [{mac: 02:00:00:00:00:09, port: 5}]}"),
       "fdb: [", "port 5 of an fdb entry of switch 'sw0' is not one of its ports", "from 1 to 4"},
      {"fdb_multicast_mac",
       replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, fdb: [{mac: 01:00:5e:00:00:01, port: 1}]}"),
       "fdb: [", "is not a station address", "unicast MAC"},
      {"fdb_twice",
       replace(kEth, "{name: sw0, ports: 4}",
               "{name: sw0, ports: 4, fdb: [{mac: 02:00:00:00:00:09, port: 1}, {mac: 02:00:00:00:00:09, port: 2}]}"),
       "fdb: [", "in switch 'sw0''s fdb twice for VLAN 1", "one port"},
      {"buffer_alpha_not_power_of_two",
       replace(replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 1MiB}"), "    switches:\n",
               "    qos: {buffer_alpha: 3}\n    switches:\n"),
       "qos: {buffer_alpha", "buffer_alpha '3' is not a dynamic threshold", "a power of two from 1/128 to 64"},
      {"buffer_alpha_too_small",
       replace(replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 1MiB}"), "    switches:\n",
               "    qos: {buffer_alpha: 1/256}\n    switches:\n"),
       "qos: {buffer_alpha", "is not a dynamic threshold"},
      {"reserved_parts_exceed_buffer",
       replace(replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 64KiB}"), "    switches:\n",
               "    qos: {reserved: 8KiB}\n    switches:\n"),
       "buffer: 64KiB", "and 8 reserved parts of 8192 bytes per port needs", "make the buffer larger"},
      {"buffer_alpha_without_buffer", replace(kEth, "    switches:\n", "    qos: {buffer_alpha: 1/2}\n    switches:\n"),
       "{name: sw0", "switch 'sw0' has no buffer size, which qos buffer_alpha needs", "buffer: 16MiB"},
      {"ecn_wred_typo", replace(kEth, "    switches:\n", "    qos: {ecn: {wred: yes}}\n    switches:\n"), "qos: {ecn",
       "wred 'yes' is neither on nor off", "wred: on drops"},
      {"hca_dcqcn_on_ib", replace(kIb, "      - name: h0\n", "      - {name: h0, dcqcn: off}\n"), "dcqcn: off",
       "'dcqcn' applies to ethernet fabrics"},
      {"hca_dcqcn_bad_rate",
       replace(kEth, "{name: h0, ip: 10.0.0.1}", "{name: h0, ip: 10.0.0.1, dcqcn: {rpg_ai_rate: 5}}"),
       "rpg_ai_rate: 5", "rpg_ai_rate '5' is not a rate", "1Mbps to 100Gbps"},
      {"fdb_on_ib", replace(kIb, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, fdb: []}"), "fdb: []",
       "'fdb' applies to ethernet fabrics"},
      {"ecmp_on_non_l3_port",
       replace(kRouted, "routed_ports: [4]}}\n      - {name: leaf1",
               "routed_ports: [4], routes: [{dst: 10.0.1.0/24, via: [4, 2]}]}}\n      - {name: leaf1"),
       "{name: leaf0", "names port 2, which is not an L3 (routed) port of 'leaf0'", "add the port to routed_ports"},
      {"route_host_bits",
       replace(kRouted, "routed_ports: [4]}}\n      - {name: leaf1",
               "routed_ports: [4], routes: [{dst: 10.0.1.1/24, via: [4]}]}}\n      - {name: leaf1"),
       "{name: leaf0", "dst 10.0.1.1/24 of route 1 of switch 'leaf0' router has host bits set", "10.0.1.0/24"},
      {"static_route_to_own_subnet",
       replace(kRouted, "routed_ports: [4]}}\n      - {name: leaf1",
               "routed_ports: [4], routes: [{dst: 10.0.0.0/24, via: [4]}]}}\n      - {name: leaf1"),
       "{name: leaf0", "10.0.0.0/24 of route 1 of switch 'leaf0' router is the gateway's own subnet", "connected route"},
      {"routed_port_faces_host", replace(kRouted, "routed_ports: [4]}}\n      - {name: leaf1", "routed_ports: [1, 4]}}\n      - {name: leaf1"),
       "{a: h0, b: leaf0/1", "link 1 joins routed port leaf0/1 to h0, which is a host", "attach hosts to bridged ports"},
      {"routed_port_faces_bridged_port", replace(kRouted, "gateway: 10.0.1.1/24, routed_ports: [4]", "gateway: 10.0.1.1/24, routed_ports: [3]"),
       "{a: leaf0/4, b: leaf1/4", "link 3 joins routed port leaf0/4 to leaf1/4, which bridges", "routed_ports too"},
      {"host_outside_gateway_subnet", replace(kRouted, "{name: h1, ip: 10.0.1.10}", "{name: h1, ip: 10.0.2.10}"),
       "{name: h1", "ip 10.0.2.10 of HCA 'h1' is outside leaf1's gateway subnet 10.0.1.0/24", "an address in 10.0.1.0/24"},
      {"host_prefix_differs", replace(kRouted, "{name: h0, ip: 10.0.0.10}", "{name: h0, ip: 10.0.0.10/16}"),
       "{name: h0", "HCA 'h0' has prefix /16, its gateway's subnet is 10.0.0.0/24", "write /24"},
      {"host_prefix_bad", replace(kRouted, "{name: h0, ip: 10.0.0.10}", "{name: h0, ip: 10.0.0.10/33}"),
       "{name: h0", "has a bad prefix length", "/1 to /30"},
      {"gateway_subnets_overlap", replace(kRouted, "gateway: 10.0.1.1/24", "gateway: 10.0.0.129/25"),
       "{name: leaf1", "the gateway subnet 10.0.0.128/25 of 'leaf1' overlaps 10.0.0.0/24 of 'leaf0'"},
      {"gateway_is_network_address", replace(kRouted, "gateway: 10.0.0.1/24", "gateway: 10.0.0.0/24"),
       "{name: leaf0", "gateway 10.0.0.0/24 of switch 'leaf0' router is its subnet's network or broadcast address",
       "e.g. 10.0.0.1"},
      {"two_gateways_one_domain",
       replace(replace(kRouted, "routed_ports: [4]}}\n      - {name: leaf1", "}}\n      - {name: leaf1"),
               "gateway: 10.0.1.1/24, routed_ports: [4]", "gateway: 10.0.1.1/24"),
       "{name: leaf1", "switches 'leaf0' and 'leaf1' both have a gateway in one bridged domain"},
      {"router_without_interfaces", replace(kRouted, "router: {gateway: 10.0.0.1/24, routed_ports: [4]}", "router: {}"),
       "{name: leaf0", "has neither a gateway nor routed ports"},
      {"too_many_routed_ports", many_routed_ports(), "{name: leaf1",
       "switch 'leaf1' router has 65 routed ports; an ECMP group holds at most 64", "at most 64 ports"},
      {"router_on_ib", replace(kIb, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, router: {routed_ports: [3]}}"),
       "router:", "'router' applies to ethernet fabrics"},
      {"ets_sum_not_100", replace(kEth, "    switches:\n", "    qos: {tc_bw: [20, 20, 20, 20, 10, 0, 0, 0]}\n    switches:\n"),
       "qos: {tc_bw", "the ets classes' tc_bw sum to 90", "make them sum to 100"},
      {"ets_strict_with_share",
       replace(kEth, "    switches:\n", "    qos: {tsa: [ets, ets, ets, ets, ets, ets, strict, ets]}\n    switches:\n"),
       "qos: {tsa", "traffic class 6 is strict but has tc_bw 12", "give it tc_bw 0"},
      {"ets_tsa_typo",
       replace(kEth, "    switches:\n", "    qos: {tsa: [ets, ets, ets, ets, ets, ets, strickt, ets]}\n    switches:\n"),
       "qos: {tsa", "tsa 'strickt' of traffic class 6 is not a selection algorithm", "did you mean 'strict'?"},
      {"ets_prio_tc_short", replace(kEth, "    switches:\n", "    qos: {prio_tc: [0, 1, 2]}\n    switches:\n"),
       "qos: {prio_tc", "prio_tc has 3 entries", "give 8"},
      {"ets_prio_tc_range",
       replace(kEth, "    switches:\n", "    qos: {prio_tc: [0, 1, 2, 3, 4, 5, 6, 8]}\n    switches:\n"),
       "qos: {prio_tc", "priority 7 maps to traffic class '8'", "0 to 7"},
      {"vl_buffer_on_eth", replace(kEth, "{a: h1, b: sw0/2, speed: 100G}", "{a: h1, b: sw0/2, speed: 100G, vl_buffer: 32KiB}"),
       "vl_buffer: 32KiB", "'vl_buffer' applies to infiniband fabrics"},
      {"routing_typo", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    sm: {routing: updown}\n"),
       "routing: updown", "unknown routing 'updown'", "use minhop or updn"},
      {"roots_without_updn", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    sm: {roots: [sw0]}\n"),
       "roots: [sw0]", "roots are for routing: updn", "add routing: updn"},
      {"root_not_a_switch", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    sm: {routing: updn, roots: [sw1]}\n"),
       "roots: [sw1]", "root 'sw1' is not a switch of fabric 'ib'", "did you mean 'sw0'?"},
      {"sm_on_eth", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    sm: {routing: updn}\n"),
       "sm:", "'sm' applies to infiniband fabrics"},
      {"sm_unknown_key", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    sm: {routing: updn, sweep: 5s}\n"),
       "sweep", "unknown key 'sweep' in fabric 'ib' sm"},
      {"qos_vls", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    qos: {data_vls: 3}\n"),
       "data_vls: 3", "data_vls '3' is not an operational VL count", "use 1, 2, 4 or 8"},
      {"qos_sl2vl_short", replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    qos: {sl2vl: [0, 1]}\n"),
       "sl2vl: [0, 1]", "sl2vl has 2 entries", "one VL for each of the 16 SLs"},
      {"qos_sl_to_missing_vl", replace(kIb, "    link_layer: infiniband\n",
                                       "    link_layer: infiniband\n    qos: {data_vls: 2, sl2vl: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 2]}\n"),
       "data_vls: 2", "SL15 maps to VL '2', which is not one of the 2 data VLs", "use a VL from 0 to 1"},
      {"qos_weight", replace(kIb, "    link_layer: infiniband\n",
                             "    link_layer: infiniband\n    qos: {vlarb_low: [{vl: 0, weight: 300}]}\n"),
       "weight: 300", "weight '300' is out of range", "0 to 255"},
      {"qos_arb_missing_vl", replace(kIb, "    link_layer: infiniband\n",
                                     "    link_layer: infiniband\n    qos: {data_vls: 1, vlarb_high: [{vl: 1, weight: 8}]}\n"),
       "vl: 1", "vlarb_high names VL '1', which is not one of the 1 data VLs"},
      {"ib_qos_on_eth", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {data_vls: 2}\n"),
       "qos:", "unknown key 'data_vls' in fabric 'eth' qos"},
      {"dscp_out_of_range", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {dscp2prio: {26: 3, 64: 3}}\n"),
       "qos:", "DSCP '64' is out of range", "0 to 63"},
      {"prio_out_of_range", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {dscp2prio: {26: 8}}\n"),
       "qos:", "priority '8' is not a priority", "0 to 7"},
      {"pfc_priority_8", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {pfc: [3, 8]}\n"),
       "qos:", "pfc priority '8' is not a priority"},
      {"pfc_not_list", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {pfc: yes}\n"),
       "qos:", "pfc 'yes' is not a list of priorities", "pfc: off"},
      {"trust_typo", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {trust: dcsp}\n"),
       "qos:", "trust 'dcsp' is not a trust mode", "did you mean 'dscp'?"},
      {"xon_above_xoff", replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {xoff: 8KiB, xon: 16KiB}\n"),
       "qos:", "xon (16384 bytes) is above xoff (8192 bytes)"},
      {"headroom_above_buffer", replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 4KiB}"),
       "buffer: 4KiB", "the PFC headroom of its 2 linked ports (1 lossless priority each) needs",
       "make the buffer larger"},
      {"xoff_above_buffer", replace(replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 64KiB}"),
                                    "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {xoff: 128KiB, headroom: 1KiB}\n"),
       "buffer: 64KiB", "less than the qos xoff threshold of 131072 bytes"},
      {"buffer_on_ib", replace(kIb, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 1MiB}"),
       "buffer: 1MiB", "'buffer' applies to ethernet fabrics", "use vl_buffer"},
      {"rate_above_eth", replace(kEth, "{a: h1, b: sw0/2, speed: 100G}", "{a: h1, b: sw0/2, speed: 25G, rate: 40Gbps}"),
       "rate: 40Gbps", "rate 40Gbps of link 2 of fabric 'eth' (h1 - sw0/2) is above the 25 Gb/s that 25G Ethernet carries",
       "use at most rate: 25Gbps"},
  };
}

TEST(Config, EthernetQosDefaultsToWhatRoceGuidesSetUp) {
  const Config c = load_config_string(kEth, "eth.yaml");
  const EthQos& q = c.fabrics[0].eth_qos;
  EXPECT_TRUE(q.trust_dscp);
  EXPECT_EQ(q.pfc, 1u << 3) << "RoCE on lossless priority 3";
  EXPECT_EQ(q.roce_tclass, 106) << "DSCP 26 with ECT(0)";
  EXPECT_EQ(q.dscp2prio[26], 3);
  EXPECT_EQ(q.dscp2prio[48], 6) << "CNPs (DSCP 48) on priority 6";
  EXPECT_EQ(c.fabrics[0].switches[0].buffer_bytes, 0u);
}

TEST(Config, EthernetQosIsRead) {
  const Config c = load_config_string(
      replace(replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 16MiB}"), "    link_layer: ethernet\n",
              "    link_layer: ethernet\n    qos: {trust: pcp, pfc: [3, 4], dscp2prio: {10: 4}, roce_tclass: 0,\n"
              "          pause_quanta: 1000, pfc_response: 500ns, pfc_watchdog: 100ms, xoff: 32KiB, xon: 16KiB,\n"
              "          headroom: 20KiB}\n"),
      "eth.yaml");
  const EthQos& q = c.fabrics[0].eth_qos;
  EXPECT_FALSE(q.trust_dscp);
  EXPECT_EQ(q.pfc, 0x18);
  EXPECT_EQ(q.dscp2prio[10], 4);
  EXPECT_EQ(q.dscp2prio[11], 1) << "the rest of the map keeps its default";
  EXPECT_EQ(q.roce_tclass, 0);
  EXPECT_EQ(q.pause_quanta, 1000);
  EXPECT_EQ(q.pfc_response_ns, 500u);
  EXPECT_EQ(q.pfc_watchdog_ns, 100'000'000u);
  EXPECT_EQ(q.xoff_bytes, 32768u);
  EXPECT_EQ(q.xon_bytes, 16384u);
  EXPECT_EQ(q.headroom_bytes, 20480u);
  EXPECT_EQ(c.fabrics[0].switches[0].buffer_bytes, 16u << 20);
  EXPECT_EQ(load_config_string(replace(kEth, "    link_layer: ethernet\n", "    link_layer: ethernet\n    qos: {pfc: off}\n"),
                               "eth.yaml").fabrics[0].eth_qos.pfc, 0)
      << "pfc: off is lossy Ethernet";
}

TEST(Config, JoinedIslandsAndRatesUpToTheLineRateAreFine) {
  Config c = load_config_string(ib_with_island() + "      - {a: sw1/2, b: sw0/3, speed: EDR}\n", "joined.yaml");
  EXPECT_EQ(c.fabrics[0].links.size(), 4u);
  c = load_config_string(replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, rate: 100Gbps}"),
                         "max.yaml");
  EXPECT_EQ(c.fabrics[0].links[1].rate_bps, 100'000'000'000ULL);
  // The suggested maximum for a rate that is not whole Gb/s is itself accepted.
  c = load_config_string(
      replace(kIb, "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, width: 1x, speed: FDR, rate: 13636Mbps}"),
      "fdr.yaml");
  EXPECT_EQ(c.fabrics[0].links[1].rate_bps, 13'636'000'000ULL);
}

TEST(Config, VlBuffersPerSwitchAndPerLink) {
  Config c = load_config_string(
      replace(replace(kIb, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, vl_buffer: 64KiB}"),
              "{a: h1, b: sw0/2, speed: EDR}", "{a: h1, b: sw0/2, speed: EDR, mtu: 1024, vl_buffer: 1152B}"),
      "buffers.yaml");
  EXPECT_EQ(c.fabrics[0].switches[0].vl_buffer_bytes, 65536u);
  EXPECT_EQ(c.fabrics[0].links[0].vl_buffer_bytes, 0u) << "the switch's, or derived";
  EXPECT_EQ(c.fabrics[0].links[1].vl_buffer_bytes, 1152u) << "exactly one 1024-MTU packet";
  c = load_config_string(kIb, "plain.yaml");
  EXPECT_EQ(c.fabrics[0].switches[0].vl_buffer_bytes, 0u);
}

TEST(Config, QosSectionProgramsEveryPort) {
  const Config c = load_config_string(
      replace(kIb, "    link_layer: infiniband\n",
              "    link_layer: infiniband\n    qos:\n      data_vls: 2\n"
              "      sl2vl: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 15, 1]\n"
              "      vlarb_high: [{vl: 1, weight: 16}]\n      vlarb_low: [{vl: 0, weight: 255}]\n"
              "      high_limit: 4\n"),
      "qos.yaml");
  const PortQos q = sm::programmed_qos(c.fabrics[0].qos);
  EXPECT_EQ(q.data_vls, 2u);
  EXPECT_EQ(q.sl2vl[1], 1u);
  EXPECT_EQ(q.sl2vl[14], kVl15) << "SL14 may not be used";
  ASSERT_EQ(q.vlarb_high.size, 1u);
  EXPECT_EQ(q.vlarb_high.entries[0], (VlArbEntry{1, 16}));
  ASSERT_EQ(q.vlarb_low.size, 1u);
  EXPECT_EQ(q.vlarb_low.entries[0], (VlArbEntry{0, 255}));
  EXPECT_EQ(q.vlarb_high_limit, 4u);
  // Left out: the power-on record for that many VLs.
  const Config d = load_config_string(
      replace(kIb, "    link_layer: infiniband\n", "    link_layer: infiniband\n    qos: {data_vls: 4}\n"), "vls.yaml");
  EXPECT_EQ(sm::programmed_qos(d.fabrics[0].qos), default_port_qos(4));
  EXPECT_EQ(sm::programmed_qos(load_config_string(kIb, "plain.yaml").fabrics[0].qos), default_port_qos(8));
}

TEST(Config, MetricsListenDefaultsToLoopbackAndCanBeOff) {
  EXPECT_EQ(load_config(kDefault).daemon.metrics->text(), "127.0.0.1:9469");
  const auto with = [](const std::string& v) {
    return load_config_string("daemon:\n  metrics_listen: \"" + v + "\"\n" + std::string(kIb), "t").daemon.metrics;
  };
  EXPECT_FALSE(with("off").has_value());
  EXPECT_EQ(with("0.0.0.0:0")->port, 0);
  EXPECT_EQ(with("[::1]:9100")->address, "::1");
  EXPECT_EQ(with("[::1]:9100")->text(), "[::1]:9100");
}

TEST(Config, NetdevsAreNamedAfterTheHcaUnlessConfigured) {
  const Config c = load_config(kDefault);
  EXPECT_TRUE(c.daemon.netdevs);
  EXPECT_EQ(c.fabrics[0].hcas[0].netdev, "vib0");    // IB with an ip: IPoIB-style
  EXPECT_EQ(c.fabrics[1].hcas[1].netdev, "vroce1");
  const Config ib = load_config_string(kIb, "t");
  EXPECT_EQ(ib.fabrics[0].hcas[0].netdev, "");       // IB without an ip: none
  const Config named = load_config_string(replace(kEth, "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, netdev: roce.1}"), "t");
  EXPECT_EQ(named.fabrics[0].hcas[0].netdev, "h0");
  EXPECT_EQ(named.fabrics[0].hcas[1].netdev, "roce.1");
  const Config off = load_config_string("daemon:\n  netdevs: off\n" + std::string(kEth), "t");
  EXPECT_FALSE(off.daemon.netdevs);
  EXPECT_EQ(off.fabrics[0].hcas[0].netdev, "");
}

TEST(Config, EtsKeysAreRead) {
  const Config c = load_config_string(
      replace(kEth, "    switches:\n",
              "    qos:\n      prio_tc: [0, 0, 0, 1, 0, 0, 2, 0]\n      tsa: [ets, ets, strict, ets, ets, ets, ets, "
              "ets]\n      tc_bw: [40, 60, 0, 0, 0, 0, 0, 0]\n    switches:\n"),
      "ets.yaml");
  const EthQos& q = c.fabrics[0].eth_qos;
  EXPECT_EQ(q.prio_tc[3], 1);
  EXPECT_EQ(q.prio_tc[6], 2);
  EXPECT_TRUE(q.tc_strict[2]);
  EXPECT_FALSE(q.tc_strict[1]);
  EXPECT_EQ(q.tc_bw[1], 60);
  EXPECT_FALSE(q.ecn_wred);
  EXPECT_TRUE(load_config_string(replace(kEth, "    switches:\n", "    qos: {ecn: {wred: on}}\n    switches:\n"), "w.yaml")
                  .fabrics[0]
                  .eth_qos.ecn_wred);
  const EthQos d = load_config_string(kEth, "d.yaml").fabrics[0].eth_qos;
  EXPECT_EQ(d.prio_tc[0], 1);  // 802.1Q: best effort above background
  EXPECT_EQ(d.tc_bw[0] + d.tc_bw[1] + d.tc_bw[2] + d.tc_bw[3] + d.tc_bw[4] + d.tc_bw[5] + d.tc_bw[6] + d.tc_bw[7], 100);
}

TEST(Config, AWatchdogShorterThanTheXoffRefreshIsWarnedAbout) {
  // 65535 quanta at 100G: a 335.5 us pause, refreshed every 167.8 us.
  auto warning = [](const std::string& watchdog) {
    const Config c = load_config_string(
        replace(kEth, "    switches:\n", "    qos: {pfc_watchdog: " + watchdog + "}\n    switches:\n"), "w.yaml");
    return pfc_watchdog_warning(c.fabrics[0]);
  };
  const std::string w = warning("100us");
  EXPECT_NE(w.find("fabric eth: pfc_watchdog 100us is not longer than the XOFF refresh interval"), std::string::npos)
      << w;
  EXPECT_EQ(warning("1ms"), "");
  EXPECT_EQ(pfc_watchdog_warning(load_config_string(kEth, "d.yaml").fabrics[0]), "") << "no watchdog";
}

TEST(Config, AnHcaOverridesTheFabricsDcqcn) {
  const Config c = load_config_string(
      replace(replace(kEth, "{name: h0, ip: 10.0.0.1}", "{name: h0, ip: 10.0.0.1, dcqcn: off}"),
              "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, dcqcn: {rpg_ai_rate: 20Mbps}}"),
      "d.yaml");
  const Hca& h0 = c.fabrics[0].hcas[0];
  const Hca& h1 = c.fabrics[0].hcas[1];
  EXPECT_EQ(h0.dcqcn.enabled, std::optional<bool>(false));
  EXPECT_FALSE(h0.dcqcn.ai_rate_mbps);
  EXPECT_EQ(h1.dcqcn.enabled, std::optional<bool>(true));
  EXPECT_EQ(h1.dcqcn.ai_rate_mbps, std::optional<uint32_t>(20));
  EXPECT_FALSE(h1.dcqcn.cnp_interval_ns) << "unset: the fabric's";
}

TEST(Config, ReservedIsReadPerPriorityGroup) {
  const std::string y = replace(replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 1MiB}"),
                                "    switches:\n", "    qos: {reserved: 4KiB}\n    switches:\n");
  EXPECT_EQ(load_config_string(y, "r.yaml").fabrics[0].eth_qos.reserved_bytes, 4096u);
  EXPECT_EQ(load_config_string(kEth, "r.yaml").fabrics[0].eth_qos.reserved_bytes, 0u);
}

TEST(Config, BufferAlphaIsAPowerOfTwo) {
  const std::string base = replace(kEth, "{name: sw0, ports: 4}", "{name: sw0, ports: 4, buffer: 1MiB}");
  EXPECT_EQ(load_config_string(base, "a.yaml").fabrics[0].eth_qos.buffer_alpha_log2, EthQos::kStaticBuffer);
  for (const auto& [text, log2] : std::vector<std::pair<std::string, int>>{
           {"1/2", -1}, {"0.125", -3}, {"1", 0}, {"8", 3}, {"1/128", -7}, {"64", 6}}) {
    const Config c = load_config_string(replace(base, "    switches:\n", "    qos: {buffer_alpha: " + text + "}\n    switches:\n"),
                                        "a.yaml");
    EXPECT_EQ(c.fabrics[0].eth_qos.buffer_alpha_log2, log2) << text;
  }
}

// The port's P_Key table, as an SM's partition configuration writes it.
TEST(Config, IbPkeysAreRead) {
  const Config c =
      load_config_string(replace(kIb, "      - name: h0\n", "      - {name: h0, pkeys: [0xffff, 0x8001, 0x0002]}\n"),
                         "pk.yaml");
  EXPECT_EQ(c.fabrics[0].hcas[0].pkeys, (std::vector<uint16_t>{0xFFFF, 0x8001, 0x0002}));
  EXPECT_EQ(c.fabrics[0].hcas[1].pkeys, (std::vector<uint16_t>{0xFFFF})) << "the default partition";
}

TEST(Config, EthernetL2KeysAreRead) {
  const std::string y =
      replace(replace(kEth, "{name: sw0, ports: 4}",
                      "{name: sw0, ports: 4, ageing: 30s, fdb: [{mac: 02:00:00:00:00:09, port: 3, vlan: 20}]}"),
              "{name: h1, ip: 10.0.0.2}", "{name: h1, ip: 10.0.0.2, vlan: 20}");
  const Config c = load_config_string(y, "l2.yaml");
  const Switch& s = c.fabrics[0].switches[0];
  EXPECT_EQ(s.ageing_ns, 30'000'000'000ULL);
  ASSERT_EQ(s.fdb.size(), 1u);
  EXPECT_EQ(s.fdb[0].port, 3u);
  EXPECT_EQ(s.fdb[0].vlan, 20);
  EXPECT_EQ(s.fdb[0].mac, (addr::Mac{2, 0, 0, 0, 0, 9}));
  EXPECT_EQ(c.fabrics[0].hcas[0].vlan, 0);
  EXPECT_FALSE(c.fabrics[0].hcas[0].dcqcn.enabled);
  EXPECT_EQ(c.fabrics[0].hcas[1].vlan, 20);
  EXPECT_EQ(load_config_string(kEth, "d.yaml").fabrics[0].switches[0].ageing_ns, 300'000'000'000ULL);
}

TEST(Config, AdminGroupIsResolved) {
  Config c = load_config(kDefault);
  EXPECT_EQ(c.daemon.admin_group, "");
  EXPECT_FALSE(c.daemon.admin_gid);
  // Debian always has root (gid 0) and adm (gid 4).
  c = load_config_string("daemon:\n  admin_group: adm\n" + std::string(kIb), "adm.yaml");
  EXPECT_EQ(c.daemon.admin_group, "adm");
  EXPECT_EQ(c.daemon.admin_gid, std::optional<gid_t>(4));
}

class BadConfig : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConfig, NamesFileLineAndProblem) {
  const BadCase& c = GetParam();
  const std::string file = std::string("configs/") + c.name + ".yaml";
  try {
    load_config_string(c.yaml, file);
    FAIL() << "accepted:\n" << c.yaml;
  } catch (const ConfigError& e) {
    std::string what = e.what();
    EXPECT_EQ(e.file(), file);
    if (!c.at.empty()) {
      int line = test::line_of(c.yaml, c.at);
      ASSERT_GT(line, 0) << "test bug: '" << c.at << "' not in the config";
      EXPECT_EQ(e.line(), line) << what << "\n" << c.yaml;
      EXPECT_EQ(what.rfind(fmt::format("{}:{}:", file, line), 0), 0u) << what;
    } else {
      EXPECT_GT(e.line(), 0) << what;
    }
    EXPECT_NE(what.find(c.problem), std::string::npos) << what;
    if (!c.fix.empty()) {
      auto semi = what.find("; ");
      ASSERT_NE(semi, std::string::npos) << what;
      EXPECT_NE(what.find(c.fix, semi), std::string::npos) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, BadConfig, ::testing::ValuesIn(bad_cases()),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(BadConfigFile, ErrorsNameThePathGiven) {
  const std::string path = std::string(VF_TEST_DATA_DIR) + "/bad_unknown_key.yaml";
  try {
    load_config(path);
    FAIL();
  } catch (const ConfigError& e) {
    std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ":9:9: unknown key 'sped'", 0), 0u) << what;
    EXPECT_NE(what.find("did you mean 'speed'?"), std::string::npos) << what;
  }
}

TEST(BadConfigFile, MissingDirectoryAndHugeFiles) {
  test::TempDir d;
  try {
    load_config(d.str() + "/nope.yaml");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open the config: No such file or directory"), std::string::npos);
  }
  try {
    load_config(d.str());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos);
  }
  test::write_file(d.path() / "big.yaml", "# " + std::string(2 << 20, 'x') + "\n");
  try {
    load_config((d.path() / "big.yaml").string());
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 1 MiB"), std::string::npos);
  }
}

TEST(BadConfigFile, HostileYamlDoesNotCrash) {
  // Deep nesting, aliases, binary junk: each is an error, never a crash.
  std::string deep = "fabrics: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  EXPECT_THROW(load_config_string(deep, "deep.yaml"), ConfigError);
  EXPECT_THROW(load_config_string("a: &x [*x]\n", "alias.yaml"), ConfigError);
  EXPECT_THROW(load_config_string(std::string("\0\xff\xfe{", 4), "junk.yaml"), ConfigError);
  EXPECT_THROW(load_config_string("fabrics:\n  - !!binary aGVsbG8=\n", "tag.yaml"), ConfigError);
}

}  // namespace
}  // namespace vf::config
