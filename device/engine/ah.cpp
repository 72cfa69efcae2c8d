// Address handles: a validated copy of ibv_ah_attr that UD send WQEs name by
// handle (the engine keeps them, like rxe's AH pool; mlx5 keeps the AV in
// the WQE instead, so this is where a hostile handle is caught: ud_send.cpp).
#include <cerrno>

#include "core/multicast.hpp"
#include "device/engine/hca_impl.hpp"

namespace vf::engine {

int Hca::Impl::create_ah(ClientId id, const vhca_create_ah_req& req, vhca_create_ah_rsp& rsp) {
  Pd* pd = eng_.owned<Pd>(id, req.pd_handle);
  if (!pd) return EINVAL;
  ibv_ah_attr a = req.attr;
  if (a.port_num != 1 || a.sl > 15) return EINVAL;
  if (a.is_global > 1) return EINVAL;
  if (static_rate_mbps(a.static_rate) == kBadRate) return EINVAL;
  if (eng_.io.info().link_layer == LinkLayer::kEthernet) {
    // RoCE routes by GID only: a GRH is required (mlx5: EINVAL), the LID unused.
    if (!a.is_global) return EINVAL;
    a.dlid = 0;
  } else if (a.dlid == 0) {
    return EINVAL;  // IB forwards by DLID even with a GRH; modify_qp's AV check agrees
  } else if (a.dlid == kPermissiveLid) {
    return EINVAL;  // the permissive LID is for directed-route SMPs, not UD sends
  }
  // The source GID must be a populated entry (an empty one has no gid_attr
  // in the kernel either). hop_limit is taken as given, as the kernel does.
  if (a.is_global && a.grh.sgid_index >= eng_.io.info().gids.size()) return EINVAL;
  auto ah = std::make_unique<Ah>();
  ah->client = pd->client;
  ah->pd = pd;
  ah->attr = a;
  ah->route = route_of(a);
  Ah* raw = eng_.objs.adopt(std::move(ah));
  if (!raw) return ENOMEM;
  rsp.ah_handle = raw->handle;
  rsp.reserved = 0;
  return 0;
}

int Hca::Impl::destroy_ah(ClientId id, const vhca_handle_req& req) {
  Ah* ah = eng_.owned<Ah>(id, req.handle);
  if (!ah) return ENOENT;
  // A UD WQE already sent copied what it needed; a later one naming this
  // handle fails at fetch. Nothing else refers to an AH.
  eng_.objs.release(*ah);
  return 0;
}

int Hca::create_ah(ClientId id, const vhca_create_ah_req& req, vhca_create_ah_rsp& rsp) {
  return impl_->create_ah(id, req, rsp);
}
int Hca::destroy_ah(ClientId id, const vhca_handle_req& req) { return impl_->destroy_ah(id, req); }

}  // namespace vf::engine
