// The packet buffers of every virtual-time fabric in this process: one pool,
// made on first use (the DPDK EAL must be initialised by then; no hugepages
// needed: see init_eal). Large enough for the labs' queues and links.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <stdexcept>
#include <string>

namespace vf::sim {

// How many mbufs the pool is made with: set before its first use (a big
// fabric holds more frames in its queues and on its links at once).
inline unsigned& mbuf_pool_size() {
  static unsigned n = 8191;
  return n;
}

// Inline: header-only users (the tests) share the one pool without linking vf_sim.
inline rte_mempool* mbuf_pool() {
  static rte_mempool* pool = [] {
    // 4608 bytes of data room: a 4096-byte IB MTU plus every header.
    rte_mempool* p = rte_pktmbuf_pool_create("vf_sim_pool", mbuf_pool_size(), 256, 0, RTE_PKTMBUF_HEADROOM + 4608,
                                             SOCKET_ID_ANY);
    if (!p) throw std::runtime_error("cannot create the virtual-time fabric's mbuf pool (is the EAL initialised?)");
    return p;
  }();
  return pool;
}

// Initialises the EAL for an in-process fabric: no hugepages, no PCI, no
// shared files, `megabytes` of memory (the mbuf pool comes from it);
// `prefix` keeps concurrent processes apart. Throws std::runtime_error when
// the EAL refuses. Once per process.
void init_eal(const std::string& prefix, unsigned megabytes = 256);

}  // namespace vf::sim
