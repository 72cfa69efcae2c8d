// Which ports an operator's name means, for `fabricctl counters [NAME]` and
// `counters reset [NAME]`: a vHCA ("vib0"), one switch port ("leaf0/3"),
// every cabled port of a switch ("leaf0") or of a fabric ("ib"), or, with no
// name, every cabled port. Pure config, resolved on the control thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf {

struct PortRef {
  size_t fabric;     // index into Config::fabrics
  std::string node;  // vHCA or switch name
  uint32_t port;     // switch port 1..ports; 0 for a vHCA's (single) port
  bool hca;
  std::string text() const;  // "vib0" or "leaf0/3"
};

struct PortSelectError {
  std::string message;
  std::string hint;
};

// In config order: per fabric its vHCAs, then its switches' ports.
std::variant<std::vector<PortRef>, PortSelectError> select_ports(const config::Config& cfg, std::string_view name);

// Exactly one port, a vHCA's or a switch port ("vib0", "leaf0/3"): what a
// capture or a QoS change applies to. A switch or a fabric is refused.
std::variant<PortRef, PortSelectError> select_one_port(const config::Config& cfg, std::string_view name);

}  // namespace vf
