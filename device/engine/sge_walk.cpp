// The one walk over a WQE's scatter/gather list that every DMA path uses:
// the requester gathering a send, the responder scattering into a receive
// WQE, the requester scattering READ responses and atomic results.
#include "device/engine/engine.hpp"

namespace vf::engine {

bool Engine::collect_sges(const vhca_sge* sge, unsigned num_sge, const Client* c, const Pd* pd,
                             uint32_t need_access, uint64_t off, uint32_t len,
                             IoList& iol) const {
  uint64_t pos = 0;  // start of SGE i within the message
  for (unsigned i = 0; i < num_sge && len; ++i) {
    const vhca_sge& g = sge[i];
    if (off >= pos + g.length) {
      pos += g.length;
      continue;
    }
    // Resolved for every piece, never cached: the MR may be gone since.
    const Mr* mr = mr_by_lkey(g.lkey);
    if (!mr || mr->client != c || mr->pd != pd || (mr->access & need_access) != need_access ||
        !mr->contains(g.addr, g.length))
      return false;
    const uint64_t in = off - pos;
    const uint32_t take = uint32_t(g.length - in < len ? g.length - in : len);
    if (!iol.add(mr->host(g.addr) + in, take)) return false;
    off += take;
    len -= take;
    pos += g.length;
  }
  return len == 0;
}

}  // namespace vf::engine
