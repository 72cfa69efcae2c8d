#include "dataplane/fabric/egress_queue.hpp"

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include <stdexcept>
#include <string>

namespace vf::dp {

namespace detail {
int g_queued_frame_offset = -1;
}

int queued_frame_offset() {
  // DPDK keeps one registry per process (and returns the same offset for the
  // same name again), so registering once is enough for every pool.
  static const int offset = [] {
    rte_mbuf_dynfield desc{};
    snprintf(desc.name, sizeof(desc.name), "vfabric_queued_frame");
    desc.size = sizeof(QueuedFrame);
    desc.align = alignof(QueuedFrame);
    const int off = rte_mbuf_dynfield_register(&desc);
    if (off < 0)
      throw std::runtime_error(std::string("cannot register the egress queue's mbuf field: ") +
                               rte_strerror(rte_errno) + " (is the EAL initialised?)");
    return off;
  }();
  detail::g_queued_frame_offset = offset;
  return offset;
}

}  // namespace vf::dp
