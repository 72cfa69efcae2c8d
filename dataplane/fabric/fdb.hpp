// A bridge's filtering database (IEEE 802.1Q §8.8): (VLAN, MAC) -> port.
// Entries are learned from the source address of every frame a port receives
// and age out when that address has been silent for the ageing time (Linux
// bridge's ageing_time, 300 s by default); static entries (the config's, as
// `bridge fdb add ... static`) never age and are never overwritten by
// learning. A station that moves to another port is re-learned there.
//
// Ageing is lazy: an entry past its time is treated as absent and erased the
// next time a lookup or learn touches it, so no timer walks the table. The
// table is bounded (kMaxEntries): a port that floods random source addresses
// fills it and further stations are not learned (counted), never memory;
// a full table sweeps out its aged entries (at most once a second), so it
// recovers an ageing time after the flood stops, as a bridge does.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "dataplane/fabric/counter.hpp"
#include "dataplane/fabric/types.hpp"

namespace vf::dp {

struct FdbCounters {
  Counter learned;     // new (VLAN, MAC) entries
  Counter moved;       // a learned station seen on another port
  Counter aged;        // entries that aged out
  Counter table_full;  // source addresses not learned: the table was full
};

struct FdbEntry {
  uint16_t vid = 0;
  Mac mac{};
  uint16_t port = 0;
  bool is_static = false;
  Nanos last_seen = 0;  // learned entries: when the address last sent
};

class Fdb {
 public:
  static constexpr size_t kMaxEntries = 16384;
  static constexpr Nanos kDefaultAgeing = 300'000'000'000ULL;  // 300 s

  explicit Fdb(Nanos ageing = kDefaultAgeing) : ageing_(ageing) {}

  void set_ageing(Nanos ageing) { ageing_ = ageing; }
  Nanos ageing() const { return ageing_; }

  // Fast path: a frame from `mac` arrived on `port` in `vid`.
  void learn(uint16_t vid, const uint8_t* mac, uint16_t port, Nanos now);
  // The port for (vid, mac), or 0 when unknown (or aged out).
  uint16_t lookup(uint16_t vid, const uint8_t* mac, Nanos now);

  void add_static(uint16_t vid, const Mac& mac, uint16_t port);
  void remove(uint16_t vid, const Mac& mac);
  // Forgets what was learned on `port` (its link went down), as bridges flush
  // a port that leaves the forwarding state.
  void flush_port(uint16_t port);

  // Slow path: the port for (vid, mac), 0 when unknown or aged out.
  uint16_t port_of(uint16_t vid, const Mac& mac, Nanos now) const;
  // Current entries, aged ones left out (slow path: fabricctl routes).
  std::vector<FdbEntry> entries(Nanos now) const;
  const FdbCounters& counters() const { return ctr_; }
  void reset_counters() {
    for (Counter* c : {&ctr_.learned, &ctr_.moved, &ctr_.aged, &ctr_.table_full}) c->set(0);
  }

 private:
  struct Slot {
    uint16_t port;
    bool is_static;
    Nanos last_seen;
  };
  static uint64_t key(uint16_t vid, const uint8_t* mac);
  bool expired(const Slot& s, Nanos now) const { return !s.is_static && now - s.last_seen >= ageing_; }

  static constexpr Nanos kSweepEvery = 1'000'000'000ULL;
  Nanos ageing_;
  Nanos swept_at_ = 0;
  std::unordered_map<uint64_t, Slot> table_;
  FdbCounters ctr_;
};

// A source address a bridge may learn: not a group address, not all zeros
// (802.1Q: only individual addresses are learned).
inline bool learnable_mac(const uint8_t* mac) {
  return !(mac[0] & 1) && (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) != 0;
}

}  // namespace vf::dp
