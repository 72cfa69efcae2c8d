// Memory regions: registration checks (PD, access flags, bounds, and that the
// range is really mapped in the registering process) and key allocation.
// Keys are slot | random tag << 16 (tag < 0x8000: bit 31 marks a window's
// key, mw.cpp), lkey and rkey with independent tags, so a
// key is tied to one registration and not guessable from another.
#include <cerrno>

#include "device/engine/hca_impl.hpp"

namespace vf::engine {

namespace {
// As the kernel's core and rxe take them: MW_BIND is accepted whether or not
// a window can be bound (mlx5 and rxe accept it), HUGETLB is a hint about
// the pages, ZERO_BASED names the region from IOVA 0. ON_DEMAND without ODP
// (the core) is a feature this device lacks: EOPNOTSUPP, which libraries and
// test suites read as "skip / fall back"; a bit nobody defines is EINVAL.
constexpr uint32_t kSupportedAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND |
                                      IBV_ACCESS_HUGETLB | IBV_ACCESS_ZERO_BASED;
constexpr uint32_t kMissingAccess = IBV_ACCESS_ON_DEMAND;
constexpr uint32_t kWriteAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;

// The access flags a registration keeps (optional-range hints dropped), or
// the errno refusing them.
int checked_access(uint32_t requested, uint32_t& access) {
  access = requested & ~uint32_t(IBV_ACCESS_OPTIONAL_RANGE);
  if (access & kMissingAccess) return EOPNOTSUPP;
  if (access & ~kSupportedAccess) return EINVAL;
  // IBA: remote write/atomic access requires local write.
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))
    return EINVAL;
  return 0;
}

// A zero-length region is valid (the kernel core and mlx5 register one): it
// serves zero-length SGEs and remote requests at its IOVA.
bool sane_range(uint64_t addr, uint64_t length, uint64_t max) {
  return length <= max && addr + length >= addr;
}

// Nothing needs to be mapped under an empty range.
bool mapped(ProcessMem& mem, uint64_t addr, uint64_t length, uint32_t access) {
  return length == 0 || mem.range_mapped(addr, length, (access & kWriteAccess) != 0);
}

uint64_t iova_of(uint32_t access, uint64_t iova) { return access & IBV_ACCESS_ZERO_BASED ? 0 : iova; }
}  // namespace

int Hca::Impl::reg_mr(ClientId id, const vhca_reg_mr_req& req, vhca_reg_mr_rsp& rsp) {
  Pd* pd = eng_.owned<Pd>(id, req.pd_handle);
  if (!pd) return EINVAL;
  Client* c = pd->client;
  uint32_t access;
  if (int err = checked_access(req.access, access)) return err;
  if (!sane_range(req.addr, req.length, eng_.cfg.limits.max_mr_size)) return EINVAL;
  const uint64_t iova = iova_of(access, req.iova);
  if (!sane_range(iova, req.length, eng_.cfg.limits.max_mr_size)) return EINVAL;
  if (eng_.objs.of<Mr>().full()) return ENOMEM;  // before the costlier mapping check
  if (!mapped(c->mem, req.addr, req.length, access)) return EFAULT;

  auto mr = std::make_unique<Mr>();
  mr->client = c;
  mr->pd = pd;
  mr->access = access;
  mr->addr = req.addr;
  mr->length = req.length;
  mr->iova = iova;
  Mr* raw = eng_.objs.adopt(std::move(mr));
  if (!raw) return ENOMEM;
  const uint32_t h = raw->handle;
  // Fresh tags, never the ones this slot had last: a stale key must not
  // resolve to the next registration that reuses the slot.
  if (mr_last_tags_.size() <= h) mr_last_tags_.resize(size_t(h) + 1, 0);
  const uint32_t old = mr_last_tags_[h];
  uint32_t ltag, rtag;
  do {
    ltag = random32() & 0x7FFF;  // bit 31 of a key is a window's (mw.cpp)
    rtag = random32() & 0x7FFF;
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

// ibv_rereg_mr: new translation, PD and/or access for a registration that
// keeps its handle and keys (as mlx5 keeps its mkey). Everything is checked
// before anything changes: a refused rereg leaves the MR as it was.
int Hca::Impl::rereg_mr(ClientId id, const vhca_rereg_mr_req& req, vhca_rereg_mr_rsp& rsp) {
  constexpr uint32_t kFlags = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;
  Mr* mr = eng_.owned<Mr>(id, req.mr_handle);
  if (!mr) return EINVAL;
  if (req.flags == 0 || (req.flags & ~kFlags)) return EINVAL;
  if (mr->windows) return EBUSY;  // windows were checked against it as it is
  Pd* pd = mr->pd;
  if ((req.flags & IBV_REREG_MR_CHANGE_PD) && !(pd = eng_.owned<Pd>(id, req.pd_handle))) return EINVAL;
  uint32_t access = mr->access;
  if (req.flags & IBV_REREG_MR_CHANGE_ACCESS)
    if (int err = checked_access(req.access, access)) return err;
  uint64_t addr = mr->addr, length = mr->length, iova = mr->iova;
  if (req.flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
    addr = req.addr;
    length = req.length;
    iova = addr;  // ibv_rereg_mr has no IOVA: the new range is named by its address
    if (!sane_range(addr, length, eng_.cfg.limits.max_mr_size)) return EINVAL;
  }
  if ((access ^ mr->access) & IBV_ACCESS_ZERO_BASED) iova = addr;
  iova = iova_of(access, iova);
  // New memory, or the old memory now writable: it must be mapped that way.
  if ((req.flags & (IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS)) &&
      !mapped(mr->client->mem, addr, length, access))
    return EFAULT;
  // Payloads accepted under the old registration land before it changes.
  place_.flush();
  if (pd != mr->pd) {
    --mr->pd->users;
    ++pd->users;
    mr->pd = pd;
  }
  mr->access = access;
  mr->addr = addr;
  mr->length = length;
  mr->iova = iova;
  rsp.lkey = mr->lkey;
  rsp.rkey = mr->rkey;
  return 0;
}

int Hca::Impl::dereg_mr(ClientId id, const vhca_handle_req& req) {
  Mr* mr = eng_.owned<Mr>(id, req.handle);
  if (!mr) return ENOENT;
  // IBA 10.6.7.2.4 (as rxe, but EBUSY like every other "still in use"):
  // windows bound to it must be unbound or invalidated first.
  if (mr->windows) return EBUSY;
  // Queued payloads were accepted into this memory while it was registered:
  // they land now, never after the app may have reused or unmapped it.
  place_.flush();
  // In-flight work that still names the keys fails its next lookup (IBA:
  // deregistering memory in use makes that work complete in error).
  eng_.objs.release(*mr);
  return 0;
}

}  // namespace vf::engine
