// Unmodified Debian rdmacm-utils and perftest -R on a real fabricd: librdmacm
// opens /dev/infiniband/rdma_cm through the preload shim, fabricd's
// connection manager resolves the vHCAs' IP addresses (RoCE's, and the
// IPoIB-style ones the default config gives the IB HCAs), asks the SA for IB
// routes, and the two ends' CM agents connect the apps' QPs. What the apps
// see must be what a real stack gives them: data through, the events a peer
// that goes away causes, REJECTED for a port nobody listens on, ADDR_ERROR
// for an address nobody has. Every test runs on both fabrics: the RoCE
// vHCAs' addresses and the IB vHCAs' IPoIB-style ones.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>

#include "device/abi/vhca_ucma.h"
#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

struct Pair {
  RunResult server, client;
  std::string describe() const { return "client: " + client.describe() + "\nserver: " + server.describe(); }
};

// The two ends of each test on one fabric: passive (server) and active
// (client) vHCAs and their addresses; ports apart so the instances never meet.
struct CmFabric {
  const char* name;
  const char* server_ip;
  const char* client_ip;
  const char* server_hca;
  const char* client_hca;
  int port_base;
  std::string port(int n) const { return std::to_string(port_base + n); }
};
const CmFabric kRoce{"RoceV2", "198.18.0.2", "198.18.0.1", "vroce1", "vroce0", 7400};
const CmFabric kIb{"InfiniBand", "198.18.0.102", "198.18.0.101", "vib1", "vib0", 7600};

void PrintTo(const CmFabric& f, std::ostream* os) { *os << f.client_ip << " -> " << f.server_ip; }

class RdmaCm : public ::testing::TestWithParam<CmFabric> {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static Fabricd& d() { return *daemon_; }
  static const CmFabric& f() { return GetParam(); }

  static nlohmann::json ctl_json(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    const RunResult r = d().ctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  // Waits until some id listens (the server is up), as a human would.
  static bool listening(const std::string& port) {
    for (int i = 0; i < 200; ++i) {
      for (const auto& id : ctl_json({"cm", "list"}))
        if (id.value("state", "") == "LISTEN" && id.value("src_addr", "").ends_with(":" + port)) return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  static Pair pair(std::vector<std::string> server, std::vector<std::string> client, const std::string& port,
                   std::chrono::seconds timeout = 60s) {
    Process srv(server, d().app_env());
    Pair r;
    if (!listening(port)) {
      r.server = srv.wait(1ms);
      ADD_FAILURE() << "the server never listened: " << r.server.describe();
      return r;
    }
    r.client = run(client, d().app_env(), timeout);
    r.server = srv.wait(timeout);
    return r;
  }

  // vHCA `hca`'s CM counters (fabricctl hca list: "cm").
  static nlohmann::json cm_stats(const std::string& hca) {
    for (const auto& h : ctl_json({"hca", "list"}))
      if (h.value("name", "") == hca) return h["cm"];
    return nullptr;
  }
  static uint64_t cm_count(const std::string& hca, const char* counter) {
    return cm_stats(hca)[counter].get<uint64_t>();
  }

  static size_t ids() { return ctl_json({"cm", "list"}).size(); }
  static void expect_no_ids_left() {
    for (int i = 0; i < 100 && ids() != 0; ++i) std::this_thread::sleep_for(50ms);
    EXPECT_EQ(ids(), 0u) << "ids left behind:\n" << d().ctl({"cm", "list"}).out;
  }

  static Fabricd* daemon_;
};
Fabricd* RdmaCm::daemon_ = nullptr;

void expect_both_pass(const Pair& p) {
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  EXPECT_EQ(p.server.exit_code, 0) << p.describe();
}

TEST_P(RdmaCm, RpingValidatesOneHundredPingsAndTheHandshakeIsCounted) {
  const auto before = cm_stats(f().client_hca);
  const std::string port = f().port(1);
  const Pair p = pair({"rping", "-s", "-a", f().server_ip, "-p", port, "-C", "100", "-V"},
                      {"rping", "-c", "-a", f().server_ip, "-I", f().client_ip, "-p", port, "-C", "100", "-V"}, port);
  expect_both_pass(p);
  const auto after = cm_stats(f().client_hca);
  // The client's port: one REQ out, one REP in, one RTU out, and its DREQ
  // answered by the server's DREP (rping's client disconnects first).
  for (const char* c : {"cm_req_sent", "cm_rep_received", "cm_rtu_sent", "cm_dreq_sent", "cm_drep_received"})
    EXPECT_EQ(after[c].get<uint64_t>() - before[c].get<uint64_t>(), 1u) << c;
  EXPECT_GE(cm_count(f().server_hca, "cm_req_received"), 1u);
  expect_no_ids_left();
}

// A server bound to no address listens on every vHCA (rping -s without -a
// binds 0.0.0.0); the request names the fabric by its destination address.
TEST_P(RdmaCm, RpingServerListeningOnTheWildcardTakesTheRequest) {
  const std::string port = f().port(2);
  const uint64_t before = cm_count(f().server_hca, "cm_req_received");
  const Pair p = pair({"rping", "-s", "-p", port, "-C", "20", "-V"},
                      {"rping", "-c", "-a", f().server_ip, "-I", f().client_ip, "-p", port, "-C", "20", "-V"}, port);
  expect_both_pass(p);
  EXPECT_EQ(cm_count(f().server_hca, "cm_req_received") - before, 1u);
}

TEST_P(RdmaCm, UcmatoseRunsFourRcConnections) {
  const std::string port = f().port(3);
  const Pair p = pair({"ucmatose", "-b", f().server_ip, "-p", port, "-c", "4", "-C", "20"},
                      {"ucmatose", "-s", f().server_ip, "-b", f().client_ip, "-p", port, "-c", "4", "-C", "20"}, port);
  expect_both_pass(p);
  EXPECT_NE(p.client.out.find("test complete"), std::string::npos) << p.describe();
}

TEST_P(RdmaCm, UcmatoseServerOnTheWildcardWithAnUnboundClient) {
  // Neither end names its own address: the route picks the client's port.
  const std::string port = f().port(4);
  const Pair p = pair({"ucmatose", "-p", port, "-c", "2", "-C", "10"},
                      {"ucmatose", "-s", f().server_ip, "-p", port, "-c", "2", "-C", "10"}, port);
  expect_both_pass(p);
  EXPECT_NE(p.client.out.find("test complete"), std::string::npos) << p.describe();
}

TEST_P(RdmaCm, UdaddyResolvesTheServiceWithSidrAndSendsDatagrams) {
  // udaddy always uses port 7174.
  const uint64_t sent = cm_count(f().client_hca, "cm_sidr_req_sent");
  const uint64_t answered = cm_count(f().server_hca, "cm_sidr_rep_sent");
  const Pair p = pair({"udaddy", "-b", f().server_ip}, {"udaddy", "-s", f().server_ip, "-b", f().client_ip}, "7174");
  expect_both_pass(p);
  EXPECT_NE(p.client.out.find("data transfers complete"), std::string::npos) << p.describe();
  EXPECT_GE(cm_count(f().client_hca, "cm_sidr_req_sent") - sent, 1u);
  EXPECT_GE(cm_count(f().server_hca, "cm_sidr_rep_sent") - answered, 1u);
}

TEST_P(RdmaCm, RdmaServerAndClientUseTheSyncApiOnOneHost) {
  // librdmacm's synchronous endpoints (rdma_create_ep, rdma_get_request,
  // which migrates each request to a channel of its own). The server listens
  // on the wildcard; the client names no source: the address is this host's
  // own, reached on its own port.
  const std::string port = f().port(6);
  const Pair p = pair({"rdma_server", "-p", port}, {"rdma_client", "-s", f().client_ip, "-p", port}, port);
  expect_both_pass(p);
  EXPECT_NE(p.server.out.find("rdma_server: end 0"), std::string::npos) << p.describe();
}

// rsockets carries its connection data (credits, queue sizes, the target
// iomap) as the REQ's and REP's private data: it works only if that arrives.
TEST_P(RdmaCm, RstreamMovesDataOverRsocketsWithPrivateData) {
  const std::string port = f().port(8);
  const Pair p = pair({"rstream", "-b", f().server_ip, "-p", port, "-S", "4096", "-C", "200"},
                      {"rstream", "-s", f().server_ip, "-b", f().client_ip, "-p", port, "-S", "4096", "-C", "200"}, port);
  expect_both_pass(p);
  EXPECT_NE(p.client.out.find("4k"), std::string::npos) << p.describe();
}

TEST_P(RdmaCm, PerftestConnectsWithRdmaCm) {
  int n = 10;
  for (const char* tool : {"ib_write_bw", "ib_read_bw", "ib_send_lat"}) {
    const std::string port = f().port(++n);
    const Pair p = pair({tool, "-R", "-d", f().server_hca, "-p", port, "-n", "200"},
                        {tool, "-R", "-d", f().client_hca, "-p", port, "-n", "200", "--source_ip", f().client_ip,
                         f().server_ip},
                        port);
    EXPECT_EQ(p.client.exit_code, 0) << tool << "\n" << p.describe();
    EXPECT_EQ(p.server.exit_code, 0) << tool << "\n" << p.describe();
  }
}

// The CM messages are MADs on QP1 that cross the fabric: a capture of the
// client's link has them, and Wireshark (which nobody here wrote) reads them
// as the IBA's CM messages with rdma_cm's IP service ID.
TEST_P(RdmaCm, ACaptureShowsTheHandshakeAsCmMadsThatWiresharkDecodes) {
  const std::string port = f().port(20);
  const std::string file = d().runtime_dir() + "/../cm-" + f().client_hca + ".pcapng";
  Process cap({Paths::fabricctl(), "--runtime-dir", d().runtime_dir(), "capture", f().client_hca, "-w", file}, Env{});
  for (int i = 0; i < 100 && cap.err_so_far().find("capturing on") == std::string::npos; ++i)
    std::this_thread::sleep_for(50ms);
  const Pair p = pair({"rping", "-s", "-a", f().server_ip, "-p", port, "-C", "3"},
                      {"rping", "-c", "-a", f().server_ip, "-I", f().client_ip, "-p", port, "-C", "3"}, port);
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  std::this_thread::sleep_for(200ms);  // the DREP crosses the link
  cap.signal(SIGINT);
  cap.wait(10s);
  const RunResult t = run({"tshark", "-r", file, "-Y", "infiniband.mad"}, Env{}, 60s);
  ASSERT_EQ(t.exit_code, 0) << t.describe();
  size_t at = 0;
  for (const char* msg : {"CM: ConnectRequest", "CM: ConnectReply", "CM: ReadyToUse", "CM: DisconnectRequest",
                          "CM: DisconnectReply"}) {
    const size_t found = t.out.find(msg, at);
    EXPECT_NE(found, std::string::npos) << msg << " not in order in:\n" << t.out;
    if (found != std::string::npos) at = found;
  }
  const RunResult v = run({"tshark", "-r", file, "-Y", "infiniband.mad", "-V"}, Env{}, 60s);
  EXPECT_NE(v.out.find("IP CM ServiceID"), std::string::npos) << v.out.substr(0, 4000);
}

TEST_P(RdmaCm, ConnectingToAPortNobodyListensOnIsRejectedAsInvalidServiceId) {
  const uint64_t before = cm_count(f().server_hca, "cm_rej_sent");
  const RunResult r = run({"rping", "-c", "-a", f().server_ip, "-I", f().client_ip, "-p", f().port(99), "-C", "1"},
                          d().app_env(), 30s);
  EXPECT_NE(r.exit_code, 0) << r.describe();
  // IBA 12.6.7.2: REJ reason 8, Invalid Service ID -- what a host without
  // the listener answers.
  EXPECT_NE((r.out + r.err).find("RDMA_CM_EVENT_REJECTED, error 8"), std::string::npos) << r.describe();
  EXPECT_EQ(cm_count(f().server_hca, "cm_rej_sent") - before, 1u);
}

TEST_P(RdmaCm, AnAddressNobodyHasFailsResolutionAfterTheAppsTimeout) {
  // rping asks for 2000 ms; ARP (IPoIB's on InfiniBand) gets no answer.
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run({"rping", "-c", "-a", "198.18.0.77", "-I", f().client_ip, "-p", f().port(98), "-C", "1"},
                          d().app_env(), 30s);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(r.exit_code, 0) << r.describe();
  EXPECT_NE((r.out + r.err).find("RDMA_CM_EVENT_ADDR_ERROR, error -110"), std::string::npos) << r.describe();
  EXPECT_GE(took, 1900ms);
}

TEST_P(RdmaCm, AServerKilledMidConnectionDisconnectsItsPeer) {
  const std::string port = f().port(7);
  Process srv({"rping", "-s", "-a", f().server_ip, "-p", port, "-C", "1000000"}, d().app_env());
  ASSERT_TRUE(listening(port)) << srv.wait(1ms).describe();
  Process cli({"rping", "-c", "-a", f().server_ip, "-I", f().client_ip, "-p", port, "-C", "1000000"}, d().app_env());
  bool established = false;
  for (int i = 0; i < 200 && !established; ++i) {
    for (const auto& id : ctl_json({"cm", "list"}))
      if (id.value("state", "") == "ESTABLISHED") established = true;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(established);
  srv.signal(SIGKILL);
  srv.wait(10s);
  // The dead server's ids disconnect theirs: the client gets DISCONNECTED
  // (or its QP errors first) and ends, rather than ping into the void.
  const RunResult c = cli.wait(30s);
  EXPECT_FALSE(c.timed_out) << c.describe();
  expect_no_ids_left();
}

// 127.0.0.1 is every host's: bound or resolved, it goes to the first RDMA
// device (the kernel's cma_bind_loopback; default.yaml's first is vib0) and
// the connection turns round inside it. libfabric's verbs provider binds
// "localhost" to pick a device when the app names no address.
TEST(RdmaCmLoopback, RpingOverTheLoopbackAddressUsesTheFirstDevice) {
  Fabricd d(default_config());
  const auto cm = [&](const char* counter) {
    const RunResult r = d.ctl({"--json", "hca", "list"});
    for (const auto& h : nlohmann::json::parse(r.out, nullptr, false))
      if (h.value("name", "") == "vib0") return h["cm"][counter].get<uint64_t>();
    return uint64_t(0);
  };
  Process srv({"rping", "-s", "-a", "127.0.0.1", "-p", "7450", "-C", "10", "-V"}, d.app_env());
  bool listening = false;
  for (int i = 0; i < 200 && !listening; ++i) {
    listening = d.ctl({"cm", "list"}).out.find("127.0.0.1:7450") != std::string::npos;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(listening) << srv.wait(1ms).describe() << d.ctl({"cm", "list"}).out;
  const RunResult c = run({"rping", "-c", "-a", "127.0.0.1", "-p", "7450", "-C", "10", "-V"}, d.app_env(), 30s);
  const RunResult s = srv.wait(30s);
  EXPECT_EQ(c.exit_code, 0) << c.describe() << s.describe();
  EXPECT_EQ(s.exit_code, 0) << s.describe();
  EXPECT_EQ(cm("cm_req_sent"), 1u);
  EXPECT_EQ(cm("cm_req_received"), 1u);
}

// A hostile local user on the rdma_cm socket (open to everyone, as the
// kernel's device is): garbage before the handshake, then random commands
// on a real channel, then a flood of channels. fabricd refuses or drops
// each and keeps serving rping.
TEST_P(RdmaCm, RandomBytesOnTheRdmaCmSocketDoNotHurtFabricd) {
  const std::string path = read_file(d().runtime_dir() + "/sys/class/misc/rdma_cm/vfabric_socket");
  const std::string sock = path.substr(0, path.find('\n'));
  const auto connect_to = [&] {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock.c_str());
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0) << std::strerror(errno);
    return fd;
  };
  std::mt19937 rng(42);
  // Not the handshake: the connection goes.
  for (int i = 0; i < 20; ++i) {
    const int fd = connect_to();
    std::vector<uint8_t> junk(1 + rng() % 1500);
    for (auto& b : junk) b = uint8_t(rng());
    (void)::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    ::close(fd);
  }
  // A channel, then random commands on it (headers that claim any size).
  const int fd = connect_to();
  const uint32_t open_op = VHCA_UCMA_OPEN;
  ASSERT_EQ(::send(fd, &open_op, sizeof(open_op), MSG_NOSIGNAL), ssize_t(sizeof(open_op)));
  char reply[64];
  ASSERT_GT(::recv(fd, reply, sizeof(reply), 0), 0);
  size_t answered = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> cmd(8 + rng() % 400);
    for (auto& b : cmd) b = uint8_t(rng());
    const uint32_t op = rng() % 24;
    std::memcpy(cmd.data(), &op, 4);
    if (::send(fd, cmd.data(), cmd.size(), MSG_NOSIGNAL) < 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) break;
    char buf[2048];
    if (::recv(fd, buf, sizeof(buf), 0) <= 0) break;
    ++answered;
  }
  EXPECT_EQ(answered, 2000u) << "every command gets its answer (most an errno)";
  ::close(fd);
  const std::string port = f().port(30);
  const Pair p = pair({"rping", "-s", "-a", f().server_ip, "-p", port, "-C", "10", "-V"},
                      {"rping", "-c", "-a", f().server_ip, "-I", f().client_ip, "-p", port, "-C", "10", "-V"}, port);
  expect_both_pass(p);
  expect_no_ids_left();
}

INSTANTIATE_TEST_SUITE_P(Fabrics, RdmaCm, ::testing::Values(kRoce, kIb),
                         [](const auto& p) { return std::string(p.param.name); });

// fabricd stopping is the device going away: each id on a vHCA gets
// RDMA_CM_EVENT_DEVICE_REMOVAL, which rping reports and ends on.
class RdmaCmDaemon : public ::testing::TestWithParam<CmFabric> {};

TEST_P(RdmaCmDaemon, StoppingFabricdRemovesTheDeviceUnderItsIds) {
  Fabricd d(default_config());
  Process srv({"rping", "-s", "-a", GetParam().server_ip, "-p", GetParam().port(40)}, d.app_env());
  bool listening = false;
  for (int i = 0; i < 200 && !listening; ++i) {
    listening = d.ctl({"cm", "list"}).out.find("LISTEN") != std::string::npos;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(listening) << srv.wait(1ms).describe();
  d.stop();
  const RunResult r = srv.wait(20s);
  EXPECT_FALSE(r.timed_out) << r.describe();
  EXPECT_NE((r.out + r.err).find("cma detected device removal"), std::string::npos) << r.describe();
}

INSTANTIATE_TEST_SUITE_P(Fabrics, RdmaCmDaemon, ::testing::Values(kRoce, kIb),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace vf::test
