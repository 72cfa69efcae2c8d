#include "daemon/telemetry/metrics_http.hpp"

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

namespace vf {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

struct MetricsHttp::Shared {
  Shared(boost::asio::io_context& io, Collect c, Options o) : acceptor(io), collect(std::move(c)), opts(o) {}
  tcp::acceptor acceptor;
  Collect collect;
  Options opts;
  tcp::endpoint bound;
  size_t sessions = 0;
  bool stopped = false;
};

namespace {

constexpr size_t kHeaderLimit = 8 * 1024;
constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket s, std::shared_ptr<MetricsHttp::Shared> shared)
      : stream_(std::move(s)), shared_(std::move(shared)) {
    ++shared_->sessions;
  }
  ~Session() { --shared_->sessions; }

  void read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(0);
    stream_.expires_after(shared_->opts.timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == boost::asio::error::eof ||
        ec == boost::asio::error::connection_reset)
      return close();
    if (ec) return respond(plain(http::status::bad_request, 11, false, "bad request: " + ec.message() + "\n"));
    const auto& req = parser_->get();
    const bool keep = req.keep_alive();
    const std::string_view target(req.target().data(), req.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      auto res = plain(http::status::method_not_allowed, req.version(), keep, "only GET and HEAD\n");
      res.set(http::field::allow, "GET, HEAD");
      return respond(std::move(res));
    }
    const bool head = req.method() == http::verb::head;
    if (path == "/")
      return respond(plain(http::status::ok, req.version(), keep, "fabricd: Prometheus metrics at /metrics\n", head));
    if (path != "/metrics")
      return respond(plain(http::status::not_found, req.version(), keep, "not found: try /metrics\n", head));
    shared_->collect([self = shared_from_this(), version = req.version(), keep, head](std::optional<std::string> text) {
      if (!text)
        return self->respond(plain(http::status::service_unavailable, version, false, "the dataplane is busy\n", head));
      auto res = plain(http::status::ok, version, keep, std::move(*text), head);
      res.set(http::field::content_type, kContentType);
      self->respond(std::move(res));
    });
  }

  static http::response<http::string_body> plain(http::status st, unsigned version, bool keep, std::string body,
                                                 bool head = false) {
    http::response<http::string_body> res{st, version};
    res.set(http::field::server, "fabricd");
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.keep_alive(keep);
    const size_t size = body.size();
    if (!head) res.body() = std::move(body);
    res.content_length(size);
    return res;
  }

  void respond(http::response<http::string_body> res) {
    res_ = std::move(res);
    stream_.expires_after(shared_->opts.timeout);
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec || !self->res_.keep_alive()) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  std::shared_ptr<MetricsHttp::Shared> shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> res_;
};

void accept(const std::shared_ptr<MetricsHttp::Shared>& shared) {
  shared->acceptor.async_accept([shared](beast::error_code ec, tcp::socket s) {
    if (shared->stopped || ec == boost::asio::error::operation_aborted) return;
    if (!ec) {
      if (shared->sessions < shared->opts.max_connections)
        std::make_shared<Session>(std::move(s), shared)->read();
      // else: s closes here; the scraper retries at its next interval.
    } else if (ec != boost::asio::error::connection_aborted) {
      // EMFILE and the like: say so, and keep accepting.
      spdlog::warn("metrics: accept: {}", ec.message());
    }
    accept(shared);
  });
}

}  // namespace

MetricsHttp::MetricsHttp(boost::asio::io_context& io, const tcp::endpoint& at, Collect collect, Options opts)
    : shared_(std::make_shared<Shared>(io, std::move(collect), opts)) {
  auto& a = shared_->acceptor;
  a.open(at.protocol());
  a.set_option(tcp::acceptor::reuse_address(true));
  if (at.address().is_v6()) a.set_option(boost::asio::ip::v6_only(true));
  a.bind(at);
  a.listen();
  shared_->bound = a.local_endpoint();
  accept(shared_);
}

MetricsHttp::~MetricsHttp() { stop(); }

tcp::endpoint MetricsHttp::local_endpoint() const { return shared_->bound; }

void MetricsHttp::stop() {
  if (shared_->stopped) return;
  shared_->stopped = true;
  beast::error_code ignored;
  shared_->acceptor.close(ignored);
}

}  // namespace vf
