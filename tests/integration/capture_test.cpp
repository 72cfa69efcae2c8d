// `fabricctl capture` through a real fabricd, read by tools nobody here wrote:
// Wireshark's dissectors (tshark) decode an IB and a RoCEv2 pingpong with no
// malformed frame and with the opcodes and PSNs the run must have had, and
// every RoCEv2 ICRC checks out under zlib's CRC-32 (not our implementation).
// Also the tcpdump-style lines, one capture per link, and a capture whose
// client died being cleaned up by the daemon.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "fabricd_fixture.hpp"
#include "rc_pingpong.hpp"

namespace vf::test {
namespace {

std::vector<std::string> ctl_argv(const Fabricd& d, std::vector<std::string> args) {
  std::vector<std::string> a{Paths::fabricctl(), "--runtime-dir", d.runtime_dir()};
  a.insert(a.end(), args.begin(), args.end());
  return a;
}

// Starts the capture and waits until the daemon has the tap in place.
std::unique_ptr<Process> start_capture(const Fabricd& d, std::vector<std::string> args) {
  auto p = std::make_unique<Process>(ctl_argv(d, args), Env{});
  for (int i = 0; i < 100 && p->running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (p->err_so_far().find("capturing on") != std::string::npos) break;
  }
  return p;
}


std::string temp_file(const Fabricd& d, const std::string& name) { return d.runtime_dir() + "/../" + name; }

// tshark's fields, one vector per frame.
std::vector<std::vector<std::string>> tshark_fields(const std::string& file, std::vector<std::string> fields) {
  std::vector<std::string> argv{"tshark", "-r", file, "-T", "fields", "-E", "separator=|"};
  for (const auto& f : fields) argv.insert(argv.end(), {"-e", f});
  const RunResult r = run(argv, Env{}, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> row;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, '|');) row.push_back(c);
    rows.push_back(row);
  }
  return rows;
}

size_t malformed(const std::string& file) {
  const RunResult r = run({"tshark", "-r", file, "-Y", "_ws.malformed || _ws.expert.severity == error"}, Env{},
                          std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return size_t(std::count(r.out.begin(), r.out.end(), '\n'));
}

// The Enhanced Packet Blocks' data, read straight from the pcapng file.
std::vector<std::string> pcapng_packets(const std::string& file) {
  std::ifstream f(file, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  for (size_t at = 0; at + 12 <= s.size();) {
    uint32_t type, len, caplen;
    std::memcpy(&type, &s[at], 4);
    std::memcpy(&len, &s[at + 4], 4);
    if (len < 12 || at + len > s.size()) break;
    if (type == 6) {
      std::memcpy(&caplen, &s[at + 20], 4);
      out.push_back(s.substr(at + 28, caplen));
    }
    at += len;
  }
  return out;
}

// Annex A17's ICRC of a RoCEv2/IPv4 frame (Ethernet, untagged), computed with
// zlib over the masked invariant fields; true when it matches the frame's.
bool roce_v4_icrc_ok(const std::string& frame) {
  const size_t l3 = 14;
  if (frame.size() < l3 + 20 + 8 + 12 + 4) return false;
  std::string m(8, '\xff');
  std::string rest = frame.substr(l3, frame.size() - l3 - 4);
  const size_t ihl = size_t(rest[0] & 0xF) * 4;
  rest[1] = '\xff';                                   // TOS
  rest[8] = '\xff';                                   // TTL
  rest[10] = rest[11] = '\xff';                       // header checksum
  rest[ihl + 6] = rest[ihl + 7] = '\xff';             // UDP checksum
  rest[ihl + 8 + 4] = '\xff';                         // BTH resv8a (FECN, BECN)
  m += rest;
  const uint32_t crc = uint32_t(crc32(0, reinterpret_cast<const Bytef*>(m.data()), uInt(m.size())));
  uint32_t stored;
  std::memcpy(&stored, &frame[frame.size() - 4], 4);  // least significant byte first
  return crc == stored;
}

TEST(Capture, AnIbPingpongReadsCleanInWireshark) {
  Fabricd d(default_config());
  const std::string file = temp_file(d, "ib.pcapng");
  auto cap = start_capture(d, {"capture", "vib0", "-w", file, "-c", "60"});
  ASSERT_TRUE(cap->running()) << cap->wait(std::chrono::seconds(1)).describe();
  ASSERT_EQ(rc_pingpong(d, "vib1", "vib0", {"-n", "10"}, 19951).exit_code, 0);
  const RunResult c = cap->wait(std::chrono::seconds(30));
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_NE(c.err.find("60 frames written"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("IB flow-control packets left out"), std::string::npos) << c.err;

  EXPECT_EQ(malformed(file), 0u);
  const auto rows = tshark_fields(file, {"frame.protocols", "infiniband.lrh.slid", "infiniband.bth.opcode",
                                         "infiniband.bth.psn", "frame.time_epoch"});
  ASSERT_EQ(rows.size(), 60u);
  std::map<std::string, int> opcodes;
  std::map<std::string, long> next_psn;  // per source LID: PSNs of its data packets run on
  double last_time = 0;
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 5u);
    EXPECT_NE(r[0].find("erf:infiniband"), std::string::npos) << r[0];
    ++opcodes[r[2]];
    const double t = std::stod(r[4]);
    EXPECT_GE(t, last_time) << "in time order";
    last_time = t;
    if (r[2] == "17") continue;  // an ACK repeats the PSN it acknowledges
    const long psn = std::stol(r[3]);
    if (next_psn.count(r[1])) {
      EXPECT_EQ(psn, next_psn[r[1]]) << "from LID " << r[1];
    }
    next_psn[r[1]] = (psn + 1) & 0xFFFFFF;
  }
  // 4096-byte SENDs in 1024-byte packets (First, Middle, Middle, Last), both ways, and ACKs.
  EXPECT_GT(opcodes["0"], 0);
  EXPECT_GT(opcodes["1"], 0);
  EXPECT_GT(opcodes["2"], 0);
  EXPECT_GT(opcodes["17"], 0);
  EXPECT_EQ(next_psn.size(), 2u) << "both directions";
}

TEST(Capture, ARocePingpongHasValidIcrcsUnderAnIndependentCrc) {
  Fabricd d(default_config());
  const std::string file = temp_file(d, "roce.pcapng");
  auto cap = start_capture(d, {"capture", "vroce0", "-w", file, "-c", "42"});
  ASSERT_TRUE(cap->running());
  ASSERT_EQ(rc_pingpong(d, "vroce1", "vroce0", {"-g", "1", "-n", "10"}, 19952).exit_code, 0);
  ASSERT_EQ(cap->wait(std::chrono::seconds(30)).exit_code, 0);
  EXPECT_EQ(malformed(file), 0u);
  const auto rows =
      tshark_fields(file, {"frame.protocols", "ip.src", "infiniband.bth.opcode", "udp.dstport", "arp.opcode"});
  ASSERT_EQ(rows.size(), 42u);
  // The client's first packet waits for ARP, resolved on the wire: vroce0
  // asks, vroce1 answers (and learned vroce0 from the question, so it never
  // asks back).
  EXPECT_EQ(rows[0][4], "1");
  EXPECT_EQ(rows[1][4], "2");
  for (size_t i = 2; i < rows.size(); ++i) {
    EXPECT_NE(rows[i][0].find("eth:ethertype:ip:udp:infiniband"), std::string::npos) << rows[i][0];
    EXPECT_EQ(rows[i][3], "4791");
  }
  const auto packets = pcapng_packets(file);
  ASSERT_EQ(packets.size(), 42u);
  for (size_t i = 2; i < packets.size(); ++i) EXPECT_TRUE(roce_v4_icrc_ok(packets[i])) << "frame " << i + 1;
  // The check can fail: one flipped payload bit and it does.
  std::string bad = packets[2];
  bad[bad.size() - 10] ^= 1;
  EXPECT_FALSE(roce_v4_icrc_ok(bad));
}

TEST(Capture, LinesSayWhatEachFrameIsAndTheDaemonCleansUpAfterADeadClient) {
  Fabricd d(default_config());
  auto cap = start_capture(d, {"capture", "ibsw0/2"});
  ASSERT_TRUE(cap->running());
  ASSERT_EQ(rc_pingpong(d, "vib1", "vib0", {"-n", "5"}, 19953).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a read or two later
  cap->signal(SIGINT);  // as Ctrl-C: the loop ends, the taps go, the counts print
  const RunResult lines = cap->wait(std::chrono::seconds(30));
  ASSERT_EQ(lines.exit_code, 0) << lines.describe();
  EXPECT_NE(lines.err.find(" dropped by the capture ring"), std::string::npos) << lines.err;
  EXPECT_NE(lines.out.find(" ibsw0/2 Out 6  IB flow control VL0 FCTBS "), std::string::npos) << lines.out;
  EXPECT_NE(lines.out.find(" ibsw0/2 Out 1050  IB LID 1 > 2 VL0 SL0 RC SEND First QP 0x"), std::string::npos)
      << lines.out;
  EXPECT_NE(lines.out.find(" ibsw0/2 In  30  IB LID 2 > 1 VL0 SL0 RC Acknowledge QP 0x"), std::string::npos)
      << lines.out;

  // One capture per link: the other end of vib0's link is busy while one runs.
  auto first = start_capture(d, {"capture", "vib0"});
  ASSERT_TRUE(first->running());
  RunResult second = run(ctl_argv(d, {"capture", "ibsw0/1", "-c", "1"}), Env{}, std::chrono::seconds(30));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("is being captured already"), std::string::npos) << second.err;
  // Killed without a word, its taps outlive it only until the daemon's idle timeout.
  first->signal(SIGKILL);
  first->wait(std::chrono::seconds(5));
  bool freed = false;
  for (int i = 0; i < 40 && !freed; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    auto again = start_capture(d, {"capture", "ibsw0/1", "-c", "1"});
    freed = again->err_so_far().find("capturing on") != std::string::npos;
    again->signal(SIGINT);
    again->wait(std::chrono::seconds(5));
  }
  EXPECT_TRUE(freed) << "the dead client's capture was never removed";
}

TEST(Capture, BadRequestsAreRefused) {
  Fabricd d(default_config());
  RunResult r = run(ctl_argv(d, {"capture", "vib9"}), Env{}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no vHCA, switch, port or fabric named 'vib9'"), std::string::npos) << r.err;
  r = run(ctl_argv(d, {"capture", "ibsw0"}), Env{}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'ibsw0' names 2 ports"), std::string::npos) << r.err;
  r = run(ctl_argv(d, {"capture", "ibsw0/5"}), Env{}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1) << "an uncabled port";
  EXPECT_NE(r.err.find("has no link"), std::string::npos) << r.err;
  r = run(ctl_argv(d, {"capture", "vib0", "--snaplen", "0"}), Env{}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2);
  r = run(ctl_argv(d, {"capture", "vib0", "-w", "/nonexistent/dir/x.pcapng"}), Env{}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot write /nonexistent/dir/x.pcapng"), std::string::npos) << r.err;
  // ...and that capture's taps were removed: a new one starts at once.
  auto ok = start_capture(d, {"capture", "vib0", "-c", "1"});
  EXPECT_NE(ok->err_so_far().find("capturing on vib0"), std::string::npos) << ok->err_so_far();
  ok->signal(SIGINT);
  EXPECT_EQ(ok->wait(std::chrono::seconds(10)).exit_code, 0);
}

}  // namespace
}  // namespace vf::test
