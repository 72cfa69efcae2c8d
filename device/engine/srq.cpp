// Shared receive queues and address handles. Placeholder bodies until the
// engine implements them (issue 3): every verb fails as a device without SRQ
// or AH support would.
#include <cerrno>

#include "device/engine/hca_impl.hpp"

namespace vf::engine {

int Hca::create_srq(ClientId, const vhca_create_srq_req&, vhca_create_srq_rsp&, Fd& fd) {
  fd.fd = -1;
  return EOPNOTSUPP;
}
int Hca::modify_srq(ClientId, const vhca_modify_srq_req&) { return EOPNOTSUPP; }
int Hca::query_srq(ClientId, const vhca_handle_req&, vhca_query_srq_rsp&) { return EOPNOTSUPP; }
int Hca::destroy_srq(ClientId, const vhca_handle_req&) { return EOPNOTSUPP; }
int Hca::create_ah(ClientId, const vhca_create_ah_req&, vhca_create_ah_rsp&) { return EOPNOTSUPP; }
int Hca::destroy_ah(ClientId, const vhca_handle_req&) { return EOPNOTSUPP; }

}  // namespace vf::engine
