// Engine objects other than QPs: clients (one per provider context), protection
// domains, memory regions and completion queues, plus the slot tables that
// hold them. Handles given to apps are slot indices; every lookup also checks
// the owning client, so a handle or key of another client never resolves.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "device/engine/dma.hpp"
#include "device/engine/hca.hpp"
#include "device/engine/ring.hpp"
#include "device/engine/route.hpp"

namespace vf::engine {

struct Client {
  ClientId id = 0;
  ProcessMem mem;
  unsigned pds = 0, mrs = 0, cqs = 0, qps = 0, srqs = 0, ahs = 0;
};

struct Pd {
  Client* client = nullptr;
  uint32_t handle = 0;
  uint32_t users = 0;  // MRs, QPs, SRQs and AHs
};

// An address handle: the validated ibv_ah_attr a UD send WQE names by handle.
struct Ah {
  Client* client = nullptr;
  Pd* pd = nullptr;
  uint32_t handle = 0;
  ibv_ah_attr attr{};
  dp::Route route;  // attr, as the port takes it
};

// A shared receive queue (recv_queue.hpp says how QPs take WQEs from it).
struct Srq {
  Client* client = nullptr;
  Pd* pd = nullptr;
  uint32_t handle = 0;
  SharedRing ring;
  // WQEs copied out (published as the ring's consumer): a WQE belongs to the
  // QP that took it from then on, so the slot goes back to the app at once.
  uint32_t cons = 0;
  uint32_t max_wr = 0;   // granted (== ring entries)
  uint32_t max_sge = 0;  // granted
  uint32_t limit = 0;    // srq_limit; the event fires when armed and fewer remain
  bool armed = false;
  bool error = false;  // hostile producer index: never read again
  uint32_t users = 0;  // QPs
  uint32_t events_reported = 0;  // SRQ_LIMIT_REACHED / SRQ_ERR raised
};

struct Mr {
  Client* client = nullptr;
  Pd* pd = nullptr;
  uint32_t handle = 0;  // == slot index == low 16 bits of both keys
  uint32_t lkey = 0, rkey = 0;
  uint32_t access = 0;
  uint64_t addr = 0, length = 0;

  // [a, a+len) inside the region (overflow-safe).
  bool contains(uint64_t a, uint64_t len) const {
    return a >= addr && len <= length && a - addr <= length - len;
  }
};

struct Cq {
  Client* client = nullptr;
  uint32_t handle = 0;
  SharedRing ring;
  uint32_t producer = 0;     // ours; the ring's copy is only ever written
  uint32_t arm_sn_seen = 0;  // last arm sequence an event was raised for
  bool error = false;        // overrun or hostile consumer index: writes stopped
  uint32_t users = 0;        // QPs
};

// Objects by slot index 1..capacity; 0 is never a valid handle.
template <class T>
class SlotTable {
 public:
  explicit SlotTable(uint32_t capacity = 0) { set_capacity(capacity); }
  void set_capacity(uint32_t capacity) {
    capacity_ = capacity;
    slots_.clear();
    slots_.emplace_back();
  }
  // Returns the slot index, or 0 when full.
  uint32_t insert(std::unique_ptr<T> obj) {
    uint32_t idx;
    if (!free_.empty()) {
      idx = free_.back();
      free_.pop_back();
    } else {
      if (slots_.size() > capacity_) return 0;
      idx = uint32_t(slots_.size());
      slots_.emplace_back();
    }
    slots_[idx] = std::move(obj);
    ++live_;
    return idx;
  }
  T* get(uint32_t idx) const { return idx < slots_.size() ? slots_[idx].get() : nullptr; }
  // Takes `obj` and sets its handle to its slot index; nullptr when full.
  T* add(std::unique_ptr<T> obj) {
    T* raw = obj.get();
    const uint32_t h = insert(std::move(obj));
    if (!h) return nullptr;
    raw->handle = h;
    return raw;
  }
  // The object at handle `h` if `owner` created it: another client's handle
  // never resolves.
  T* owned(uint32_t h, const Client* owner) const {
    T* o = get(h);
    return o && o->client == owner ? o : nullptr;
  }
  void erase(uint32_t idx) {
    if (idx == 0 || idx >= slots_.size() || !slots_[idx]) return;
    slots_[idx].reset();
    free_.push_back(idx);
    --live_;
  }
  uint32_t live() const { return live_; }
  bool full() const { return free_.empty() && slots_.size() > capacity_; }
  template <class F>
  void for_each(F&& f) const {
    for (auto& s : slots_)
      if (s) f(*s);
  }

 private:
  std::vector<std::unique_ptr<T>> slots_;
  std::vector<uint32_t> free_;
  uint32_t capacity_ = 0;
  uint32_t live_ = 0;
};

}  // namespace vf::engine
