// Hca::qp_views: what `fabricctl qp list` shows of each QP, read on the lcore.
#include "device/engine/hca.hpp"
#include "device/engine/hca_impl.hpp"

namespace vf::engine {

std::vector<Hca::QpView> Hca::qp_views() const {
  std::vector<QpView> out;
  impl_->eng_.objs.of<Qp>().for_each([&](const Qp& q) {
    const bool connected = q.type == IBV_QPT_RC || q.type == IBV_QPT_UC;
    out.push_back({q.qpn, q.type, q.state, q.client ? q.client->mem.pid() : -1, connected ? q.attr.dest_qp_num : 0,
                   connected ? q.route.dlid : uint16_t(0), q.psn, q.snd_una, q.epsn, q.sq_fetched - q.sq_cons,
                   q.attr.retry_cnt, q.retry_left, q.attr.rnr_retry, q.rnr_retry_left, q.mtu, q.timeout_ns});
  });
  return out;
}

}  // namespace vf::engine
