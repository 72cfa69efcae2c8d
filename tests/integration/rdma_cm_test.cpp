// Unmodified Debian rdmacm-utils and perftest -R on a real fabricd: librdmacm
// opens /dev/infiniband/rdma_cm through the preload shim, fabricd's
// connection manager resolves the vHCAs' IP addresses (RoCE's, and the
// IPoIB-style ones the default config gives the IB HCAs), asks the SA for IB
// routes, and the two ends' CM agents connect the apps' QPs. What the apps
// see must be what a real stack gives them: data through, the events a peer
// that goes away causes, REJECTED for a port nobody listens on, ADDR_ERROR
// for an address nobody has.
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
#include <tuple>

#include "device/abi/vhca_ucma.h"
#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

struct Pair {
  RunResult server, client;
  std::string describe() const { return "client: " + client.describe() + "\nserver: " + server.describe(); }
};

class RdmaCm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static Fabricd& d() { return *daemon_; }

  static nlohmann::json ctl_json(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    const RunResult r = d().ctl(args);
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  // Waits until some id listens (the server is up), as a human would.
  static bool listening(int port) {
    for (int i = 0; i < 200; ++i) {
      for (const auto& id : ctl_json({"cm", "list"}))
        if (id.value("state", "") == "LISTEN" && id.value("src_addr", "").ends_with(":" + std::to_string(port)))
          return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  static Pair pair(std::vector<std::string> server, std::vector<std::string> client, int port,
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

  static size_t ids() { return ctl_json({"cm", "list"}).size(); }

  static Fabricd* daemon_;
};
Fabricd* RdmaCm::daemon_ = nullptr;

TEST_F(RdmaCm, RpingValidatesOneHundredPingsOverRoceV2AndTheHandshakeIsCounted) {
  const auto before = cm_stats("vroce0");
  const Pair p = pair({"rping", "-s", "-a", "198.18.0.2", "-p", "7401", "-C", "100", "-V"},
                      {"rping", "-c", "-a", "198.18.0.2", "-I", "198.18.0.1", "-p", "7401", "-C", "100", "-V"}, 7401);
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  EXPECT_EQ(p.server.exit_code, 0) << p.describe();
  const auto after = cm_stats("vroce0");
  // The client's port: one REQ out, one REP in, one RTU out, and its DREQ
  // answered by the server's DREP (rping's client disconnects first).
  EXPECT_EQ(after["cm_req_sent"].get<uint64_t>() - before["cm_req_sent"].get<uint64_t>(), 1u);
  EXPECT_EQ(after["cm_rep_received"].get<uint64_t>() - before["cm_rep_received"].get<uint64_t>(), 1u);
  EXPECT_EQ(after["cm_rtu_sent"].get<uint64_t>() - before["cm_rtu_sent"].get<uint64_t>(), 1u);
  EXPECT_EQ(after["cm_dreq_sent"].get<uint64_t>() - before["cm_dreq_sent"].get<uint64_t>(), 1u);
  EXPECT_EQ(after["cm_drep_received"].get<uint64_t>() - before["cm_drep_received"].get<uint64_t>(), 1u);
  EXPECT_EQ(ids(), 0u) << "every id went with its process";
}

TEST_F(RdmaCm, RpingValidatesOverInfiniBandWithTheSasRoute) {
  const Pair p = pair({"rping", "-s", "-a", "198.18.0.102", "-p", "7402", "-C", "100", "-V"},
                      {"rping", "-c", "-a", "198.18.0.102", "-I", "198.18.0.101", "-p", "7402", "-C", "100", "-V"}, 7402);
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  EXPECT_EQ(p.server.exit_code, 0) << p.describe();
  EXPECT_GE(cm_stats("vib1")["cm_req_received"].get<uint64_t>(), 1u);
}

TEST_F(RdmaCm, UcmatoseRunsFourConnectionsOverInfiniBand) {
  const Pair p = pair({"ucmatose", "-b", "198.18.0.102", "-p", "7403", "-c", "4", "-C", "20"},
                      {"ucmatose", "-s", "198.18.0.102", "-b", "198.18.0.101", "-p", "7403", "-c", "4", "-C", "20"}, 7403);
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  EXPECT_EQ(p.server.exit_code, 0) << p.describe();
  EXPECT_NE(p.client.out.find("test complete"), std::string::npos) << p.describe();
}

TEST_F(RdmaCm, UdaddyResolvesTheServiceWithSidrOnBothFabrics) {
  // udaddy always uses port 7174.
  for (const auto& [srv, cli] : {std::pair{"198.18.0.2", "198.18.0.1"}, std::pair{"198.18.0.102", "198.18.0.101"}}) {
    const Pair p = pair({"udaddy", "-b", srv}, {"udaddy", "-s", srv, "-b", cli}, 7174);
    EXPECT_EQ(p.client.exit_code, 0) << srv << "\n" << p.describe();
    EXPECT_EQ(p.server.exit_code, 0) << srv << "\n" << p.describe();
    EXPECT_NE(p.client.out.find("data transfers complete"), std::string::npos) << p.describe();
  }
  EXPECT_GE(cm_stats("vroce0")["cm_sidr_req_sent"].get<uint64_t>(), 1u);
  EXPECT_GE(cm_stats("vib1")["cm_sidr_rep_sent"].get<uint64_t>(), 1u);
}

TEST_F(RdmaCm, RdmaServerAndClientUseTheSyncApiOnOneHost) {
  // librdmacm's synchronous endpoints (rdma_create_ep, rdma_get_request,
  // which migrates each request to a channel of its own). rdma_client names
  // no source: the address is this host's own, reached on its own port.
  const Pair p = pair({"rdma_server", "-p", "7406"}, {"rdma_client", "-s", "198.18.0.101", "-p", "7406"}, 7406);
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  EXPECT_EQ(p.server.exit_code, 0) << p.describe();
  EXPECT_NE(p.server.out.find("rdma_server: end 0"), std::string::npos) << p.describe();
}

TEST_F(RdmaCm, RstreamMovesDataOverRsocketsOnInfiniBand) {
  const Pair p = pair({"rstream", "-b", "198.18.0.102", "-p", "7408", "-S", "4096", "-C", "200"},
                      {"rstream", "-s", "198.18.0.102", "-b", "198.18.0.101", "-p", "7408", "-S", "4096", "-C", "200"},
                      7408);
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  EXPECT_EQ(p.server.exit_code, 0) << p.describe();
  EXPECT_NE(p.client.out.find("4k"), std::string::npos) << p.describe();
}

TEST_F(RdmaCm, PerftestConnectsWithRdmaCmOnBothFabrics) {
  struct Case {
    const char* tool;
    const char* server_dev;
    const char* client_dev;
    const char* dst;
    const char* src;
  };
  int port = 7410;
  for (const Case& c : {Case{"ib_write_bw", "vroce1", "vroce0", "198.18.0.2", "198.18.0.1"},
                        Case{"ib_write_bw", "vib1", "vib0", "198.18.0.102", "198.18.0.101"},
                        Case{"ib_read_bw", "vib1", "vib0", "198.18.0.102", "198.18.0.101"},
                        Case{"ib_read_bw", "vroce1", "vroce0", "198.18.0.2", "198.18.0.1"},
                        Case{"ib_send_lat", "vib1", "vib0", "198.18.0.102", "198.18.0.101"},
                        Case{"ib_send_lat", "vroce1", "vroce0", "198.18.0.2", "198.18.0.1"}}) {
    ++port;
    const std::string ps = std::to_string(port);
    const Pair p = pair({c.tool, "-R", "-d", c.server_dev, "-p", ps, "-n", "200"},
                        {c.tool, "-R", "-d", c.client_dev, "-p", ps, "-n", "200", "--source_ip", c.src, c.dst}, port);
    EXPECT_EQ(p.client.exit_code, 0) << c.tool << " " << c.dst << "\n" << p.describe();
    EXPECT_EQ(p.server.exit_code, 0) << c.tool << " " << c.dst << "\n" << p.describe();
  }
}

// The CM messages are MADs on QP1 that cross the fabric: a capture of the
// client's link has them, and Wireshark (which nobody here wrote) reads them
// as the IBA's CM messages with rdma_cm's IP service ID.
TEST_F(RdmaCm, ACaptureShowsTheHandshakeAsCmMadsThatWiresharkDecodes) {
  for (const auto& [port, srv, cli, tcp] : {std::tuple{"vib0", "198.18.0.102", "198.18.0.101", "7420"},
                                             std::tuple{"vroce0", "198.18.0.2", "198.18.0.1", "7421"}}) {
    const std::string file = d().runtime_dir() + "/../cm-" + port + ".pcapng";
    Process cap({Paths::fabricctl(), "--runtime-dir", d().runtime_dir(), "capture", port, "-w", file}, Env{});
    for (int i = 0; i < 100 && cap.err_so_far().find("capturing on") == std::string::npos; ++i)
      std::this_thread::sleep_for(50ms);
    const Pair p = pair({"rping", "-s", "-a", srv, "-p", tcp, "-C", "3"},
                        {"rping", "-c", "-a", srv, "-I", cli, "-p", tcp, "-C", "3"}, std::stoi(tcp));
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
      EXPECT_NE(found, std::string::npos) << port << ": " << msg << " not in order in:\n" << t.out;
      if (found != std::string::npos) at = found;
    }
    const RunResult v = run({"tshark", "-r", file, "-Y", "infiniband.mad", "-V"}, Env{}, 60s);
    EXPECT_NE(v.out.find("IP CM ServiceID"), std::string::npos) << v.out.substr(0, 4000);
  }
}

TEST_F(RdmaCm, ConnectingToAPortNobodyListensOnIsRejectedAsInvalidServiceId) {
  const RunResult r =
      run({"rping", "-c", "-a", "198.18.0.2", "-I", "198.18.0.1", "-p", "7499", "-C", "1"}, d().app_env(), 30s);
  EXPECT_NE(r.exit_code, 0) << r.describe();
  // IBA 12.6.7.2: REJ reason 8, Invalid Service ID -- what a host without
  // the listener answers.
  EXPECT_NE((r.out + r.err).find("RDMA_CM_EVENT_REJECTED, error 8"), std::string::npos) << r.describe();
  EXPECT_GE(cm_stats("vroce1")["cm_rej_sent"].get<uint64_t>(), 1u);
}

TEST_F(RdmaCm, AnAddressNobodyHasFailsResolutionAfterTheAppsTimeout) {
  // rping asks for 2000 ms; ARP on the subnet gets no answer.
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r =
      run({"rping", "-c", "-a", "198.18.0.77", "-I", "198.18.0.1", "-p", "7498", "-C", "1"}, d().app_env(), 30s);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(r.exit_code, 0) << r.describe();
  EXPECT_NE((r.out + r.err).find("RDMA_CM_EVENT_ADDR_ERROR, error -110"), std::string::npos) << r.describe();
  EXPECT_GE(took, 1900ms);
}

TEST_F(RdmaCm, AServerKilledMidConnectionDisconnectsItsPeer) {
  Process srv({"rping", "-s", "-a", "198.18.0.102", "-p", "7407", "-C", "1000000"}, d().app_env());
  ASSERT_TRUE(listening(7407));
  Process cli({"rping", "-c", "-a", "198.18.0.102", "-I", "198.18.0.101", "-p", "7407", "-C", "1000000"}, d().app_env());
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
  for (int i = 0; i < 100 && ids() != 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ids(), 0u) << "ids left behind:\n" << d().ctl({"cm", "list"}).out;
}

// A hostile local user on the rdma_cm socket (open to everyone, as the
// kernel's device is): garbage before the handshake, then random commands
// on a real channel, then a flood of channels. fabricd refuses or drops
// each and keeps serving rping.
TEST_F(RdmaCm, RandomBytesOnTheRdmaCmSocketDoNotHurtFabricd) {
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
  const Pair p = pair({"rping", "-s", "-a", "198.18.0.2", "-p", "7430", "-C", "10", "-V"},
                      {"rping", "-c", "-a", "198.18.0.2", "-I", "198.18.0.1", "-p", "7430", "-C", "10", "-V"}, 7430);
  EXPECT_EQ(p.client.exit_code, 0) << p.describe();
  EXPECT_EQ(p.server.exit_code, 0) << p.describe();
  for (int i = 0; i < 100 && ids() != 0; ++i) std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ids(), 0u) << "the hostile channel's ids went with it:\n" << d().ctl({"cm", "list"}).out;
}

// fabricd stopping is the device going away: each id on a vHCA gets
// RDMA_CM_EVENT_DEVICE_REMOVAL, which rping reports and ends on.
TEST(RdmaCmDaemon, StoppingFabricdRemovesTheDeviceUnderItsIds) {
  Fabricd d(default_config());
  Process srv({"rping", "-s", "-a", "198.18.0.2", "-p", "7440"}, d.app_env());
  bool listening = false;
  for (int i = 0; i < 200 && !listening; ++i) {
    listening = d.ctl({"cm", "list"}).out.find("LISTEN") != std::string::npos;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(listening);
  d.stop();
  const RunResult r = srv.wait(20s);
  EXPECT_FALSE(r.timed_out) << r.describe();
  EXPECT_NE((r.out + r.err).find("cma detected device removal"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace vf::test
