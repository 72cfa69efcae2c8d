// fabricd's Prometheus endpoint: GET /metrics over HTTP/1.1 (Boost.Beast) on
// the control thread's io_context, beside the control socket. A scrape asks
// `collect` for the text: fabricd's copies the counters on the lcore (plain
// reads, as for `fabricctl metrics`) and formats them here, so the dataplane
// pays for a scrape what it pays for a control command.
//
// Every client is hostile until checked: a request is at most 8 KiB of
// header and no body, must arrive within the timeout, and at most
// max_connections are served at once (the next is closed at once).
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 in C++20)

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace vf {

class MetricsHttp {
 public:
  // Calls `done` on the io_context's thread with the exposition text, or
  // nullopt when it cannot be had now (the scrape gets 503).
  using Done = std::function<void(std::optional<std::string> text)>;
  using Collect = std::function<void(Done done)>;
  struct Options {
    size_t max_connections = 16;
    std::chrono::milliseconds timeout{10'000};  // per request read and per response write
  };

  // Binds and listens (throws boost::system::system_error when it cannot).
  MetricsHttp(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& at, Collect collect,
              Options opts);
  ~MetricsHttp();
  MetricsHttp(const MetricsHttp&) = delete;
  MetricsHttp& operator=(const MetricsHttp&) = delete;

  boost::asio::ip::tcp::endpoint local_endpoint() const;
  // Stops accepting; connections finish what they are doing.
  void stop();

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
};

}  // namespace vf
