// `fabricctl capture PORT`: capture.start taps the port's link on the lcore
// (dp::PortCapture), capture.read drains the copies on the control thread --
// the ring's one consumer, so a read never touches the lcore -- and
// capture.stop removes the taps. All three are privileged (what crosses a
// port is other users' data, as tcpdump needs CAP_NET_RAW). A session nobody
// read for kIdle ends by itself, so a client that died leaves no tap behind.
#include <chrono>
#include <ctime>
#include <map>
#include <memory>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <nlohmann/json.hpp>

#include "daemon/commands/control_commands.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/service/daemon_state.hpp"
#include "daemon/lcore/lcore.hpp"
#include "daemon/commands/port_select.hpp"
#include "daemon/fabric/topology.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/port_capture.hpp"
#include "dataplane/wire/frame_summary.hpp"

namespace vf {
namespace {
using control::json;

constexpr auto kIdle = std::chrono::seconds(10);
constexpr size_t kMaxSessions = 8;
constexpr uint32_t kRingBytes = 8u << 20;
constexpr size_t kMaxReadBytes = 1u << 20;

std::string base64(const uint8_t* p, size_t n) {
  namespace b64 = boost::beast::detail::base64;
  std::string out(b64::encoded_size(n), '\0');
  out.resize(b64::encode(out.data(), p, n));
  return out;
}

class CaptureSessions : public std::enable_shared_from_this<CaptureSessions> {
 public:
  CaptureSessions(DaemonState& d, boost::asio::io_context& io) : d_(d), io_(io) {}

  void start(const json& args, control::Reply reply);
  void read(const json& args, control::Reply reply);
  void stop(const json& args, control::Reply reply);

 private:
  struct Session {
    size_t fabric;
    dp::Endpoint port;
    bool ib;
    std::shared_ptr<dp::PortCapture> cap;
    std::unique_ptr<boost::asio::steady_timer> idle;
  };
  Session* find(const json& args, control::Reply& reply);
  void arm_idle(uint64_t id);
  // Removes the taps on the lcore, which keeps the ring alive until then.
  void end(uint64_t id);

  DaemonState& d_;
  boost::asio::io_context& io_;
  std::map<uint64_t, Session> sessions_;
  std::vector<std::shared_ptr<dp::PortCapture>> orphans_;  // still tapped (see end)
  uint64_t next_id_ = 1;
};

void CaptureSessions::start(const json& args, control::Reply reply) {
  const std::string name = args.contains("port") && args["port"].is_string() ? args["port"].get<std::string>() : "";
  auto sel = select_one_port(d_.config(), name);
  if (const auto* e = std::get_if<PortSelectError>(&sel)) return reply.error(e->message, e->hint);
  uint32_t snaplen = dp::PortCapture::kMaxSnaplen;
  if (args.contains("snaplen")) {
    if (!args["snaplen"].is_number_unsigned() || args["snaplen"].get<uint64_t>() == 0 ||
        args["snaplen"].get<uint64_t>() > dp::PortCapture::kMaxSnaplen)
      return reply.error("snaplen must be 1 to 65535 bytes", "e.g. --snaplen 128 keeps the headers");
    snaplen = args["snaplen"].get<uint32_t>();
  }
  if (sessions_.size() >= kMaxSessions)
    return reply.error("too many captures running (" + std::to_string(kMaxSessions) + ")",
                       "stop one, or wait: a capture nobody reads ends after 10 s");
  const PortRef ref = std::get<PortRef>(sel);
  const dp::Endpoint ep{ref.node, ref.port};
  auto cap = std::make_shared<dp::PortCapture>(kRingBytes, snaplen);
  const bool ib = d_.config().fabrics[ref.fabric].link_layer == config::LinkLayer::Infiniband;
  const uint64_t id = next_id_++;
  DaemonState* dp = &d_;
  auto self = shared_from_this();
  const bool queued = d_.lcore().post([self, dp, id, ref, ep, cap, ib, snaplen, reply] {
    try {
      dp->topology().set_capture(ref.fabric, ep, cap.get());
    } catch (const std::invalid_argument& e) {
      const bool busy = std::string_view(e.what()).find("captured already") != std::string_view::npos;
      return reply.error(e.what(), busy ? "one capture per link at a time: stop the other one first"
                                        : "capture a cabled port; fabricctl topology show lists the links");
    }
    // The wall-clock time of the dataplane clock's zero: capture times are
    // emulated, and this anchors them to a date.
    const auto wall = std::chrono::system_clock::now().time_since_epoch();
    const int64_t epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count() -
                          int64_t(dp->lcore().clock_now());
    reply.ok_with([self, id, ref, ep, cap, ib, snaplen, epoch] {
      self->sessions_[id] = Session{ref.fabric, ep, ib, cap, std::make_unique<boost::asio::steady_timer>(self->io_)};
      self->arm_idle(id);
      self->d_.fabric_event("capture", "capture " + std::to_string(id) + " started on " + ref.text());
      return json{{"id", id},
                  {"port", ref.text()},
                  {"link_layer", ib ? "infiniband" : "ethernet"},
                  {"snaplen", snaplen},
                  {"epoch_ns", epoch}};
    });
  });
  if (!queued) reply.error("the dataplane is busy", "retry in a moment");
}

CaptureSessions::Session* CaptureSessions::find(const json& args, control::Reply& reply) {
  const auto it = args.contains("id") && args["id"].is_number_unsigned() ? sessions_.find(args["id"].get<uint64_t>())
                                                                          : sessions_.end();
  if (it == sessions_.end()) {
    reply.error("no such capture", "it ended: stopped, or nobody read it for 10 s");
    return nullptr;
  }
  return &it->second;
}

void CaptureSessions::read(const json& args, control::Reply reply) {
  Session* s = find(args, reply);
  if (!s) return;
  arm_idle(args["id"].get<uint64_t>());
  json frames = json::array();
  s->cap->drain(
      [&](const dp::CaptureRecord& r, const uint8_t* p) {
        frames.push_back({{"t", r.ts_ns},
                          {"in", r.inbound != 0},
                          {"len", r.origlen},
                          {"data", base64(p, r.caplen)},
                          {"summary", wire::frame_summary(p, r.caplen, s->ib)}});
      },
      kMaxReadBytes);
  reply.ok({{"frames", std::move(frames)}, {"captured", s->cap->captured.get()}, {"dropped", s->cap->dropped.get()}});
}

void CaptureSessions::stop(const json& args, control::Reply reply) {
  Session* s = find(args, reply);
  if (!s) return;
  const json counts = {{"captured", s->cap->captured.get()}, {"dropped", s->cap->dropped.get()}};
  end(args["id"].get<uint64_t>());
  reply.ok(counts);
}

void CaptureSessions::arm_idle(uint64_t id) {
  auto& timer = *sessions_.at(id).idle;
  timer.expires_after(kIdle);
  timer.async_wait([weak = weak_from_this(), id](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || !self->sessions_.count(id)) return;
    self->end(id);
  });
}

void CaptureSessions::end(uint64_t id) {
  auto node = sessions_.extract(id);
  if (node.empty()) return;
  Session& s = node.mapped();
  s.idle->cancel();
  d_.fabric_event("capture", "capture " + std::to_string(id) + " on " + s.port.str() + " ended: " +
                                 std::to_string(s.cap->captured.get()) + " captured, " +
                                 std::to_string(s.cap->dropped.get()) + " dropped");
  DaemonState* dp = &d_;
  // The lambda owns the ring until the taps are gone. If the lcore cannot
  // take it now, the taps stay until fabricd stops and so must the ring.
  if (!d_.lcore().post([dp, fabric = s.fabric, port = s.port, cap = s.cap] {
        dp->topology().set_capture(fabric, port, nullptr);
      }))
    orphans_.push_back(s.cap);
}

}  // namespace

void register_capture_commands(control::ControlServer& server, DaemonState& daemon, boost::asio::io_context& io) {
  auto sessions = std::make_shared<CaptureSessions>(daemon, io);
  using control::Access;
  server.add_async_command(
      "capture.start", [sessions](const json& args, control::Reply reply) { sessions->start(args, std::move(reply)); },
      "{port, snaplen?}: tap the frames crossing a port, both ways; returns {id, link_layer, epoch_ns}",
      Access::Mutating);
  server.add_async_command(
      "capture.read", [sessions](const json& args, control::Reply reply) { sessions->read(args, std::move(reply)); },
      "{id}: the frames captured since the last read (base64, emulated ns) and the captured/dropped counts",
      Access::Mutating);
  server.add_async_command(
      "capture.stop", [sessions](const json& args, control::Reply reply) { sessions->stop(args, std::move(reply)); },
      "{id}: remove the taps; returns the captured/dropped counts", Access::Mutating);
}

}  // namespace vf
