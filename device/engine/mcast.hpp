// UD multicast groups of one vHCA: which QPs are attached to which multicast
// GID (ibv_attach_mcast), and on InfiniBand which MLIDs the port is a member
// of -- what the subnet manager builds the switches' multicast trees from.
// A received datagram to DestQP 0xFFFFFF goes to every QP attached to its
// GRH's DGID (hca.cpp's fan-out); a sent one loops back to the local members
// as mlx5 does (ud_send.cpp). Slow path: the vectors change on attach/detach
// only; the fast path only looks up.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace vf::engine {

struct Qp;

// rxe's limits (max_mcast_grp, max_mcast_qp_attach, max_total_mcast_qp_attach):
// DeviceLimits' defaults; a group's members never exceed kMaxMcastQpAttach.
inline constexpr uint32_t kMaxMcastGroups = 8192;
inline constexpr uint32_t kMaxMcastQpAttach = 56;
inline constexpr uint32_t kMaxTotalMcastAttach = 458752;

struct McastLimits {
  uint32_t groups = kMaxMcastGroups, qps_per_group = kMaxMcastQpAttach, total = kMaxTotalMcastAttach;
};

using McastGid = std::array<uint8_t, 16>;

struct McastMember {
  Qp* qp;
};

struct McastGroup {
  uint16_t lid = 0;  // the group's one MLID (an SA gives each MGID one); 0 on Ethernet
  std::vector<McastMember> members;  // sorted by QP
};

struct McastGidHash {
  size_t operator()(const McastGid& g) const {
    uint64_t a, b;
    __builtin_memcpy(&a, g.data(), 8);
    __builtin_memcpy(&b, g.data() + 8, 8);
    return size_t(a * 0x9E3779B97F4A7C15ull ^ b);
  }
};

// The port joined (true) or left (false) an MLID: its first QP attached to
// it, or its last one detached. The daemon's subnet manager listens.
using McastMembershipFn = std::function<void(uint16_t mlid, bool member)>;

class McastTable {
 public:
  // 0, or the verb's errno: ENOMEM at the limits; EINVAL for an MLID other
  // than the group's. A pair already attached is 0.
  int attach(Qp& qp, const McastGid& gid, uint16_t lid);
  // EINVAL when the pair is not attached.
  int detach(Qp& qp, const McastGid& gid, uint16_t lid);
  // Every attachment of `qp` (it is going away with its context).
  void detach_all(Qp& qp);

  const McastGroup* find(const uint8_t* gid) const {
    if (groups_.empty()) return nullptr;
    McastGid k;
    __builtin_memcpy(k.data(), gid, 16);
    const auto it = groups_.find(k);
    return it == groups_.end() ? nullptr : &it->second;
  }
  // Whether a datagram `sender` sends to group `dgid` has a local member to
  // loop back to (mlx5 loops multicast back to the sending port's own QPs).
  bool loops_back(const Qp& sender, const uint8_t* dgid) const;
  size_t groups() const { return groups_.size(); }
  uint32_t attachments() const { return total_; }
  void on_membership(McastMembershipFn fn) { membership_ = std::move(fn); }
  void set_limits(const McastLimits& l) { limits_ = l; }

 private:
  void lid_ref(uint16_t lid, int delta);

  std::unordered_map<McastGid, McastGroup, McastGidHash> groups_;
  std::unordered_map<uint16_t, uint32_t> lid_refs_;  // MLID -> attachments naming it
  uint32_t total_ = 0;
  McastLimits limits_;
  McastMembershipFn membership_;
};

}  // namespace vf::engine
