// vfabric-sim --capture: the frames crossing one port of a ConfigFabric,
// written as pcapng the way `fabricctl capture -w` writes them -- Ethernet
// as LINKTYPE_ETHERNET, IB packets as ERF InfiniBand records -- stamped in
// virtual time (nanoseconds from the run's zero; a reader shows them as
// 1970-01-01). IB flow-control packets are left out and counted, as fabricctl
// leaves them out by default. The tap is the dataplane's own
// (dp::PortCapture); drain() empties its ring into the file between events.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "core/pcapng.hpp"
#include "daemon/config/config.hpp"
#include "dataplane/fabric/fabric.hpp"
#include "dataplane/fabric/port_capture.hpp"
#include "sim/config_fabric.hpp"

namespace vf::sim {

class PortPcap {
 public:
  // `port`: a vHCA ("vib0") or a cabled switch port ("leaf0/3") of fabric 0
  // of `f`, whose config is `fab`. Throws std::invalid_argument naming what
  // is wrong, std::runtime_error when `path` cannot be written.
  PortPcap(ConfigFabric& f, const config::Fabric& fab, const std::string& port, const std::string& path,
           uint32_t snaplen);
  ~PortPcap();
  PortPcap(const PortPcap&) = delete;
  PortPcap& operator=(const PortPcap&) = delete;

  // Writes every frame the ring holds; false once a write failed.
  bool drain();
  const std::string& port() const { return port_; }
  const std::string& path() const { return path_; }
  uint64_t written() const { return written_; }
  uint64_t dropped() const { return cap_->dropped.get(); }  // the ring was full
  uint64_t link_packets() const { return link_packets_; }   // IB flow control, left out

 private:
  ConfigFabric& f_;
  std::string port_, path_;
  dp::Endpoint end_;
  bool ib_;
  std::unique_ptr<dp::PortCapture> cap_;
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> out_;  // closed however construction ends
  PcapngWriter w_;
  bool ok_ = true;
  uint64_t written_ = 0, link_packets_ = 0;
};

// "leaf0/3" -> "leaf0_3.pcapng" in `dir`.
std::string pcap_path(const std::string& dir, const std::string& port);

}  // namespace vf::sim
