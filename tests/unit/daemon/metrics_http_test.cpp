// fabricd's /metrics endpoint against raw sockets: what a scraper gets, and
// what a hostile or broken client gets (bad requests, big headers, other
// methods and paths, idle and surplus connections), with a canned collector.
#include "daemon/telemetry/metrics_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <cerrno>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

namespace vf {
namespace {
using namespace std::chrono_literals;
using tcp = boost::asio::ip::tcp;

class MetricsHttpTest : public ::testing::Test {
 protected:
  void start(MetricsHttp::Options opts = {}) {
    std::promise<uint16_t> port;
    thread_ = std::thread([&] {
      server_ = std::make_unique<MetricsHttp>(
          io_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0),
          [this](MetricsHttp::Done done) {
            ++scrapes_;
            if (busy_) return done(std::nullopt);
            // As fabricd does: the answer comes later, from another turn of the loop.
            boost::asio::post(io_, [done] { done(std::string("vfabric_up 1\n")); });
          },
          opts);
      port.set_value(server_->local_endpoint().port());
      io_.run();
      server_.reset();
    });
    port_ = port.get_future().get();
  }
  void TearDown() override {
    guard_.reset();
    boost::asio::post(io_, [this] {
      server_->stop();
      io_.stop();
    });
    if (thread_.joinable()) thread_.join();
  }

  int connect_client() const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port_);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    return fd;
  }
  // Everything the server sends until it closes or `quiet` passes without a byte.
  static std::string read_all(int fd, std::chrono::milliseconds quiet = 2000ms) {
    std::string out;
    char buf[4096];
    for (;;) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, int(quiet.count())) <= 0) break;
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, size_t(n));
    }
    return out;
  }
  // One whole response (headers, then Content-Length bytes), however slow.
  static std::string read_response(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
      const size_t end = out.find("\r\n\r\n");
      if (end != std::string::npos) {
        const size_t cl = out.find("Content-Length: ");
        const size_t len = cl == std::string::npos ? 0 : std::stoul(out.substr(cl + 16));
        if (out.size() >= end + 4 + len) return out;
      }
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 10'000) <= 0) return out;
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return out;
      out.append(buf, size_t(n));
    }
  }
  // True when the server closes the connection within `limit`.
  static bool closed_within(int fd, std::chrono::milliseconds limit) {
    char buf[256];
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, int(limit.count())) <= 0) return false;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    return n == 0 || (n < 0 && errno == ECONNRESET);
  }
  std::string exchange(const std::string& request, std::chrono::milliseconds quiet = 2000ms) const {
    const int fd = connect_client();
    EXPECT_EQ(::write(fd, request.data(), request.size()), ssize_t(request.size()));
    std::string out = read_all(fd, quiet);
    ::close(fd);
    return out;
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_{io_.get_executor()};
  std::unique_ptr<MetricsHttp> server_;
  std::thread thread_;
  uint16_t port_ = 0;
  std::atomic<int> scrapes_{0};
  std::atomic<bool> busy_{false};
};

TEST_F(MetricsHttpTest, GetMetricsIsTheExpositionText) {
  start();
  const std::string r = exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("Content-Length: 13\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.size() - 13), "vfabric_up 1\n");
  EXPECT_EQ(scrapes_, 1);
  // A query string is allowed (Prometheus may add one); HEAD has the headers only.
  EXPECT_EQ(exchange("GET /metrics?x=1 HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 200 OK\r\n", 0), 0u);
  const std::string head = exchange("HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_EQ(head.substr(head.size() - 4), "\r\n\r\n") << "no body";
}

TEST_F(MetricsHttpTest, KeepAliveServesScrapeAfterScrapeOnOneConnection) {
  start();
  const int fd = connect_client();
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(::write(fd, req.data(), req.size()), ssize_t(req.size()));
    const std::string r = read_response(fd);
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << i << ": " << r;
  }
  ::close(fd);
  EXPECT_EQ(scrapes_, 3);
}

TEST_F(MetricsHttpTest, OtherPathsMethodsAndBrokenRequestsGetTheirStatus) {
  start();
  EXPECT_EQ(exchange("GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
  const std::string post = exchange("DELETE /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos) << post;
  EXPECT_EQ(exchange("NOT HTTP AT ALL\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  // A body where none belongs, and a header past 8 KiB.
  EXPECT_EQ(exchange("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").rfind("HTTP/1.1 400", 0), 0u);
  const std::string big = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(9000, 'a') + "\r\n\r\n";
  EXPECT_EQ(exchange(big).rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(scrapes_, 0) << "none of them reached the dataplane";
  // The server still serves.
  EXPECT_EQ(exchange("GET /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 200", 0), 0u);
}

TEST_F(MetricsHttpTest, ABusyDataplaneIs503) {
  start();
  busy_ = true;
  EXPECT_EQ(exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 503", 0), 0u);
}

TEST_F(MetricsHttpTest, IdleAndSurplusConnectionsAreClosed) {
  start({2, 3000ms});
  // Two connections that never send a byte hold both places...
  const int a = connect_client(), b = connect_client();
  std::this_thread::sleep_for(50ms);
  // ...so a third is closed unanswered.
  const int c = connect_client();
  const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
  ASSERT_EQ(::write(c, req.data(), req.size()), ssize_t(req.size()));
  EXPECT_EQ(read_response(c), "");
  ::close(c);
  EXPECT_EQ(scrapes_, 0);
  // The idle ones time out, and then there is room again.
  EXPECT_TRUE(closed_within(a, 10'000ms));
  EXPECT_TRUE(closed_within(b, 10'000ms));
  ::close(a);
  ::close(b);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(exchange("GET /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 200", 0), 0u);
}

TEST(MetricsHttp, ATakenPortIsAnError) {
  boost::asio::io_context io;
  MetricsHttp first(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0), [](MetricsHttp::Done) {}, {});
  EXPECT_THROW(MetricsHttp(io, first.local_endpoint(), [](MetricsHttp::Done) {}, {}), boost::system::system_error);
}

}  // namespace
}  // namespace vf
