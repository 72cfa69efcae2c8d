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

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

constexpr unsigned kSenders = 4;

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

// The same incast over RoCEv2 on one switch: `qos` is the fabric's qos: mapping.
// Emulated time runs at half speed (1 Gb/s of wall-clock traffic per link):
// RoCE moves 1 KiB packets, four times IB's packet rate for the same bytes,
// and under ASan on two cores the lcore could not carry 2 Gb/s of them --
// the link, not the CPU, must be the bottleneck.

std::string roce_incast_config(const std::string& qos, const std::string& receiver_rate = "2Gbps") {
  std::string y = R"(daemon:
  runtime_dir: /run/vfabric
  time_dilation: 2
fabrics:
  - name: roce
    link_layer: ethernet
    qos: )" + qos + R"(
    switches:
      - {name: sw, ports: 6}
    hcas:
)";
  for (unsigned i = 0; i <= kSenders; ++i)
    y += "      - {name: vroce" + std::to_string(i) + ", ip: 198.18.0." + std::to_string(i + 1) + "}\n";
  y += "    links:\n";
  for (unsigned i = 0; i <= kSenders; ++i)
    y += "      - {a: vroce" + std::to_string(i) + ", b: sw/" + std::to_string(i + 1) +
         ", speed: 10G, rate: " + (i == kSenders ? receiver_rate : "2Gbps") + ", delay: 500ns}\n";
  return y;
}

// A priority-labelled PFC metric of one port.
double prio_metric(const std::map<std::string, double>& m, const std::string& family, const std::string& port,
                   unsigned prio = 3) {
  const auto it = m.find(family + "{fabric=\"roce\",port=\"" + port + "\",priority=\"" + std::to_string(prio) + "\"}");
  EXPECT_NE(it, m.end()) << family << " of " << port << " priority " << prio;
  return it == m.end() ? 0 : it->second;
}

// `fabricctl metrics`, as family{labels} -> value.
std::map<std::string, double> metrics(const Fabricd& d) {
  const RunResult r = d.ctl({"metrics"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  std::map<std::string, double> m;
  static const std::regex line(R"(^(\w+(?:\{[^}]*\})?) (\S+)$)");
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    std::smatch s;
    if (std::regex_match(l, s, line)) m[s[1]] = std::stod(s[2]);
  }
  return m;
}

double port_metric(const std::map<std::string, double>& m, const std::string& family, const std::string& port,
                   const std::string& fabric = "ib") {
  const auto it = m.find(family + "{fabric=\"" + fabric + "\",port=\"" + port + "\"}");
  EXPECT_NE(it, m.end()) << family << " of " << port;
  return it == m.end() ? 0 : it->second;
}

// One incast: every sender runs an unmodified ib_write_bw client into its own
// server on `receiver`; `bottleneck` is the switch port that feeds the
// receiver's link.
// perftest calibrates its cycle counter when it writes its report and gives
// up ("Correlation coefficient r^2 ... < 0.9", "Can't produce a report",
// exit 1) when the host is too busy to measure -- after the transfer, which
// the counters below judge. That is the tool, not the fabric.
bool finished_or_only_uncalibrated(const RunResult& r) {
  return r.exit_code == 0 ||
         (r.exit_code == 1 && r.err.find("Correlation coefficient") != std::string::npos &&
          r.err.find("Can't produce a report") != std::string::npos);
}

struct Incast {
  std::vector<std::string> senders;
  std::string receiver;
  std::string bottleneck;
  int tcp_base;
  std::string fabric = "ib";
  std::vector<std::string> extra = {};  // perftest options both ends take (RoCE: -x 1)
  bool lossy = false;  // judge neither end's exit (RC may give up under loss)
  double bottleneck_gbps = 2;  // the receiver's link, for the printed figures
};

struct IncastResult {
  double bottleneck_bps = 0;  // in one window while all were sending: printed
  double link_bps = 0;        // the bottleneck link's configured rate
  std::vector<double> sender_bps;
  double bottleneck_words = 0, sender_words = 0;  // PortXmitData over the whole run
  std::map<std::string, double> end;  // the metrics after the run
};

std::vector<std::string> with(std::vector<std::string> argv, const std::vector<std::string>& extra) {
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

IncastResult run_incast(const Fabricd& d, const Incast& spec) {
  IncastResult res;
  const size_t n = spec.senders.size();
  std::vector<std::unique_ptr<Process>> servers, clients;
  for (size_t i = 0; i < n; ++i)
    servers.push_back(std::make_unique<Process>(
        with(std::vector<std::string>{"ib_write_bw", "-d", spec.receiver, "-i", "1", "-p",
                                      std::to_string(spec.tcp_base + int(i)), "-s", "65536", "-D", "5"},
             spec.extra),
        d.app_env()));
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> a{"ib_write_bw", "-d", spec.senders[i], "-i", "1", "-p",
                               std::to_string(spec.tcp_base + int(i)), "-s", "65536", "-D", "5",
                               // Local ACK timeout 4.096 us x 2^20 = 4.3 s instead of perftest's
                               // 67 ms: on a lossless fabric only a host that stalls the lcore
                               // (a busy 2-core CI machine) could time an ACK out, and the
                               // emulator then fires the timer before the target's next poll
                               // sends the ACK. Retransmissions must mean loss, not load.
                               "-u", spec.lossy ? "14" : "20"};
    a = with(a, spec.extra);
    a.push_back("127.0.0.1");
    // The client retries while its server does not listen yet.
    for (int attempt = 0; attempt < 100; ++attempt) {
      clients.push_back(std::make_unique<Process>(a, d.app_env()));
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      if (clients.back()->running() || clients.back()->wait(std::chrono::seconds(1)).exit_code == 0) break;
      clients.pop_back();
    }
    if (clients.size() != i + 1) {
      ADD_FAILURE() << spec.senders[i] << " never connected";
      return res;
    }
  }
  const auto sent = [&](const std::map<std::string, double>& m, size_t i) {
    return port_metric(m, "vfabric_port_xmit_data_total", spec.senders[i], spec.fabric);
  };
  // All of them send now: measure one window over the daemon's counters.
  auto all_sending = [&] {
    const auto a = metrics(d);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto b = metrics(d);
    for (size_t i = 0; i < n; ++i)
      if (sent(b, i) <= sent(a, i)) return false;
    return true;
  };
  // Lossy: a sender the others lock out may never send in the same window
  // (or may already have given up); the run is judged by its drops.
  bool sending = spec.lossy;
  if (spec.lossy) std::this_thread::sleep_for(std::chrono::seconds(1));
  for (int i = 0; i < 20 && !sending; ++i) sending = all_sending();
  if (!sending) {
    ADD_FAILURE() << "the senders never sent at the same time";
    return res;
  }
  // One window, timed by the emulated clock each snapshot carries (read on
  // the lcore with the counters): exact however long fabricctl takes.
  const auto m0 = metrics(d);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto m1 = metrics(d);
  const double secs = (m1.at("vfabric_emulated_time_ns") - m0.at("vfabric_emulated_time_ns")) / 1e9;
  // PortXmitData is in 4-byte words, the whole frame (LRH..VCRC).
  const auto bps = [&](const std::string& port) {
    return (port_metric(m1, "vfabric_port_xmit_data_total", port, spec.fabric) -
            port_metric(m0, "vfabric_port_xmit_data_total", port, spec.fabric)) *
           4 * 8 / secs;
  };
  res.bottleneck_bps = bps(spec.bottleneck);
  res.link_bps = spec.bottleneck_gbps * 1e9;
  std::printf("incast through fabricd: bottleneck %s %.3f Gb/s of %g, senders", spec.bottleneck.c_str(),
              res.bottleneck_bps / 1e9, spec.bottleneck_gbps);
  for (size_t i = 0; i < n; ++i) {
    res.sender_bps.push_back(bps(spec.senders[i]));
    std::printf(" %s %.3f", spec.senders[i].c_str(), res.sender_bps.back() / 1e9);
  }
  std::printf(" Gb/s\n");
  for (auto& c : clients) {
    const RunResult r = c->wait(std::chrono::seconds(60));
    if (!spec.lossy) {
      EXPECT_TRUE(finished_or_only_uncalibrated(r)) << r.describe();
    }
  }
  for (auto& s : servers) {
    const RunResult r = s->wait(std::chrono::seconds(30));
    if (!spec.lossy) {
      EXPECT_TRUE(finished_or_only_uncalibrated(r)) << r.describe();
    }
  }
  res.end = metrics(d);
  res.bottleneck_words = port_metric(res.end, "vfabric_port_xmit_data_total", spec.bottleneck, spec.fabric);
  for (const auto& h : spec.senders) res.sender_words += port_metric(res.end, "vfabric_port_xmit_data_total", h, spec.fabric);
  return res;
}

// Everything the senders sent crossed the bottleneck: over the whole run
// (every client and server has exited, the buffers are empty) the senders'
// PortXmitData and the bottleneck's agree within 2% (management and ARP
// frames are the difference). How fast, and how evenly shared, is printed
// from the window above but not asserted: the lcore and eight busy-polling
// perftests share two cores, and a sender the kernel schedules less posts
// less -- in emulated time 1.37-1.99 of 2 Gb/s in the g++ build, and under
// ASan the five-second clients had sometimes run their course before the
// window opened. The link filling up, DCQCN keeping it busy and the
// arbiter's fairness (Jain's index) are asserted exactly in virtual time
// (tests/unit/fabric/incast_test.cpp).
void expect_carried(const IncastResult& r) {
  EXPECT_GT(r.bottleneck_words, 0) << "nothing crossed the bottleneck";
  EXPECT_NEAR(r.sender_words, r.bottleneck_words, 0.02 * r.bottleneck_words)
      << "the senders' traffic is the bottleneck's";
}

// Lossless: nothing discarded or in error on any port of the fabric, RC never
// recovered anything, and the senders waited for credit instead.
void expect_lossless(const IncastResult& r, const std::vector<std::string>& senders, const std::string& fabric = "ib") {
  unsigned ports = 0;
  for (const auto& [key, value] : r.end)
    for (const char* f : {"vfabric_port_xmit_discards_total{", "vfabric_port_rcv_errors_total{",
                          "vfabric_excessive_buffer_overrun_errors_total{", "vfabric_port_rcv_discards_total{",
                          "vfabric_retransmitted_packets_total{", "vfabric_retransmit_timeouts_total{"})
      if (key.rfind(f, 0) == 0 && key.find("fabric=\"" + fabric + "\"") != std::string::npos) {
        ++ports;
        EXPECT_EQ(value, 0) << key;
      }
  EXPECT_GT(ports, 20u) << "the metrics families were not found";
  // Credit (or PFC) waits reach every source only when the bottleneck was
  // full; a host too slow to fill it (the sanitizer build: ~0.3 of 2 Gb/s)
  // leaves nothing to wait for. Virtual time asserts it unconditionally
  // (tests/unit/fabric/incast_test.cpp).
  if (r.bottleneck_bps < 0.9 * r.link_bps) {
    std::printf("bottleneck not full (host-bound): per-sender waits not checked\n");
    return;
  }
  for (const auto& h : senders) EXPECT_GT(port_metric(r.end, "vfabric_port_xmit_wait_total", h, fabric), 0) << h;
}

TEST(Incast, FourWriteBwClientsIntoOneVhcaAreLosslessAndWaitForCredit) {
  Fabricd d(incast_config());
  const std::vector<std::string> senders{"vib0", "vib1", "vib2", "vib3"};
  const IncastResult r = run_incast(d, {senders, "vib4", "sw/5", 19500});
  ASSERT_EQ(r.sender_bps.size(), senders.size());
  expect_carried(r);
  expect_lossless(r, senders);
}

const std::vector<std::string> kRoceSenders{"vroce0", "vroce1", "vroce2", "vroce3"};

// PFC alone (trust DSCP, RoCE on lossless priority 3; ECN and DCQCN off):
// the switch pauses the senders with real PFC frames instead of dropping,
// the vHCAs honour them, and the bottleneck runs full with nothing lost.
TEST(Incast, RoceV2WithPfcPausesInsteadOfDropping) {
  Fabricd d(roce_incast_config("{pfc: [3], ecn: off, dcqcn: off}"));
  const IncastResult r = run_incast(d, {kRoceSenders, "vroce4", "sw/5", 19700, "roce", {"-x", "1"}});
  ASSERT_EQ(r.sender_bps.size(), kRoceSenders.size());
  expect_carried(r);
  expect_lossless(r, kRoceSenders, "roce");
  double sent = 0, received = 0;
  for (unsigned i = 0; i < kSenders; ++i) {
    sent += prio_metric(r.end, "vfabric_tx_pause_frames_total", "sw/" + std::to_string(i + 1));
    received += prio_metric(r.end, "vfabric_rx_pause_frames_total", kRoceSenders[i]);
    EXPECT_GT(prio_metric(r.end, "vfabric_rx_pause_duration_us_total", kRoceSenders[i]), 0) << kRoceSenders[i];
    EXPECT_EQ(prio_metric(r.end, "vfabric_headroom_overflow_drops_total", "sw/" + std::to_string(i + 1)), 0);
  }
  std::printf("PFC through fabricd: %.0f pause frames sent by the switch, %.0f received by the senders\n", sent,
              received);
  EXPECT_GT(sent, 0);
  EXPECT_EQ(received, sent) << "every PFC frame the switch sent arrived";
  // The operator's view: the mlx5 names in `fabricctl counters`, the state in `port show`.
  const RunResult c = d.ctl({"--json", "counters", "vroce0"});
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  const auto cj = nlohmann::json::parse(c.out)["ports"][0];
  EXPECT_GT(cj["pfc"]["rx_prio3_pause"].get<uint64_t>(), 0u) << c.out;
  EXPECT_EQ(cj["hw_counters"]["out_of_sequence"].get<uint64_t>(), 0u) << c.out;
  const RunResult show = d.ctl({"--json", "port", "show", "sw/1"});
  ASSERT_EQ(show.exit_code, 0) << show.describe();
  const auto pj = nlohmann::json::parse(show.out);
  EXPECT_EQ(pj["pfc"]["enable"], nlohmann::json::array({3})) << show.out;
  EXPECT_GT(pj["pfc"]["priorities"][3]["headroom_bytes"].get<uint64_t>(), 0u) << show.out;
  EXPECT_GT(pj["pfc"]["priorities"][3]["tx_pause"].get<uint64_t>(), 0u) << show.out;
}

// The default RoCE fabric (its qos: says nothing): PFC, ECN marking at the
// switch and DCQCN at the vHCAs. The congested port marks CE, the receiver
// answers with CNPs, the senders' QPs act on them -- and still nothing is
// lost.
TEST(Incast, RoceV2DefaultsMarkEcnAndDcqcnSlowsTheSenders) {
  std::string y = roce_incast_config("{}");
  Fabricd d(y);
  const IncastResult r = run_incast(d, {kRoceSenders, "vroce4", "sw/5", 19900, "roce", {"-x", "1"}});
  ASSERT_EQ(r.sender_bps.size(), kRoceSenders.size());
  expect_lossless(r, kRoceSenders, "roce");
  const double marked = prio_metric(r.end, "vfabric_ecn_marked_packets_total", "sw/5");
  double handled = 0;
  for (const auto& h : kRoceSenders) {
    const auto it = r.end.find("vfabric_rp_cnp_handled_total{fabric=\"roce\",hca=\"" + h + "\"}");
    ASSERT_NE(it, r.end.end()) << h;
    handled += it->second;
  }
  const auto cnps = r.end.find("vfabric_np_cnp_sent_total{fabric=\"roce\",hca=\"vroce4\"}");
  ASSERT_NE(cnps, r.end.end());
  std::printf("DCQCN through fabricd: %.0f CE marks at sw/5, %.0f CNPs sent by vroce4, %.0f handled\n", marked,
              cnps->second, handled);
  EXPECT_GT(marked, 0);
  EXPECT_GT(cnps->second, 0);
  EXPECT_EQ(handled, cnps->second) << "every CNP reached its sender";
  expect_carried(r);
}

// The same config with PFC off (and no ECN/DCQCN to soften it) is lossy Ethernet:
// the congested port drops and RC retransmits. Which RC recovery shows up
// depends on the drop pattern: with equal link rates one sender's arrivals
// often lock step with the queue's departures and take every freed slot
// (tail-drop lock-out, RFC 2309), so the others lose whole bursts and recover
// by timeout rather than by a sequence NAK. The NAK / out_of_sequence path is
// asserted in virtual time (tests/unit/fabric/incast_test.cpp).
// The receiver's link runs at a quarter of the senders' rate: overload must not
// depend on how fast four perftests get scheduled (under ASan on two cores they
// once offered 1.64 of 2 Gb/s together, and nothing overflowed); one sender at
// its line rate alone overruns a 500 Mb/s bottleneck.
TEST(Incast, RoceV2WithPfcOffDropsAndRetransmits) {
  Fabricd d(roce_incast_config("{pfc: off, ecn: off, dcqcn: off}", "500Mbps"));
  Incast spec{kRoceSenders, "vroce4", "sw/5", 19800, "roce", {"-x", "1"}};
  spec.lossy = true;
  spec.bottleneck_gbps = 0.5;
  const IncastResult r = run_incast(d, spec);
  ASSERT_EQ(r.sender_bps.size(), kRoceSenders.size());
  EXPECT_GT(port_metric(r.end, "vfabric_port_xmit_discards_total", "sw/5", "roce"), 0)
      << "the egress port towards the receiver tail-drops";
  double retransmitted = 0, recoveries = 0, pauses = 0;
  for (const auto& [key, value] : r.end) {
    if (key.rfind("vfabric_retransmitted_packets_total{fabric=\"roce\"", 0) == 0) retransmitted += value;
    for (const char* f : {"vfabric_local_ack_timeout_err_total{fabric=\"roce\"", "vfabric_packet_seq_err_total{fabric=\"roce\""})
      if (key.rfind(f, 0) == 0) recoveries += value;
    if (key.rfind("vfabric_tx_pause_frames_total{fabric=\"roce\"", 0) == 0) pauses += value;
  }
  EXPECT_GT(retransmitted, 0);
  EXPECT_GT(recoveries, 0) << "local_ack_timeout_err or packet_seq_err at the senders";
  EXPECT_EQ(pauses, 0) << "no PFC on a lossy fabric";
}

// Across configs/fat-tree.yaml with vib0's link slowed to 2 Gb/s: three
// senders on vib0's leaf and one (vib4) two switch hops away through a spine.
// Each arrives at leaf0 on its own port, so each gets its own share, and the
// backpressure reaches vib4 hop by hop: the spine's port towards leaf0 waits
// for credit, and so does vib4. Emulated time runs at half speed (1 Gb/s of
// wall-clock traffic): 16 vHCAs and six switches on one lcore, under ASan and
// beside five busy-polling perftests on two cores, must leave the link, not
// the CPU, the bottleneck.
TEST(Incast, AcrossTheFatTreeBackpressureReachesTheSourceHopByHop) {
  std::string y = read_file(Paths::source_dir() + "/configs/fat-tree.yaml");
  const std::string link = "{a: vib0, b: leaf0/1, width: 4x, speed: EDR, delay: 100ns}";
  const size_t at = y.find(link);
  ASSERT_NE(at, std::string::npos);
  y.replace(at, link.size(), "{a: vib0, b: leaf0/1, width: 4x, speed: EDR, rate: 2Gbps, delay: 100ns}");
  const std::string daemon = "\ndaemon:\n";
  const size_t d_at = y.find(daemon);
  ASSERT_NE(d_at, std::string::npos);
  y.insert(d_at + daemon.size(), "  time_dilation: 2\n");
  Fabricd d(y);
  // The spine leaf1 climbs to for vib0, and that spine's port down to leaf0.
  const RunResult rt1 = d.ctl({"--json", "routes", "leaf1"});
  ASSERT_EQ(rt1.exit_code, 0) << rt1.describe();
  int up = 0;
  const auto lft1 = nlohmann::json::parse(rt1.out);
  for (const auto& e : lft1["lft"])
    if (e["destination"] == "vib0") up = e["port"].get<int>();
  const std::string spine = up == 5 ? "spine0" : "spine1";
  const RunResult rt2 = d.ctl({"--json", "routes", spine});
  ASSERT_EQ(rt2.exit_code, 0) << rt2.describe();
  int down = 0;
  const auto lft2 = nlohmann::json::parse(rt2.out);
  for (const auto& e : lft2["lft"])
    if (e["destination"] == "vib0") down = e["port"].get<int>();
  ASSERT_GT(down, 0) << rt2.out;

  const std::vector<std::string> senders{"vib1", "vib2", "vib3", "vib4"};
  const IncastResult r = run_incast(d, {senders, "vib0", "leaf0/1", 19600});
  ASSERT_EQ(r.sender_bps.size(), senders.size());
  expect_carried(r);
  expect_lossless(r, senders);
  const std::string hop = spine + "/" + std::to_string(down);
  EXPECT_GT(port_metric(r.end, "vfabric_port_xmit_wait_total", hop), 0) << hop << " never waited for credit";
  // The operator's view of that port: VL0 waited for credit (PortVLXmitWait)
  // and the VL's credit state is there, in the IBA's terms.
  const RunResult show = d.ctl({"--json", "port", "show", hop});
  ASSERT_EQ(show.exit_code, 0) << show.describe();
  const auto pv = nlohmann::json::parse(show.out);
  EXPECT_EQ(pv["state"], "ACTIVE") << show.out;
  EXPECT_EQ(pv["peer"], "leaf0/" + std::to_string(up)) << show.out;
  ASSERT_EQ(pv["classes"][0]["class"], "vl0") << show.out;
  EXPECT_GT(pv["classes"][0]["xmit_wait"].get<uint64_t>(), 0u) << show.out;
  EXPECT_GT(pv["classes"][0]["credits"]["buffer_blocks"].get<uint64_t>(), 0u) << show.out;
  EXPECT_TRUE(pv["classes"][0]["credits"]["fccl_known"].get<bool>()) << show.out;
  const RunResult table = d.ctl({"port", "show", hop});
  ASSERT_EQ(table.exit_code, 0) << table.describe();
  EXPECT_NE(table.out.find(hop + " (fabric ib): ACTIVE, link to leaf0/"), std::string::npos) << table.out;
  for (const char* want : {"\nCLASS ", " WAIT_US ", " CREDITS ", "\nvl0 ", "\nvl15 ", "\nlink_ctrl "})
    EXPECT_NE(table.out.find(want), std::string::npos) << want << "\n" << table.out;
}

// Across configs/leaf-spine.yaml, routed: vroce0's link slowed to 2 Gb/s and
// four senders on the two other leaves, so every packet crosses a leaf, a
// spine (ECMP picks which) and vroce0's leaf. PFC keeps it lossless hop by
// hop: leaf0 pauses the spines on its routed uplinks. How far back the
// pauses travel depends on how fast the senders post (under ASan on two
// cores the spines' buffers absorbed the rest and no sender was paused), so
// the senders' own pauses are shown, not asserted; hop-by-hop propagation to
// the source is asserted in virtual time (tests/unit/fabric/pfc_hol_test.cpp).
TEST(Incast, RoceV2AcrossARoutedLeafSpineIsLosslessWithPfc) {
  std::string y = read_file(Paths::source_dir() + "/configs/leaf-spine.yaml");
  const std::string link = "{a: vroce0, b: leaf0/1, speed: 25G, delay: 100ns}";
  const size_t at = y.find(link);
  ASSERT_NE(at, std::string::npos);
  y.replace(at, link.size(), "{a: vroce0, b: leaf0/1, speed: 25G, rate: 2Gbps, delay: 100ns}");
  const std::string daemon = "\ndaemon:\n";
  const size_t d_at = y.find(daemon);
  ASSERT_NE(d_at, std::string::npos);
  y.insert(d_at + daemon.size(), "  time_dilation: 2\n");
  // PFC alone, as in RoceV2WithPfcPausesInsteadOfDropping: what is asserted
  // is pausing, not DCQCN's rate control.
  const std::string fabric = "    link_layer: ethernet\n";
  const size_t f_at = y.find(fabric);
  ASSERT_NE(f_at, std::string::npos);
  y.insert(f_at + fabric.size(), "    qos: {pfc: [3], ecn: off, dcqcn: off}\n");
  Fabricd d(y);
  const std::vector<std::string> senders{"vroce2", "vroce3", "vroce4", "vroce5"};
  const IncastResult r = run_incast(d, {senders, "vroce0", "leaf0/1", 20100, "dc", {"-x", "1"}});
  ASSERT_EQ(r.sender_bps.size(), senders.size());
  expect_carried(r);
  expect_lossless(r, {}, "dc");
  const auto prio = [&](const std::string& family, const std::string& port) {
    const auto it = r.end.find(family + "{fabric=\"dc\",port=\"" + port + "\",priority=\"3\"}");
    EXPECT_NE(it, r.end.end()) << family << " of " << port;
    return it == r.end.end() ? 0.0 : it->second;
  };
  const double uplink_pauses = prio("vfabric_tx_pause_frames_total", "leaf0/7") +
                               prio("vfabric_tx_pause_frames_total", "leaf0/8");
  double sender_pauses = 0;
  for (const auto& h : senders) sender_pauses += prio("vfabric_rx_pause_frames_total", h);
  std::printf("PFC across the leaf-spine: %.0f pauses from leaf0's uplinks, %.0f received by the senders\n",
              uplink_pauses, sender_pauses);
  EXPECT_GT(uplink_pauses, 0) << "leaf0 paused the spines on its routed ports";
}

}  // namespace
}  // namespace vf::test
