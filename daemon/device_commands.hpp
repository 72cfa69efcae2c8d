// Turns one framed provider request into an engine call and the reply
// (runs on the lcore, where the engine lives).
#pragma once

#include <cstdint>
#include <vector>

#include "daemon/device_server.hpp"
#include "device/engine/hca.hpp"

namespace vf {

struct ContextFds {
  int doorbell = -1;  // the lcore's doorbell eventfd
  int status_ro = -1; // read-only fd of the engine status page
};

// `msg` has passed check_request_framing(). Never throws.
DeviceReply execute_device_command(engine::Hca& hca, engine::ClientId client, pid_t pid,
                                   const std::vector<uint8_t>& msg, const ContextFds& fds);

}  // namespace vf
