// CM MADs as they arrive on a port's QP1 from the wire -- from any host on
// the fabric, so hostile -- through the connection manager's decoder. What
// decodes must encode again to a MAD that decodes to the same message.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "daemon/cm/cm_mad.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vf::cm::CmMad mad{};
  std::memcpy(mad.data(), data, size < mad.size() ? size : mad.size());
  const auto m = vf::cm::decode(mad);
  if (!m) return 0;
  const auto again = vf::cm::decode(vf::cm::encode(*m, 1, 2));
  if (!again || again->type != m->type || again->local_comm != m->local_comm ||
      again->remote_comm != m->remote_comm || again->private_data != m->private_data)
    std::abort();
  return 0;
}
