// rdma_cm commands as hostile apps may write them to /dev/infiniband/rdma_cm,
// straight into fabricd's connection manager: four channels (two ports'
// worth of apps) share one service that persists from input to input, as
// fabricd's does, with the CM messages between the ends delivered between
// commands. Input: records of [channel: 1 byte][length: 2 bytes LE][command
// bytes]; channel byte 0xFF closes and reopens a channel (an app dying).
// Every response must fit the room the command gave, and the service must
// keep its books: no channel holds more events than the bound.
#include <arpa/inet.h>
#include <rdma/rdma_user_cm.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "daemon/cm/fabric_routes.hpp"
#include "daemon/cm/service.hpp"

namespace {

using namespace vf::cm;

Port make_port(size_t i, bool ib, uint32_t ip) {
  Port p;
  p.vhca = i;
  p.name = "p" + std::to_string(i);
  p.fabric = ib ? 1 : 0;
  p.infiniband = ib;
  p.ipv4 = ip;
  p.node_guid = 0x100 + i;
  p.gid[15] = uint8_t(i + 1);
  p.gid_index = ib ? 0 : 1;
  p.mtu = 3;
  return p;
}

class Routes : public RouteResolver {
 public:
  Routes(boost::asio::io_context& io, const std::vector<Port>& p) : io_(io), ports_(p) {}
  void resolve(size_t s, size_t d, std::function<void(std::optional<Path>)> done) override {
    std::optional<Path> p;
    if ((s + d) % 3) p = roce_path(ports_[s], ports_[d]);  // some routes fail
    boost::asio::post(io_, [done, p] { done(p); });
  }

 private:
  boost::asio::io_context& io_;
  const std::vector<Port>& ports_;
};

struct World {
  boost::asio::io_context io;
  std::vector<Port> ports{make_port(0, false, 0xC6120001), make_port(1, false, 0xC6120002),
                          make_port(2, true, 0xC6120065)};
  Routes routes{io, ports};
  Service svc{io, ports, routes, [](uint64_t) {}};
  uint64_t ch[4] = {svc.open_channel().first, svc.open_channel().first, svc.open_channel().first,
                    svc.open_channel().first};
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World* w = new World();
  std::vector<uint8_t> out;
  size_t at = 0;
  while (at + 3 <= size) {
    const uint8_t sel = data[at];
    const size_t len = size_t(data[at + 1]) | size_t(data[at + 2]) << 8;
    at += 3;
    const size_t n = std::min(len, size - at);
    if (sel == 0xFF) {
      const size_t i = n ? data[at] % 4 : 0;
      w->svc.close_channel(w->ch[i]);
      w->ch[i] = w->svc.open_channel().first;
    } else {
      const uint64_t channel = w->ch[sel % 4];
      w->svc.command(channel, {data + at, n}, out);
      if (n >= sizeof(rdma_ucm_cmd_hdr)) {
        rdma_ucm_cmd_hdr h;
        std::memcpy(&h, data + at, sizeof(h));
        if (out.size() > h.out) std::abort();  // more than the app made room for
      }
      if (w->svc.queued_events(channel) > Service::kMaxEventsPerChannel) std::abort();
    }
    at += n;
    w->io.poll();
    w->io.restart();
  }
  return 0;
}
