// Live faults through a real fabricd: `fabricctl link set … loss/corrupt`
// impairs a link under unmodified ibv_rc_pingpong, which still completes
// (RC retransmits), while the counters say where frames were lost or failed
// their CRC; `loss 0 corrupt 0` makes the wire clean again.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"
#include "rc_pingpong.hpp"

namespace vf::test {
namespace {

double sample(const Fabricd& d, const std::string& name) {
  const RunResult m = d.ctl({"metrics"});
  EXPECT_EQ(m.exit_code, 0) << m.describe();
  const size_t at = m.out.find(name + " ");
  EXPECT_NE(at, std::string::npos) << name;
  return at == std::string::npos ? -1 : std::stod(m.out.substr(at + name.size() + 1));
}


TEST(LinkFaults, LossOnAnIbLinkIsRecoveredAndCounted) {
  Fabricd d(default_config());
  const RunResult set = d.ctl({"link", "set", "vib0", "loss", "3%", "seed", "7"});
  ASSERT_EQ(set.exit_code, 0) << set.describe();
  EXPECT_NE(set.out.find("loss 3% corrupt 0% each way (seed 7)"), std::string::npos) << set.out;
  const RunResult r = rc_pingpong_lossy(d, "vib1", "vib0", {"-s", "4096", "-n", "300"}, 19901);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const std::string out = R"(vfabric_link_lost_frames_total{fabric="ib",from="vib0",to="ibsw0/1"})";
  const std::string back = R"(vfabric_link_lost_frames_total{fabric="ib",from="ibsw0/1",to="vib0"})";
  EXPECT_GT(sample(d, out) + sample(d, back), 0) << "3% of ~1200 frames";
  EXPECT_GT(sample(d, R"(vfabric_retransmitted_packets_total{fabric="ib",hca="vib0"})") +
                sample(d, R"(vfabric_retransmitted_packets_total{fabric="ib",hca="vib1"})"),
            0);
  // Clean again: nothing more is lost. (Sampled after the change: the idle
  // link's flow-control packets keep crossing it until then.)
  ASSERT_EQ(d.ctl({"link", "set", "vib0", "loss", "0", "corrupt", "0"}).exit_code, 0);
  const double lost = sample(d, out) + sample(d, back);
  EXPECT_EQ(rc_pingpong(d, "vib1", "vib0", {"-n", "100"}, 19902).exit_code, 0);
  EXPECT_EQ(sample(d, out) + sample(d, back), lost);
}

TEST(LinkFaults, CorruptionOnARoceLinkFailsTheIcrcAtTheReceiver) {
  Fabricd d(default_config());
  ASSERT_EQ(d.ctl({"link", "set", "vroce0", "corrupt", "5%", "seed", "3"}).exit_code, 0);
  const RunResult r = rc_pingpong_lossy(d, "vroce1", "vroce0", {"-g", "1", "-s", "1024", "-n", "300"}, 19903);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const double corrupted =
      sample(d, R"(vfabric_link_corrupted_frames_total{fabric="roce",from="vroce0",to="ethsw0/1"})");
  EXPECT_GT(corrupted, 0);
  // vroce0's corrupted frames crossed the switch and failed at vroce1; the
  // reverse direction corrupted what vroce0 received.
  EXPECT_GT(sample(d, R"(vfabric_port_rcv_errors_total{fabric="roce",port="vroce1"})"), 0);
  EXPECT_GT(sample(d, R"(vfabric_rx_bad_icrc_total{fabric="roce",hca="vroce1"})"), 0);
}

// ib_write_bw's average in Gb/s ("--report_gbits"): the last figure of its
// result line.
double write_bw_gbits(const Fabricd& d, int port) {
  const std::vector<std::string> common{"ib_write_bw", "-i", "1", "-p", std::to_string(port), "-s", "65536",
                                        "-D", "1", "--report_gbits"};
  auto srv_args = common;
  srv_args.insert(srv_args.begin() + 1, {"-d", "vib1"});
  Process srv(srv_args, d.app_env());
  RunResult c;
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto a = common;
    a.insert(a.begin() + 1, {"-d", "vib0"});
    a.push_back("127.0.0.1");
    c = run(a, d.app_env(), std::chrono::seconds(60));
    if (c.exit_code == 0 || c.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(c.exit_code, 0) << c.describe();
  srv.wait(std::chrono::seconds(30));
  // " 65536      1234           0.00               0.95     0.001811"
  const size_t at = c.out.find("\n 65536");
  if (at == std::string::npos) return -1;
  std::istringstream row(c.out.substr(at + 1));
  double size = 0, iters = 0, peak = 0, avg = -1;
  row >> size >> iters >> peak >> avg;
  return avg;
}

// Rate and delay change under running programs; the fabric's views follow.
TEST(LinkFaults, RateAndDelayChangeLive) {
  Fabricd d(default_config());
  const RunResult set = d.ctl({"link", "set", "vib0", "rate", "1G", "delay", "5us"});
  ASSERT_EQ(set.exit_code, 0) << set.describe();
  EXPECT_NE(set.out.find("ib: link vib0 - ibsw0/1, 1 Gb/s, delay 5000 ns"), std::string::npos) << set.out;
  const RunResult shown = d.ctl({"--json", "port", "show", "ibsw0/1"});
  const auto pv = nlohmann::json::parse(shown.out);
  EXPECT_EQ(pv["link"]["rate_bps"], 1'000'000'000ULL) << "the far end's port too";
  EXPECT_EQ(pv["link"]["delay_ns"], 5000);
  // The link, not the engine, limits the transfer now: at most its rate
  // (an upper bound holds however slow the host is).
  const double gbits = write_bw_gbits(d, 19904);
  EXPECT_GT(gbits, 0);
  EXPECT_LE(gbits, 1.0);
  // Only the rate: the delay stays.
  ASSERT_EQ(d.ctl({"link", "set", "vib0", "rate", "100G"}).exit_code, 0);
  const auto t = nlohmann::json::parse(d.ctl({"--json", "topology", "show"}).out);
  EXPECT_EQ(t["fabrics"][0]["links"][0]["rate_bps"], 100'000'000'000ULL);
  EXPECT_EQ(t["fabrics"][0]["links"][0]["delay_ns"], 5000);
  EXPECT_EQ(rc_pingpong(d, "vib1", "vib0", {"-n", "50"}, 19905).exit_code, 0);
}

// netem's duplicate and reorder on a live RoCE link: RC takes copies as
// duplicate requests and late frames as gaps, the run completes, and the
// wire counters say what the link did.
TEST(LinkFaults, DuplicationAndReorderingAreCountedAndSurvived) {
  Fabricd d(default_config());
  const RunResult set = d.ctl({"link", "set", "vroce0", "duplicate", "5%", "reorder", "5%", "seed", "11"});
  ASSERT_EQ(set.exit_code, 0) << set.describe();
  EXPECT_NE(set.out.find("loss 0% corrupt 0% duplicate 5% reorder 5% each way (seed 11)"), std::string::npos)
      << set.out;
  const RunResult r = rc_pingpong(d, "vroce1", "vroce0", {"-g", "1", "-s", "4096", "-n", "200"}, 19906);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  const auto both = [&](const std::string& family) {
    return sample(d, family + R"({fabric="roce",from="vroce0",to="ethsw0/1"})") +
           sample(d, family + R"({fabric="roce",from="ethsw0/1",to="vroce0"})");
  };
  EXPECT_GT(both("vfabric_link_duplicated_frames_total"), 0);
  EXPECT_GT(both("vfabric_link_reordered_frames_total"), 0);
  const auto t = nlohmann::json::parse(d.ctl({"--json", "topology", "show"}).out);
  EXPECT_DOUBLE_EQ(t["fabrics"][1]["links"][0]["impairment"]["reorder"].get<double>(), 0.05);
}

TEST(LinkFaults, BadFaultRequestsAreRefused) {
  Fabricd d(default_config());
  RunResult r = d.ctl({"link", "set", "vib0", "loss", "150%"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  r = d.ctl({"link", "set", "vib0", "seed", "-3"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  r = d.ctl({"link", "set", "vib0", "jitter", "5"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_NE(r.err.find("unknown attribute 'jitter'"), std::string::npos) << r.describe();
  // Faster than the cable, or a delay without a unit: refused by the daemon.
  r = d.ctl({"link", "set", "vib0", "rate", "200G"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("rate must be a bit rate from 1Mbps to the 100 Gb/s this link's cable carries"),
            std::string::npos)
      << r.err;
  r = d.ctl({"link", "set", "vib0", "delay", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("delay must be a whole number of nanoseconds with a unit"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace vf::test
