// Shared-memory rings (SQ, RQ, CQ): a sealed memfd mapped by both the engine
// and the app. Layout per vhca_abi.h: vhca_ring_hdr, then `entries` slots.
// The app can write any byte of it at any time; the engine only ever reads the
// index it does not own and copies entries out before looking at them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/abi/vhca_abi.h"

namespace vf::engine {

class SharedRing {
 public:
  SharedRing() = default;
  ~SharedRing() { reset(); }
  SharedRing(const SharedRing&) = delete;
  SharedRing& operator=(const SharedRing&) = delete;

  // Creates, sizes, maps and seals a ring of `entries` (a power of two) slots.
  // On success returns 0 and a new fd for the app in `fd_out` (the caller owns
  // it); the engine keeps only the mapping. Returns an errno on failure.
  int create(const char* name, uint32_t entries, uint32_t entry_size, int& fd_out);
  void reset();
  // Exchanges the mappings (a resized ring replaces the old one).
  void swap(SharedRing& o) noexcept;

  bool mapped() const { return base_ != nullptr; }
  uint32_t entries() const { return entries_; }
  uint32_t mask() const { return entries_ - 1; }
  vhca_ring_hdr* hdr() const { return reinterpret_cast<vhca_ring_hdr*>(base_); }
  uint8_t* slot(uint32_t index) const {
    return base_ + sizeof(vhca_ring_hdr) + size_t(index & mask()) * entry_size_;
  }

  uint32_t load_producer() const { return __atomic_load_n(&hdr()->producer, __ATOMIC_ACQUIRE); }
  uint32_t load_consumer() const { return __atomic_load_n(&hdr()->consumer, __ATOMIC_ACQUIRE); }
  uint32_t load_arm() const { return __atomic_load_n(&hdr()->arm, __ATOMIC_RELAXED); }
  uint32_t load_arm_sn() const { return __atomic_load_n(&hdr()->arm_sn, __ATOMIC_ACQUIRE); }
  void store_fired_sn(uint32_t v) { __atomic_store_n(&hdr()->fired_sn, v, __ATOMIC_RELEASE); }
  void store_producer(uint32_t v) { __atomic_store_n(&hdr()->producer, v, __ATOMIC_RELEASE); }
  void store_consumer(uint32_t v) { __atomic_store_n(&hdr()->consumer, v, __ATOMIC_RELEASE); }

 private:
  uint8_t* base_ = nullptr;
  size_t map_len_ = 0;
  uint32_t entries_ = 0;
  uint32_t entry_size_ = 0;
};

// Smallest power of two >= n (n >= 1), or 0 if it would not fit in 32 bits.
inline uint32_t round_up_pow2(uint32_t n) {
  if (n <= 1) return 1;
  if (n > (1u << 31)) return 0;
  return 1u << (32 - __builtin_clz(n - 1));
}

}  // namespace vf::engine
