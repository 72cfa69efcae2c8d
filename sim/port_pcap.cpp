#include "sim/port_pcap.hpp"

#include <stdexcept>

namespace vf::sim {
namespace {

constexpr uint32_t kRingBytes = 16u << 20;
constexpr uint32_t kIbLinkPacketLen = 6;  // an IB flow-control packet

// The port as the config names it, checked: a vHCA, or a switch's cabled port.
dp::Endpoint checked_port(const config::Fabric& fab, const std::string& port) {
  const auto end = dp::Endpoint::parse(port);
  if (!end) throw std::invalid_argument("--capture " + port + ": not a port; name a vHCA (vib0) or a switch port (leaf0/3)");
  if (end->port == 0) {
    if (!fab.find_hca(end->node))
      throw std::invalid_argument("--capture " + port + ": fabric " + fab.name + " has no vHCA " + end->node);
    return *end;
  }
  const config::Switch* s = fab.find_switch(end->node);
  if (!s) throw std::invalid_argument("--capture " + port + ": fabric " + fab.name + " has no switch " + end->node);
  bool cabled = false;
  for (const config::Link& l : fab.links)
    for (const config::Endpoint* e : {&l.a, &l.b}) cabled |= e->is_switch && e->node == end->node && e->port == end->port;
  if (!cabled)
    throw std::invalid_argument("--capture " + port + ": " + end->node + " has no link on port " +
                                std::to_string(end->port) + " (it has " + std::to_string(s->ports) + " ports)");
  return *end;
}

}  // namespace

std::string pcap_path(const std::string& dir, const std::string& port) {
  std::string name = port;
  for (char& c : name)
    if (c == '/') c = '_';
  return (dir.empty() ? std::string(".") : dir) + "/" + name + ".pcapng";
}

PortPcap::PortPcap(ConfigFabric& f, const config::Fabric& fab, const std::string& port, const std::string& path,
                   uint32_t snaplen)
    : f_(f), port_(port), path_(path), end_(checked_port(fab, port)),
      ib_(fab.link_layer == config::LinkLayer::Infiniband) {
  if (snaplen == 0 || snaplen > dp::PortCapture::kMaxSnaplen)
    throw std::invalid_argument("--snaplen must be 1.." + std::to_string(dp::PortCapture::kMaxSnaplen));
  cap_ = std::make_unique<dp::PortCapture>(kRingBytes, snaplen);
  out_.reset(std::fopen(path.c_str(), "wb"));
  if (!out_ || !w_.open(out_.get(), ib_ ? kLinktypeErf : kLinktypeEthernet, snaplen, port,
                        std::string("vfabric-sim ") + (ib_ ? "infiniband" : "ethernet") + " port " + port))
    throw std::runtime_error("cannot write " + path);
  f_.topology().set_capture(0, end_, cap_.get());  // last: a port captured twice throws with nothing tapped
}

PortPcap::~PortPcap() {
  f_.topology().set_capture(0, end_, nullptr);
  drain();
}

bool PortPcap::drain() {
  cap_->drain(
      [&](const dp::CaptureRecord& r, const uint8_t* data) {
        if (!ok_) return;
        if (ib_) {
          if (r.origlen == kIbLinkPacketLen) {
            ++link_packets_;
            return;
          }
          const std::string rec = erf_record(r.ts_ns, kErfTypeInfiniband, data, r.caplen, r.origlen);
          ok_ = w_.packet(r.ts_ns, r.inbound, uint32_t(rec.size()), reinterpret_cast<const uint8_t*>(rec.data()),
                          uint32_t(rec.size()));
        } else {
          ok_ = w_.packet(r.ts_ns, r.inbound, r.origlen, data, r.caplen);
        }
        written_ += ok_;
      },
      SIZE_MAX);
  return ok_ && std::fflush(out_.get()) == 0;
}

}  // namespace vf::sim
