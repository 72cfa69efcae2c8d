// Unmodified Debian infiniband-diags on a real fabricd: ibstat and ibstatus
// read the vHCAs from sysfs through libibumad; ibnetdiscover, iblinkinfo,
// smpquery, ibroute, ibtracert and sminfo send SMPs to the nodes' SMAs,
// perfquery GMPs to their PMAs and saquery to the SA, through
// /dev/infiniband/umadN (the preload shim and fabricd's umad sockets). What they print must be the fabric
// fabricctl shows: GUIDs, LIDs, cables, LFTs, counters, link states.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <string>
#include <thread>

#include "device/abi/vhca_umad.h"
#include "fabricd_fixture.hpp"
#include "rc_pingpong.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

RunResult tool(const Fabricd& d, std::vector<std::string> argv, std::chrono::milliseconds timeout = 30s) {
  return run(std::move(argv), d.app_env(), timeout);
}

nlohmann::json ctl_json(const Fabricd& d, std::vector<std::string> args) {
  args.insert(args.begin(), "--json");
  const RunResult r = d.ctl(args);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return nlohmann::json::parse(r.out, nullptr, false);
}

std::string hex_guid(uint64_t g) {
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(g));
  return b;
}

uint64_t guid_of(const Fabricd& d, const std::string& hca) {
  for (const auto& h : ctl_json(d, {"hca", "list"}))
    if (h.value("name", "") == hca) return std::stoull(h.value("node_guid", "0"), nullptr, 16);
  ADD_FAILURE() << "no vHCA " << hca;
  return 0;
}

// vib0's umad counters (fabricctl hca list: "mad").
nlohmann::json mad_stats(const Fabricd& d) {
  for (const auto& h : ctl_json(d, {"hca", "list"}))
    if (h.value("name", "") == "vib0") return h["mad"];
  return nullptr;
}

// The number after "Field:....." in perfquery/smpquery output.
uint64_t field(const std::string& out, const std::string& name) {
  const std::regex re(name + ":\\.+(0x[0-9a-fA-F]+|[0-9]+)");
  std::smatch m;
  if (!std::regex_search(out, m, re)) {
    ADD_FAILURE() << name << " not in:\n" << out;
    return ~0ULL;
  }
  return std::stoull(m[1].str(), nullptr, 0);
}

class Diags : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static Fabricd* daemon_;
};
Fabricd* Diags::daemon_ = nullptr;

TEST_F(Diags, IbstatIbstatusAndIbvDevinfoAgree) {
  const Fabricd& d = *daemon_;
  const RunResult list = tool(d, {"ibstat", "-l"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  EXPECT_EQ(list.out, "vib0\nvib1\nvroce0\nvroce1\n");

  const RunResult st = tool(d, {"ibstat", "vib1"});
  ASSERT_EQ(st.exit_code, 0) << st.describe();
  const RunResult dev = tool(d, {"ibv_devinfo", "-d", "vib1"});
  ASSERT_EQ(dev.exit_code, 0) << dev.describe();
  std::smatch lid, sm;
  ASSERT_TRUE(std::regex_search(dev.out, lid, std::regex("port_lid:\\s+(\\d+)")));
  ASSERT_TRUE(std::regex_search(dev.out, sm, std::regex("sm_lid:\\s+(\\d+)")));
  EXPECT_NE(st.out.find("Base lid: " + lid[1].str() + "\n"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("SM lid: " + sm[1].str() + "\n"), std::string::npos) << st.out;
  EXPECT_NE(st.out.find("State: Active"), std::string::npos);
  EXPECT_NE(st.out.find("Rate: 100"), std::string::npos);
  EXPECT_NE(st.out.find("Port GUID: 0x" + hex_guid(guid_of(d, "vib1"))), std::string::npos) << st.out;
  const RunResult roce = tool(d, {"ibstat", "vroce0"});
  EXPECT_NE(roce.out.find("Link layer: Ethernet"), std::string::npos) << roce.describe();

  const RunResult status = tool(d, {"ibstatus", "vib0"});
  ASSERT_EQ(status.exit_code, 0) << status.describe();
  EXPECT_NE(status.out.find("state:\t\t 4: ACTIVE"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("rate:\t\t 100 Gb/sec (4X EDR)"), std::string::npos) << status.out;
}

TEST_F(Diags, IbnetdiscoverPrintsTheConfiguredTopology) {
  const Fabricd& d = *daemon_;
  const RunResult r = tool(d, {"ibnetdiscover", "-C", "vib0"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const std::string h0 = "H-" + hex_guid(guid_of(d, "vib0"));
  const std::string h1 = "H-" + hex_guid(guid_of(d, "vib1"));
  std::smatch sw;
  ASSERT_TRUE(std::regex_search(r.out, sw, std::regex("Switch\\t8 \"(S-[0-9a-f]{16})\"\\t\\t# \"ibsw0\" base port 0 lid 3")))
      << r.out;
  const std::string s = sw[1].str();
  // Each cable from both ends, with the ports the config names, at 4x EDR.
  EXPECT_NE(r.out.find("[1]\t\"" + h0 + "\"[1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[2]\t\"" + h1 + "\"[1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\t\"" + s + "\"[1]\t\t# lid 1 lmc 0 \"ibsw0\" lid 3 4xEDR"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\t\"" + s + "\"[2]\t\t# lid 2 lmc 0 \"ibsw0\" lid 3 4xEDR"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n') > 10, true);
}

TEST_F(Diags, SmpquerySminfoIbrouteAndIbtracertReadTheSmsWork) {
  const Fabricd& d = *daemon_;
  RunResult r = tool(d, {"smpquery", "-C", "vib0", "nodeinfo", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("NodeType:........................Switch"), std::string::npos) << r.out;
  EXPECT_EQ(field(r.out, "NumPorts"), 8u);

  r = tool(d, {"smpquery", "-C", "vib0", "-D", "portinfo", "0,1", "2"});  // directed route: ibsw0's port 2
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("LinkState:.......................Active"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LinkWidthActive:.................4X"), std::string::npos) << r.out;

  r = tool(d, {"smpquery", "-C", "vib0", "nodedesc", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find(" vib1"), std::string::npos) << r.out;

  r = tool(d, {"sminfo", "-C", "vib0"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("sminfo: sm lid 3 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SMINFO_MASTER"), std::string::npos) << r.out;

  // ibroute prints the LFT fabricctl shows: both vHCAs, and the switch's own
  // LID on port 0 (its management port), as opensm programs it.
  r = tool(d, {"ibroute", "-C", "vib0", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const auto routes = ctl_json(d, {"routes", "ibsw0"});
  ASSERT_EQ(routes["lft"].size(), 3u);
  for (const auto& e : routes["lft"]) {
    char line[32];
    std::snprintf(line, sizeof line, "0x%04x %03d : ", e["lid"].get<int>(), e["port"].get<int>());
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in\n" << r.out;
  }
  EXPECT_NE(r.out.find("3 valid lids dumped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0x0003 000 : (Switch portguid"), std::string::npos) << r.out;

  r = tool(d, {"ibtracert", "-C", "vib0", "1", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("[1] -> switch port {0x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[2] -> ca port {0x" + hex_guid(guid_of(d, "vib1")) + "}[1] lid 2-2"), std::string::npos)
      << r.out;
}

TEST_F(Diags, SaqueryReadsTheSubnetAdministrator) {
  const Fabricd& d = *daemon_;
  // NodeRecords (saquery's default): tables longer than one MAD, which
  // libibumad first reads with a 256-byte buffer (ENOSPC) and then whole.
  RunResult r = tool(d, {"saquery", "-C", "vib0"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  size_t records = 0;
  for (size_t at = 0; (at = r.out.find("NodeRecord dump:", at)) != std::string::npos; ++at) ++records;
  EXPECT_EQ(records, 3u) << r.out;  // vib0, vib1, ibsw0
  EXPECT_NE(r.out.find("node_guid...............0x" + hex_guid(guid_of(d, "vib1"))), std::string::npos) << r.out;

  r = tool(d, {"saquery", "-C", "vib0", "-p", "--slid", "1", "--dlid", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("dlid....................2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mtu.....................0x85"), std::string::npos) << r.out;   // exactly 4096
  EXPECT_NE(r.out.find("rate....................0x90"), std::string::npos) << r.out;  // exactly 100 Gb/s

  r = tool(d, {"saquery", "-C", "vib0", "LR"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  records = 0;
  for (size_t at = 0; (at = r.out.find("LinkRecord dump:", at)) != std::string::npos; ++at) ++records;
  EXPECT_EQ(records, 4u) << r.out;  // two cables, both ways

  r = tool(d, {"saquery", "-C", "vib0", "-s"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("EndPortLid..............3"), std::string::npos) << r.out;
  r = tool(d, {"saquery", "-C", "vib0", "-c"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("Class version............2"), std::string::npos) << r.out;
  r = tool(d, {"saquery", "-C", "vib0", "SWIR"});
  EXPECT_NE(r.out.find("LinearFDBTop............................0x3"), std::string::npos) << r.describe();
}

TEST_F(Diags, PerfqueryReadsTheCountersFabricctlShowsAndResetsThem) {
  const Fabricd& d = *daemon_;
  const RunResult pp = rc_pingpong(d, "vib1", "vib0", {"-n", "200"}, 18620);
  ASSERT_TRUE(pp.exit_code == 0) << pp.describe();
  // A vHCA port (LID 1) and a switch port (ibsw0/2), as 32-bit and as 64-bit counters.
  struct Port {
    std::vector<std::string> where;  // perfquery's LID and port
    std::string ctl;                 // fabricctl's name
  };
  for (const Port& p : {Port{{"1", "1"}, "vib0"}, Port{{"3", "2"}, "ibsw0/2"}}) {
    SCOPED_TRACE(p.ctl);
    std::vector<std::string> argv{"perfquery", "-C", "vib0"};
    argv.insert(argv.end(), p.where.begin(), p.where.end());
    const RunResult r = tool(d, argv);
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    std::vector<std::string> xargv{"perfquery", "-C", "vib0", "-x"};
    xargv.insert(xargv.end(), p.where.begin(), p.where.end());
    const RunResult x = tool(d, xargv);
    ASSERT_EQ(x.exit_code, 0) << x.describe();
    const auto c = ctl_json(d, {"counters", p.ctl});
    const auto& pma = c["ports"][0]["counters"];
    ASSERT_TRUE(pma.contains("PortXmitPkts")) << c.dump();
    EXPECT_GT(pma["PortXmitPkts"].get<uint64_t>(), 200u);
    for (const char* name : {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}) {
      EXPECT_EQ(field(r.out, name), pma[name].get<uint64_t>()) << name;
      EXPECT_EQ(field(x.out, name), pma[name].get<uint64_t>()) << name;
    }
    EXPECT_EQ(field(r.out, "LinkDownedCounter"), pma["LinkDownedCounter"].get<uint64_t>());
  }
  RunResult reset = tool(d, {"perfquery", "-C", "vib0", "-R", "3", "2"});
  ASSERT_EQ(reset.exit_code, 0) << reset.describe();
  const auto after = ctl_json(d, {"counters", "ibsw0/2"});
  const auto& pma = after["ports"][0]["counters"];
  EXPECT_EQ(pma["PortXmitPkts"].get<uint64_t>(), 0u);
  EXPECT_EQ(pma["PortRcvData"].get<uint64_t>(), 0u);
  const RunResult again = tool(d, {"perfquery", "-C", "vib0", "3", "2"});
  EXPECT_EQ(field(again.out, "PortXmitPkts"), 0u);
  // vib0's own counters were not touched by resetting ibsw0/2.
  const auto mine = ctl_json(d, {"counters", "vib0"});
  EXPECT_GT(mine["ports"][0]["counters"]["PortXmitPkts"].get<uint64_t>(), 200u);
}

TEST_F(Diags, ASetFromAnAppIsRefusedAndChangesNothing) {
  const Fabricd& d = *daemon_;
  const auto before = mad_stats(d);
  const RunResult r = tool(d, {"ibportstate", "-C", "vib0", "-t", "200", "3", "2", "disable"});
  EXPECT_NE(r.exit_code, 0) << r.describe();  // no key: the SMA drops it, the tool times out
  // fabricd counts the last try's timeout on its own timer, which may fire
  // just after the tool gave up on the same deadline: wait for it (bounded).
  auto after = mad_stats(d);
  for (int i = 0; i < 40 && after["mad_timeouts"] == before["mad_timeouts"]; ++i) {
    std::this_thread::sleep_for(50ms);
    after = mad_stats(d);
  }
  EXPECT_GT(after["mad_refused"].get<uint64_t>(), before["mad_refused"].get<uint64_t>());
  EXPECT_GT(after["mad_timeouts"].get<uint64_t>(), before["mad_timeouts"].get<uint64_t>());
  EXPECT_GT(after["mad_answered"].get<uint64_t>(), before["mad_answered"].get<uint64_t>());  // its Gets
  const RunResult st = tool(d, {"ibstat", "vib1"});
  EXPECT_NE(st.out.find("State: Active"), std::string::npos) << st.out;
  const RunResult pq = tool(d, {"smpquery", "-C", "vib0", "portinfo", "3", "2"});
  EXPECT_NE(pq.out.find("LinkState:.......................Active"), std::string::npos) << pq.describe();
}

// SMPs are packets: a directed route from vib0 to vib1 crosses both cables
// on VL15, hop by hop through ibsw0's management port; a capture of vib1's
// cable shows the request arrive and the response leave, as Wireshark reads
// them, with the hop pointer the path gave them.
TEST_F(Diags, SmpsCrossTheFabricAsVl15PacketsThatWiresharkDecodes) {
  const Fabricd& d = *daemon_;
  const std::string file = d.runtime_dir() + "/../smp-vib1.pcapng";
  Process cap({Paths::fabricctl(), "--runtime-dir", d.runtime_dir(), "capture", "vib1", "-w", file}, Env{});
  for (int i = 0; i < 100 && cap.err_so_far().find("capturing on") == std::string::npos; ++i)
    std::this_thread::sleep_for(50ms);
  const RunResult r = tool(d, {"smpquery", "-C", "vib0", "-D", "nodeinfo", "0,1,2"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("NodeType:........................Channel Adapter"), std::string::npos) << r.out;
  std::this_thread::sleep_for(200ms);
  cap.signal(SIGINT);
  cap.wait(10s);
  const RunResult t = run({"tshark", "-r", file, "-Y", "infiniband.mad", "-V"}, Env{}, 60s);
  ASSERT_EQ(t.exit_code, 0) << t.describe();
  const size_t get = t.out.find("SMP (Directed Route) SubnGet(NodeInfo)");
  const size_t resp = t.out.find("SMP (Directed Route) SubnGetResp(NodeInfo)");
  ASSERT_NE(get, std::string::npos) << t.out.substr(0, 4000);
  ASSERT_NE(resp, std::string::npos) << t.out.substr(0, 4000);
  EXPECT_LT(get, resp);
  EXPECT_NE(t.out.find("Virtual Lane: 0xf"), std::string::npos) << "VL15";
  EXPECT_NE(t.out.find("Hop Count: 0x02", get), std::string::npos);
  EXPECT_NE(t.out.find("Hop Pointer: 0x02", get), std::string::npos) << "arriving after its second hop";

  // A cable that is down takes the SMPs with it: the directed route ends there.
  ASSERT_EQ(d.ctl({"link", "set", "ibsw0/2", "state", "down"}).exit_code, 0);
  const RunResult lost = tool(d, {"smpquery", "-C", "vib0", "-t", "200", "-D", "nodeinfo", "0,1,2"});
  EXPECT_NE(lost.exit_code, 0) << lost.describe();
  ASSERT_EQ(d.ctl({"link", "set", "ibsw0/2", "state", "up"}).exit_code, 0);
  for (int i = 0; i < 50 && tool(d, {"ibstat", "vib1"}).out.find("State: Active") == std::string::npos; ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_EQ(tool(d, {"smpquery", "-C", "vib0", "-D", "nodeinfo", "0,1,2"}).exit_code, 0);
}

TEST_F(Diags, TheToolsFollowALinkThatGoesDownAndUp) {
  const Fabricd& d = *daemon_;
  ASSERT_EQ(d.ctl({"link", "set", "ibsw0/2", "state", "down"}).exit_code, 0);
  RunResult r = tool(d, {"ibnetdiscover", "-C", "vib0"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(r.out.find("vib1"), std::string::npos) << r.out;  // the cable is down: not found
  r = tool(d, {"iblinkinfo", "-C", "vib0"});
  EXPECT_NE(r.out.find("2[  ] ==(                Down/ Polling)==>"), std::string::npos) << r.describe();
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t unroutable = mad_stats(d)["mad_unroutable"].get<uint64_t>();
  r = tool(d, {"perfquery", "-C", "vib0", "-t", "100", "2"});  // LID 2 is unreachable now
  EXPECT_NE(r.exit_code, 0) << r.describe();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);  // a timeout, not a hang
  EXPECT_GT(mad_stats(d)["mad_unroutable"].get<uint64_t>(), unroutable);

  ASSERT_EQ(d.ctl({"link", "set", "ibsw0/2", "state", "up"}).exit_code, 0);
  for (int i = 0; i < 100; ++i) {  // the SM sweeps 1 ms after the link trains
    r = tool(d, {"perfquery", "-C", "vib0", "-t", "100", "2"});
    if (r.exit_code == 0) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  r = tool(d, {"ibnetdiscover", "-C", "vib0"});
  EXPECT_NE(r.out.find("vib1"), std::string::npos) << r.out;
}

// vib0's umad socket (its umadN is its uverbs number, which another
// fabricd may have pushed up).
std::string umad_socket(const Fabricd& d, const std::string& hca) {
  std::string sock;
  for (const auto& e : std::filesystem::directory_iterator(d.runtime_dir() + "/sys/class/infiniband_mad"))
    if (e.is_directory() && read_file(e.path().string() + "/ibdev") == hca + "\n")
      sock = read_file(e.path().string() + "/vfabric_socket");
  sock.erase(sock.find_last_not_of('\n') + 1);
  return sock;
}

int connect_umad(const std::string& sock) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", sock.c_str());
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << sock << ": " << std::strerror(errno);
  return fd;
}

void send_umad(int fd, uint32_t op, uint32_t agent, const void* body, size_t len) {
  std::vector<uint8_t> b(sizeof(vhca_umad_msg) + len);
  const vhca_umad_msg m{op, agent};
  std::memcpy(b.data(), &m, sizeof m);
  if (len) std::memcpy(b.data() + sizeof m, body, len);
  ASSERT_EQ(send(fd, b.data(), b.size(), MSG_NOSIGNAL), ssize_t(b.size()));
}

// An SA MCMemberRecord Set (join) or Delete (leave) of vib0's port, as
// perftest sends it; returns the response's status and MLID.
std::pair<uint16_t, uint16_t> sa_mcast(int fd, uint8_t method, uint64_t port_guid) {
  std::vector<uint8_t> b(sizeof(vhca_umad_hdr) + 256);
  vhca_umad_hdr h{};
  h.timeout_ms = 1000;
  h.lid = htons(3);  // the SM's LID
  h.qpn = htonl(1);
  h.qkey = htonl(0x80010000);
  std::memcpy(b.data(), &h, sizeof h);
  uint8_t* m = b.data() + sizeof h;
  m[0] = 1, m[1] = 0x03, m[2] = 2, m[3] = method;
  m[15] = 7;               // TID
  m[16] = 0, m[17] = 0x38;  // MCMemberRecord
  const uint64_t mask = (1u << 0) | (1u << 1) | (1u << 2) | (1u << 6) | (1u << 7) | (1u << 12) | (1u << 13) | (1u << 16);
  for (int i = 0; i < 8; ++i) m[48 + i] = uint8_t(mask >> (56 - 8 * i));
  uint8_t* r = m + 56;
  r[0] = 0xFF, r[1] = 0x12, r[15] = 0x42;  // MGID ff12::42
  r[16] = 0xFE, r[17] = 0x80;              // fe80:: + port GUID
  for (int i = 0; i < 8; ++i) r[24 + i] = uint8_t(port_guid >> (56 - 8 * i));
  r[35] = 0x11;  // Q_Key
  r[40] = 0xFF, r[41] = 0xFF;
  r[48] = 1;  // full member
  send_umad(fd, VHCA_UMAD_OP_SEND, 0, b.data(), b.size());
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, 5000) != 1) return {0xFFFF, 0};
  std::vector<uint8_t> got(4096);
  const ssize_t n = recv(fd, got.data(), got.size(), 0);
  if (n < ssize_t(sizeof h + 256)) return {0xFFFF, 0};
  const uint8_t* resp = got.data() + sizeof h;
  return {uint16_t(resp[4] << 8 | resp[5]), uint16_t(resp[56 + 36] << 8 | resp[56 + 37])};
}

// vib0's umad port with agent 0 on QP1 for `cls`.
int open_gsi_agent(const Fabricd& d, uint8_t cls, uint8_t version) {
  const int fd = connect_umad(umad_socket(d, "vib0"));
  vhca_umad_agent a{};
  a.qpn = 1;
  a.mgmt_class = cls;
  a.mgmt_class_version = version;
  send_umad(fd, VHCA_UMAD_OP_REGISTER, 0, &a, sizeof a);
  return fd;
}

TEST_F(Diags, AnSaJoinPutsThePortInTheMulticastTreeAndALeaveTakesItOut) {
  const Fabricd& d = *daemon_;
  const int fd = open_gsi_agent(d, 0x03, 2);
  const auto [st, mlid] = sa_mcast(fd, 0x02, guid_of(d, "vib0"));
  ASSERT_EQ(st, 0);
  EXPECT_GE(mlid, 0xC000);
  const auto sm = ctl_json(d, {"sm", "show"});
  ASSERT_EQ(sm[0]["mcast_groups"].size(), 1u) << sm.dump();
  EXPECT_EQ(sm[0]["mcast_groups"][0]["mgid"], "ff12::42");
  EXPECT_EQ(sm[0]["mcast_groups"][0]["mlid"], mlid);
  EXPECT_EQ(sm[0]["mcast_groups"][0]["members"][0]["hca"], "vib0");
  nlohmann::json mft;
  for (int i = 0; i < 50 && (mft = ctl_json(d, {"routes", "ibsw0"})["mft"]).empty(); ++i)
    std::this_thread::sleep_for(20ms);  // programmed within the lcore's next turn
  ASSERT_EQ(mft.size(), 1u);
  EXPECT_EQ(mft[0]["mlid"], mlid);
  const RunResult g = tool(d, {"saquery", "-C", "vib1", "-g"});
  EXPECT_NE(g.out.find("MGID....................ff12::42"), std::string::npos) << g.describe();

  const auto [left, unused] = sa_mcast(fd, 0x15, guid_of(d, "vib0"));
  EXPECT_EQ(left, 0);
  EXPECT_EQ(ctl_json(d, {"sm", "show"})[0]["mcast_groups"].size(), 0u);
  for (int i = 0; i < 50 && !(mft = ctl_json(d, {"routes", "ibsw0"})["mft"]).empty(); ++i)
    std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(mft.empty());
  // A port joins for itself only: vib1's GUID from vib0's port is refused.
  EXPECT_EQ(sa_mcast(fd, 0x02, guid_of(d, "vib1")).first, 0x0200);
  close(fd);
}

// An app that dies with requests outstanding: fabricd drops them, their
// timers find nothing to return, and everyone else is served.
TEST_F(Diags, AProcessThatDiesMidMadLeavesFabricdServing) {
  const Fabricd& d = *daemon_;
  for (int round = 0; round < 3; ++round) {
    const int fd = open_gsi_agent(d, 0x04, 1);
    for (int i = 0; i < 20; ++i) {
      std::vector<uint8_t> b(sizeof(vhca_umad_hdr) + 256);
      vhca_umad_hdr h{};
      h.timeout_ms = 50;  // fires after the connection is gone
      h.lid = htons(9);   // nobody: no answer
      std::memcpy(b.data(), &h, sizeof h);
      uint8_t* m = b.data() + sizeof h;
      m[0] = 1, m[1] = 0x04, m[2] = 1, m[3] = 0x01, m[15] = uint8_t(i), m[17] = 0x12;
      send_umad(fd, VHCA_UMAD_OP_SEND, 0, b.data(), b.size());
    }
    close(fd);
  }
  std::this_thread::sleep_for(200ms);
  const RunResult r = tool(d, {"perfquery", "-C", "vib0"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
}

// A hostile app speaks to the umad port directly: random MADs, random
// directed-route paths, bad lengths. fabricd answers what deserves it, closes
// the connection that breaks the protocol, and serves the tools as before.
TEST_F(Diags, RandomMadsFromAnAppDoNotHurtFabricd) {
  const Fabricd& d = *daemon_;
  const std::string sock = umad_socket(d, "vib0");
  ASSERT_FALSE(sock.empty());
  std::mt19937 rng(1234);
  auto connect_port = [&] { return connect_umad(sock); };
  // Agent 0 on QP0 (SMPs), agent 1 on QP1 (GMPs).
  auto open_port = [&] {
    const int fd = connect_port();
    for (uint32_t agent = 0; agent < 2; ++agent) {
      uint8_t b[sizeof(vhca_umad_msg) + sizeof(vhca_umad_agent)] = {};
      const vhca_umad_msg m{VHCA_UMAD_OP_REGISTER, agent};
      vhca_umad_agent a{};
      a.qpn = agent;
      std::memcpy(b, &m, sizeof m);
      std::memcpy(b + sizeof m, &a, sizeof a);
      EXPECT_EQ(send(fd, b, sizeof b, MSG_NOSIGNAL), ssize_t(sizeof b));
    }
    return fd;
  };
  int fd = open_port();
  int closed = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> b(sizeof(vhca_umad_msg) + sizeof(vhca_umad_hdr) + 256);
    for (auto& x : b) x = uint8_t(rng());
    vhca_umad_msg m{VHCA_UMAD_OP_SEND, uint32_t(rng() % 2)};
    if (rng() % 50 == 0) m.op = rng();  // now and then not even a send
    std::memcpy(b.data(), &m, sizeof m);
    auto* h = reinterpret_cast<vhca_umad_hdr*>(b.data() + sizeof m);
    h->timeout_ms = rng() % 3;
    uint8_t* mad = b.data() + sizeof m + sizeof *h;
    mad[0] = 1;
    mad[1] = std::array<uint8_t, 5>{0x01, 0x81, 0x04, 0x03, uint8_t(rng())}[rng() % 5];
    mad[7] = uint8_t(rng() % 70);  // hop counts, some too long
    b.resize(b.size() - rng() % 240);  // short MADs, some too short
    if (send(fd, b.data(), b.size(), MSG_NOSIGNAL) < 0) {
      ++closed;
      close(fd);
      fd = open_port();
    }
    char sink[1024];
    while (recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
    }
  }
  close(fd);
  EXPECT_GT(closed, 0);  // the malformed ones did cost their connection
  EXPECT_GE(mad_stats(d)["mad_rejected"].get<uint64_t>(), uint64_t(closed));
  const RunResult r = tool(d, {"smpquery", "-C", "vib0", "nodeinfo", "3"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(d.ctl({"status"}).exit_code == 0);
}

TEST(DiagsFatTree, IbnetdiscoverFindsEverySwitchAndVhca) {
  Fabricd d(read_file(Paths::source_dir() + "/configs/fat-tree.yaml"));
  const auto hcas = ctl_json(d, {"hca", "list"});
  const std::string first = hcas[0]["name"];
  const RunResult r = tool(d, {"ibnetdiscover", "-C", first});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  size_t switches = 0, cas = 0;
  for (size_t at = 0; (at = r.out.find("\nSwitch\t", at)) != std::string::npos; ++at) ++switches;
  for (size_t at = 0; (at = r.out.find("\nCa\t", at)) != std::string::npos; ++at) ++cas;
  EXPECT_EQ(cas, hcas.size());
  const auto topo = ctl_json(d, {"topology", "show"});
  EXPECT_EQ(switches, topo["fabrics"][0]["switches"].size()) << topo.dump().substr(0, 400);
  for (const auto& h : hcas)
    EXPECT_NE(r.out.find("\"H-" + hex_guid(std::stoull(h["node_guid"].get<std::string>(), nullptr, 16)) + "\""),
              std::string::npos)
        << h["name"];
}

// The SM and SA live on spine0, behind every host's leaf: LID-routed MADs get
// there only if each LFT routes the switches' own LIDs, as opensm's do.
TEST(DiagsFatTree, TheSmAndSwitchesAnswerFromBehindOtherSwitches) {
  Fabricd d(read_file(Paths::source_dir() + "/configs/fat-tree.yaml"));
  const RunResult sm = tool(d, {"sminfo", "-C", "vib15"});
  ASSERT_EQ(sm.exit_code, 0) << sm.describe();
  const size_t at = sm.out.find("sm lid ");
  ASSERT_NE(at, std::string::npos) << sm.out;
  const std::string sm_lid = std::to_string(std::stoul(sm.out.substr(at + 7)));
  const RunResult sa = tool(d, {"saquery", "-C", "vib15", "-N"});
  ASSERT_EQ(sa.exit_code, 0) << sa.describe();
  EXPECT_NE(sa.out.find("NodeRecord"), std::string::npos);
  const RunResult pma = tool(d, {"perfquery", "-C", "vib0", sm_lid, "1"});
  EXPECT_EQ(pma.exit_code, 0) << pma.describe();
  // The SM's switch routes its own LID to port 0 and every leaf's elsewhere.
  const RunResult lft = tool(d, {"ibroute", "-C", "vib0", sm_lid});
  ASSERT_EQ(lft.exit_code, 0) << lft.describe();
  EXPECT_NE(lft.out.find(" 000 : (Switch portguid"), std::string::npos) << lft.out;
  for (const char* leaf : {"'leaf0'", "'leaf1'", "'leaf2'", "'leaf3'"}) EXPECT_NE(lft.out.find(leaf), std::string::npos) << lft.out;
}

}  // namespace
}  // namespace vf::test
