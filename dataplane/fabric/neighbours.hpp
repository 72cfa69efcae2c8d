// An emulated host's neighbour cache (what `ip neigh` shows on a RoCE host):
// the destination MAC of every RoCE packet comes from here, resolved on the
// wire the way the host's kernel resolves it for mlx5 — ARP for IPv4
// (::ffff:a.b.c.d) GIDs, Neighbour Discovery for other IPv6 GIDs — and the
// host answers ARP requests and Neighbour Solicitations for its own addresses.
// Link-local (fe80::/64, EUI-64) GIDs need no resolution: like the kernel's
// rdma_get_ll_mac, the MAC is read back from the interface identifier.
//
// A packet to an unresolved neighbour is framed with a zero destination MAC
// and parked (at most kUnresolvedQueue per neighbour, Linux's unres_qlen);
// resolution sends up to kMaxProbes solicitations kRetransTime apart (Linux's
// mcast_solicit and retrans_time); the answer patches the MAC into the parked
// frames and sends them, no answer drops them (unresolved_discards) and the
// next packet starts over. Resolved entries stay until the link goes down or
// the neighbour announces another MAC (an NA without Override does not
// replace a known MAC, RFC 4861 §7.2.5). A full cache (kMaxEntries) makes
// room by forgetting a failed entry, else a resolved one, as Linux's
// garbage collection does. Permanent entries (set_permanent, like
// `ip neigh add ... nud permanent`) are never replaced from the wire.
//
// The cache serves an interface (NeighbourIface): a vHCA's NIC port, or a
// router's gateway interface on its bridged VLAN (router.hpp).
//
// Everything here runs on the lcore; the counters may be read from anywhere.
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dataplane/fabric/counter.hpp"
#include "dataplane/fabric/ctx_timer.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

// What a neighbour cache needs from the interface it resolves for.
class NeighbourIface {
 public:
  virtual const Mac& mac() const = 0;
  virtual uint16_t vlan_tag() const = 0;  // the 802.1Q VID its own frames carry; 0 = untagged
  virtual bool owns(const Gid& ip) const = 0;
  // The address solicitations come from (ARP's sender, the NS's source);
  // zeros when the interface has none of that family.
  virtual Gid source(bool ipv4) const = 0;
  // Sends a frame the cache built or released (parked ones, now addressed).
  virtual void transmit(rte_mbuf* m, unsigned cls) = 0;

 protected:
  ~NeighbourIface() = default;
};

// IPv4 addresses as the GIDs RoCE writes them (::ffff:a.b.c.d).
bool is_v4_mapped(const Gid& g);
Gid v4_mapped_gid(uint32_t ip);
inline uint32_t v4_of(const Gid& g) { return uint32_t(g[12]) << 24 | uint32_t(g[13]) << 16 | uint32_t(g[14]) << 8 | g[15]; }

// What resolve() calls: 0 once the neighbour's MAC is known, ETIMEDOUT
// when it did not answer within Neighbours::kResolveTimeout (or the entry
// went: link down, removed).
using ResolveDone = std::function<void(int err)>;

struct NeighbourCounters {
  Counter solicits_sent;        // ARP requests and NSs
  Counter replies_sent;         // ARP replies and NAs
  Counter resolved;             // neighbours that answered
  Counter failed;               // neighbours that did not (kMaxProbes unanswered)
  Counter unresolved_discards;  // parked packets dropped: no answer, or the queue was full
  Counter rx_invalid;           // ARP / ICMPv6 frames that are malformed or not ND
};

class Neighbours {
 public:
  static constexpr unsigned kMaxProbes = 3;
  static constexpr Nanos kRetransTime = 1'000'000'000ULL;
  static constexpr uint32_t kUnresolvedQueue = 101;
  static constexpr size_t kMaxEntries = 4096;
  // How long resolve() waits: the kernel's, when modify_qp or create_ah
  // resolves a RoCE address vector (rdma_addr_find_l2_eth_by_grh).
  static constexpr Nanos kResolveTimeout = 1'000'000'000ULL;

  // `iface`: whose addresses, MAC and VLAN, and where solicitations and
  // parked frames go; `pool`: mbufs for solicitations and replies.
  Neighbours(Scheduler& sched, NeighbourIface& iface, rte_mempool* pool);
  ~Neighbours();
  Neighbours(const Neighbours&) = delete;
  Neighbours& operator=(const Neighbours&) = delete;

  // Fast path: the neighbour's MAC when it is resolved (or derivable).
  bool lookup(const Gid& ip, Mac& mac) const;
  // `m` is framed for `ip` but its destination MAC is unknown: park it on
  // egress class `cls` and resolve. Only IPv4-mapped GIDs resolve on an
  // interface without an IPv6 source.
  void park(const Gid& ip, rte_mbuf* m, unsigned cls);
  // Control path (modify_qp's AV, create_ah): `done(0)` once `ip`'s MAC is
  // known -- at once when it is --, else solicits and calls `done` when the
  // neighbour answers or kResolveTimeout has passed. Only `done` may follow.
  void resolve(const Gid& ip, ResolveDone done);
  // An ARP or ICMPv6 frame for this host: consumed (true; m freed), or not
  // neighbour traffic (false; m untouched).
  bool receive(rte_mbuf* m);

  // Every resolved and permanent entry (ip neigh show), for the control side
  // by way of the lcore.
  std::vector<std::pair<Gid, Mac>> entries() const;

  void set_permanent(const Gid& ip, const Mac& mac);
  void remove(const Gid& ip);
  // The link went down: everything learned (and parked) is forgotten.
  void flush();

  const NeighbourCounters& counters() const { return ctr_; }
  void reset_counters();

 private:
  enum class State : uint8_t { kIncomplete, kReachable, kFailed, kPermanent };
  struct Parked {
    rte_mbuf* m;
    uint8_t cls;
  };
  struct Waiter {
    Nanos deadline;
    ResolveDone done;
  };
  struct Entry {
    State state = State::kIncomplete;
    Mac mac{};
    uint8_t probes = 0;
    Nanos probe_at = 0;
    std::deque<Parked> parked;
    std::vector<Waiter> waiters;  // resolve() calls waiting for the answer
  };
  struct GidHash {
    size_t operator()(const Gid& g) const;
  };

  static void on_timer(Timer& t, Nanos now);
  void solicit(const Gid& ip, Entry& e);
  void learned(const Gid& ip, const Mac& mac, bool create, bool override = true);
  // Frees a slot in a full table; false when every entry is needed.
  bool make_room();
  void drop_parked(Entry& e);
  Entry* entry_for(const Gid& ip);  // found or made; null when the table is full
  void start_probing(const Gid& ip, Entry& e);
  // Moves `e`'s waiters (all, or those due by `past`) to `out`, to be
  // called once the table is consistent again (a waiter may resolve anew).
  static void take_waiters(Entry& e, std::vector<Waiter>& out, Nanos past = kNever);
  static void call(std::vector<Waiter>& ws, int err);
  void arm_timer();
  bool on_arp(const uint8_t* p, size_t len);
  bool on_nd(const uint8_t* ip6, size_t len, const uint8_t* eth_src);
  // A frame with our source MAC (and tag) to `dst`, `payload` bytes after the
  // Ethernet header; the payload's start in *body. Null when out of mbufs.
  rte_mbuf* new_frame(const Mac& dst, uint16_t ethertype, unsigned payload, uint8_t** body);
  void send(rte_mbuf* m);

  Scheduler& sched_;
  NeighbourIface& iface_;
  rte_mempool* pool_;
  std::unordered_map<Gid, Entry, GidHash> table_;
  CtxTimer timer_;
  NeighbourCounters ctr_;
};

}  // namespace vf::dp
