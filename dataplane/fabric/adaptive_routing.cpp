#include "dataplane/fabric/adaptive_routing.hpp"

namespace vf::dp {

const char* to_string(AdaptiveMode m) {
  switch (m) {
    case AdaptiveMode::kOff: return "off";
    case AdaptiveMode::kPerPacket: return "per-packet";
    case AdaptiveMode::kFlowlet: return "flowlet";
  }
  return "?";
}

}  // namespace vf::dp
