// The umad socket side of fabricd, driven as the preload shim drives it:
// register an agent, send MADs, read what comes back -- the response with
// the agent's TID, or the request itself with ETIMEDOUT -- and hostile
// messages that cost their sender the connection and nobody else anything.
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "daemon/umad/umad_server.hpp"
#include "device/abi/vhca_umad.h"

namespace vf {
namespace {
namespace asio = boost::asio;

// Answers every request at once with a GetResp from LID 7, except MADs of
// attribute 0x7777, which get no answer.
class EchoBackend : public UmadBackend {
 public:
  void send(uint32_t qpn, uint16_t dlid, const mad::Mad& m, std::function<void(UmadResult)> done) override {
    seen.push_back({qpn, dlid, m});
    if (mad::attr_id(m) == 0x7777) return done({});
    mad::Mad r = m;
    r[3] = mad::kGetResp;
    done(UmadResult{r, 7, {}});
  }
  struct Sent {
    uint32_t qpn;
    uint16_t dlid;
    mad::Mad m;
  };
  std::vector<Sent> seen;
};

class UmadServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("umad_test." + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    server_ = std::make_unique<UmadServer>(io_, (dir_ / "umad").string(), backend_);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  int connect_port() {
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, server_->path().c_str());
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  }
  void send_msg(int fd, uint32_t op, uint32_t agent, const void* body, size_t len) {
    std::vector<uint8_t> b(sizeof(vhca_umad_msg) + len);
    vhca_umad_msg m{op, agent};
    std::memcpy(b.data(), &m, sizeof(m));
    if (len) std::memcpy(b.data() + sizeof(m), body, len);
    ASSERT_EQ(::send(fd, b.data(), b.size(), 0), ssize_t(b.size()));
  }
  void register_agent(int fd, uint32_t id, uint32_t qpn, uint8_t cls) {
    vhca_umad_agent a{};
    a.qpn = qpn;
    a.mgmt_class = cls;
    a.mgmt_class_version = 1;
    send_msg(fd, VHCA_UMAD_OP_REGISTER, id, &a, sizeof(a));
  }
  void send_mad(int fd, uint32_t agent, uint16_t attr, uint32_t timeout_ms, uint8_t meth = mad::kGet,
                uint16_t dlid = 3) {
    std::vector<uint8_t> b(sizeof(vhca_umad_hdr) + mad::kMadSize);
    vhca_umad_hdr h{};
    h.id = agent;
    h.timeout_ms = timeout_ms;
    h.lid = htons(dlid);
    h.qpn = htonl(1);
    std::memcpy(b.data(), &h, sizeof(h));
    uint8_t* m = b.data() + sizeof(h);
    m[0] = 1, m[1] = mad::kClassPerf, m[2] = 1, m[3] = meth;
    mad::put_be(m + 8, 8, 0xAAAAAAAA00000042ULL);
    mad::put_be(m + 16, 2, attr);
    send_msg(fd, VHCA_UMAD_OP_SEND, agent, b.data(), b.size());
  }
  // Runs the io_context until `fd` has a message or `ms` passed.
  std::optional<std::vector<uint8_t>> receive(int fd, int ms) {
    for (int waited = 0; waited < ms; waited += 5) {
      io_.restart();
      io_.run_for(std::chrono::milliseconds(5));
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 0) == 1) {
        std::vector<uint8_t> b(4096);
        const ssize_t n = recv(fd, b.data(), b.size(), MSG_DONTWAIT);
        if (n <= 0) return std::vector<uint8_t>{};  // closed
        b.resize(size_t(n));
        return b;
      }
    }
    return std::nullopt;
  }
  static vhca_umad_hdr hdr_of(const std::vector<uint8_t>& b) {
    vhca_umad_hdr h{};
    std::memcpy(&h, b.data(), sizeof(h));
    return h;
  }

  asio::io_context io_;
  std::filesystem::path dir_;
  EchoBackend backend_;
  std::unique_ptr<UmadServer> server_;
};

TEST_F(UmadServerTest, AResponseReachesItsAgentWithTheAgentsTid) {
  const int fd = connect_port();
  register_agent(fd, 0, 1, mad::kClassPerf);
  register_agent(fd, 5, 1, mad::kClassPerf);
  send_mad(fd, 5, mad::kAttrPortCounters, 1000);
  const auto got = receive(fd, 2000);
  ASSERT_TRUE(got && got->size() == sizeof(vhca_umad_hdr) + mad::kMadSize);
  const vhca_umad_hdr h = hdr_of(*got);
  EXPECT_EQ(h.id, 5u);
  EXPECT_EQ(h.status, 0u);
  EXPECT_EQ(ntohs(h.lid), 7);
  EXPECT_EQ(ntohl(h.qpn), 1u);
  EXPECT_EQ(ntohl(h.qkey), 0x80010000u);
  const uint8_t* m = got->data() + sizeof(h);
  EXPECT_EQ(m[3], mad::kGetResp);
  // The low half is the app's, the high half the agent's (not the app's 0xAAAAAAAA).
  EXPECT_EQ(mad::get_be(m + 8, 8) & 0xFFFFFFFFu, 0x42u);
  EXPECT_NE(mad::get_be(m + 8, 8) >> 32, 0xAAAAAAAAu);
  ASSERT_EQ(backend_.seen.size(), 1u);
  EXPECT_EQ(backend_.seen[0].qpn, 1u);
  EXPECT_EQ(backend_.seen[0].dlid, 3);
  EXPECT_EQ(server_->stats().answered, 1u);
  close(fd);
}

TEST_F(UmadServerTest, ARequestNobodyAnswersComesBackWithEtimedout) {
  const int fd = connect_port();
  register_agent(fd, 0, 1, mad::kClassPerf);
  send_mad(fd, 0, 0x7777, 50);
  const auto got = receive(fd, 3000);
  ASSERT_TRUE(got && !got->empty());
  const vhca_umad_hdr h = hdr_of(*got);
  EXPECT_EQ(h.status, uint32_t(ETIMEDOUT));
  EXPECT_EQ(got->data()[sizeof(h) + 3], mad::kGet);  // the request itself
  EXPECT_EQ(server_->stats().timeouts, 1u);
  // Without a timeout nothing comes back at all.
  send_mad(fd, 0, 0x7777, 0);
  EXPECT_FALSE(receive(fd, 200));
  close(fd);
}

TEST_F(UmadServerTest, ResponsesAndSendsFindNoAgentAndExpectNoAnswer) {
  const int fd = connect_port();
  register_agent(fd, 0, 1, mad::kClassPerf);
  send_mad(fd, 0, mad::kAttrPortCounters, 1000, mad::kGetResp);
  send_mad(fd, 0, mad::kAttrPortCounters, 1000, mad::kTrapRepress);
  EXPECT_FALSE(receive(fd, 200));
  EXPECT_TRUE(backend_.seen.empty());  // nothing here takes unsolicited MADs: not worth the dataplane's time
  EXPECT_EQ(server_->stats().no_agent, 2u);
  // A request without a timeout does its work, but its response is dropped.
  send_mad(fd, 0, mad::kAttrPortCounters, 0);
  EXPECT_FALSE(receive(fd, 200));
  EXPECT_EQ(backend_.seen.size(), 1u);
  close(fd);
}

TEST_F(UmadServerTest, HostileMessagesCloseOnlyTheirOwnConnection) {
  const int good = connect_port();
  register_agent(good, 0, 1, mad::kClassPerf);
  struct Bad {
    const char* what;
    std::function<void(int)> send;
  };
  const std::vector<Bad> bad = {
      {"too short", [&](int fd) { ASSERT_EQ(::send(fd, "x", 1, 0), 1); }},
      {"unknown op", [&](int fd) { send_msg(fd, 99, 0, nullptr, 0); }},
      {"agent out of range", [&](int fd) { send_msg(fd, VHCA_UMAD_OP_UNREGISTER, 32, nullptr, 0); }},
      {"send on no agent", [&](int fd) { send_mad(fd, 3, mad::kAttrPortCounters, 10); }},
      {"unregister twice", [&](int fd) { send_msg(fd, VHCA_UMAD_OP_UNREGISTER, 1, nullptr, 0); }},
      {"register twice", [&](int fd) { register_agent(fd, 0, 1, 4); register_agent(fd, 0, 1, 4); }},
      {"qpn 2", [&](int fd) { register_agent(fd, 0, 2, 4); }},
      {"short MAD", [&](int fd) {
         register_agent(fd, 0, 1, 4);
         std::vector<uint8_t> b(sizeof(vhca_umad_hdr) + 10);
         send_msg(fd, VHCA_UMAD_OP_SEND, 0, b.data(), b.size());
       }},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.what);
    const int fd = connect_port();
    b.send(fd);
    const auto got = receive(fd, 2000);
    ASSERT_TRUE(got);
    EXPECT_TRUE(got->empty());  // EOF: fabricd closed it
    close(fd);
  }
  EXPECT_GE(server_->stats().rejected, bad.size());
  send_mad(good, 0, mad::kAttrPortCounters, 1000);
  const auto got = receive(good, 2000);
  ASSERT_TRUE(got && !got->empty());
  EXPECT_EQ(hdr_of(*got).status, 0u);
  close(good);
}

// A backend that holds every MAD until told to answer (the lcore is busy).
class HoldingBackend : public UmadBackend {
 public:
  void send(uint32_t, uint16_t, const mad::Mad& m, std::function<void(UmadResult)> done) override {
    held.emplace_back(m, std::move(done));
  }
  std::vector<std::pair<mad::Mad, std::function<void(UmadResult)>>> held;
};

TEST_F(UmadServerTest, AFloodOfRequestsIsBoundedAndTheRestComeBackAtOnce) {
  HoldingBackend hold;
  UmadServer server(io_, (dir_ / "umad2").string(), hold);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strcpy(a.sun_path, server.path().c_str());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  register_agent(fd, 0, 1, mad::kClassPerf);
  const size_t total = UmadServer::kMaxInFlightPerPort + 10;
  for (size_t i = 0; i < total; ++i) {
    std::vector<uint8_t> b(sizeof(vhca_umad_hdr) + mad::kMadSize);
    vhca_umad_hdr h{};
    h.timeout_ms = 60000;
    std::memcpy(b.data(), &h, sizeof(h));
    uint8_t* m = b.data() + sizeof(h);
    m[0] = 1, m[1] = 4, m[2] = 1, m[3] = mad::kGet;
    mad::put_be(m + 8, 8, i);
    send_msg(fd, VHCA_UMAD_OP_SEND, 0, b.data(), b.size());
  }
  // At most one port's share reaches the dataplane; the others come back at once.
  size_t returned = 0;
  while (auto got = receive(fd, 300)) {
    ASSERT_FALSE(got->empty());
    EXPECT_EQ(hdr_of(*got).status, uint32_t(ETIMEDOUT));
    ++returned;
  }
  EXPECT_EQ(hold.held.size(), UmadServer::kMaxInFlightPerPort);
  EXPECT_EQ(returned, total - UmadServer::kMaxInFlightPerPort);
  EXPECT_EQ(server.stats().overflow, returned);
  // Another app's port still gets through while the first one floods.
  int other = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  ASSERT_EQ(connect(other, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  register_agent(other, 0, 1, mad::kClassPerf);
  send_mad(other, 0, mad::kAttrPortCounters, 60000);
  EXPECT_FALSE(receive(other, 100));
  EXPECT_EQ(hold.held.size(), UmadServer::kMaxInFlightPerPort + 1);
  close(other);
  // Once the dataplane answers, there is room again.
  for (auto& [m, done] : hold.held) done({});
  hold.held.clear();
  io_.restart();
  io_.run_for(std::chrono::milliseconds(20));
  send_mad(fd, 0, mad::kAttrPortCounters, 60000);
  io_.restart();
  io_.run_for(std::chrono::milliseconds(20));
  EXPECT_EQ(hold.held.size(), 1u);  // the first port's share is free again
  close(fd);
}

TEST_F(UmadServerTest, DestroyingTheServerWithOpenPortsIsClean) {
  const int fd = connect_port();
  register_agent(fd, 0, 1, mad::kClassPerf);
  send_mad(fd, 0, 0x7777, 50);  // a timer pending
  io_.restart();
  io_.run_for(std::chrono::milliseconds(10));
  server_.reset();
  io_.restart();
  io_.run_for(std::chrono::milliseconds(100));  // the aborted handlers run after the server is gone
  char b[8];
  EXPECT_EQ(recv(fd, b, sizeof b, MSG_DONTWAIT), 0);  // the app sees its port close
  close(fd);
}

}  // namespace
}  // namespace vf
