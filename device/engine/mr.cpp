// Memory regions: registration checks (PD, access flags, bounds, and that the
// range is really mapped in the registering process) and key allocation.
// Keys are slot | random tag << 16, lkey and rkey with independent tags, so a
// key is tied to one registration and not guessable from another.
#include <cerrno>

#include "device/engine/hca_impl.hpp"

namespace vf::engine {

namespace {
// As the kernel's core and rxe take them: MW_BIND is accepted whether or not
// a window can be bound (mlx5 and rxe accept it), HUGETLB is a hint about
// the pages. ZERO_BASED (rxe) and ON_DEMAND without ODP (the core) are
// features this device lacks: EOPNOTSUPP, which libraries and test suites
// read as "skip / fall back"; a bit nobody defines is EINVAL.
constexpr uint32_t kSupportedAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND |
                                      IBV_ACCESS_HUGETLB;
constexpr uint32_t kMissingAccess = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND;
constexpr uint32_t kWriteAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
}  // namespace

int Hca::Impl::reg_mr(ClientId id, const vhca_reg_mr_req& req, vhca_reg_mr_rsp& rsp) {
  Pd* pd = eng_.owned<Pd>(id, req.pd_handle);
  if (!pd) return EINVAL;
  Client* c = pd->client;
  // Optional flags (IBV_ACCESS_OPTIONAL_RANGE) are hints a device may ignore.
  const uint32_t access = req.access & ~uint32_t(IBV_ACCESS_OPTIONAL_RANGE);
  if (access & kMissingAccess) return EOPNOTSUPP;
  if (access & ~kSupportedAccess) return EINVAL;
  // IBA: remote write/atomic access requires local write.
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
      !(access & IBV_ACCESS_LOCAL_WRITE))
    return EINVAL;
  if (req.length == 0 || req.length > eng_.cfg.limits.max_mr_size) return EINVAL;
  if (req.addr + req.length < req.addr) return EINVAL;
  if (eng_.objs.of<Mr>().full()) return ENOMEM;  // before the costlier mapping check
  if (!c->mem.range_mapped(req.addr, req.length, (access & kWriteAccess) != 0)) return EFAULT;

  auto mr = std::make_unique<Mr>();
  mr->client = c;
  mr->pd = pd;
  mr->access = access;
  mr->addr = req.addr;
  mr->length = req.length;
  Mr* raw = eng_.objs.adopt(std::move(mr));
  if (!raw) return ENOMEM;
  const uint32_t h = raw->handle;
  // Fresh tags, never the ones this slot had last: a stale key must not
  // resolve to the next registration that reuses the slot.
  if (mr_last_tags_.size() <= h) mr_last_tags_.resize(size_t(h) + 1, 0);
  const uint32_t old = mr_last_tags_[h];
  uint32_t ltag, rtag;
  do {
    ltag = random32() & 0xFFFF;
    rtag = random32() & 0xFFFF;
  } while (ltag == 0 || rtag == 0 || ltag == rtag || ltag == (old & 0xFFFF) ||
           rtag == (old >> 16) || ltag == (old >> 16) || rtag == (old & 0xFFFF));
  mr_last_tags_[h] = rtag << 16 | ltag;
  raw->lkey = ltag << 16 | h;
  raw->rkey = rtag << 16 | h;
  rsp.mr_handle = h;
  rsp.lkey = raw->lkey;
  rsp.rkey = raw->rkey;
  rsp.reserved = 0;
  return 0;
}

int Hca::Impl::dereg_mr(ClientId id, const vhca_handle_req& req) {
  Mr* mr = eng_.owned<Mr>(id, req.handle);
  if (!mr) return EINVAL;
  // Queued payloads were accepted into this memory while it was registered:
  // they land now, never after the app may have reused or unmapped it.
  place_.flush();
  // In-flight work that still names the keys fails its next lookup (IBA:
  // deregistering memory in use makes that work complete in error).
  eng_.objs.release(*mr);
  return 0;
}

}  // namespace vf::engine
