// Turns one framed provider request into an engine call and the reply
// (runs on the lcore, where the engine lives).
#pragma once

#include <cstdint>
#include <vector>

#include "daemon/vhca/device_server.hpp"
#include "daemon/vhca/event_sink.hpp"
#include "device/engine/hca.hpp"

namespace vf {

struct ContextFds {
  int doorbell = -1;  // the lcore's doorbell eventfd
  int status_ro = -1; // read-only fd of the engine status page
};

// `msg` has passed check_request_framing(); `req_fds` are the fds it carried
// (owned: each is kept by the event sink or closed). Never throws.
DeviceReply execute_device_command(engine::Hca& hca, AppEventSink& events, engine::ClientId client,
                                   const DevicePeer& peer, const std::vector<uint8_t>& msg,
                                   std::vector<int> req_fds, const ContextFds& fds);

}  // namespace vf
