// A switch's packet memory, shared by the receive buffers of all its ports: a
// frame holds its bytes from arrival until it leaves the switch or is
// dropped. It is its own object, not a port hook, because several ports share
// it and flow control (credits, PFC) keeps the ports' IngressHooks for itself.
//
// Two parts: what PFC reserves when a port is set up (reserve()) -- the
// headroom of its lossless priority groups, which only they fill
// (take_headroom), and each group's static reserved part, which it fills
// before anything else (take_reserved) -- and the shared rest (take). A frame the shared part has no room for is refused: a drop for a
// lossy priority or an IB port, the headroom for a lossless one (pfc.hpp).
#pragma once

#include <cstdint>

#include "dataplane/fabric/counter.hpp"

namespace vf::dp {

class SharedBuffer {
 public:
  explicit SharedBuffer(uint64_t bytes) : size_(bytes) {}
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  // Sets `bytes` of headroom aside (set-up); false when the shared part
  // would have less than nothing left.
  bool reserve(uint64_t bytes) {
    if (reserved_ + bytes > size_) return false;
    reserved_ += bytes;
    return true;
  }
  void unreserve(uint64_t bytes) { reserved_ -= bytes; }

  // Occupies `bytes` of the shared part if they fit; false (counted in
  // `refused`) when not.
  bool take(uint64_t bytes) {
    const uint64_t u = shared_.get();
    if (u + bytes > size_ - reserved_) {
      refused.add();
      return false;
    }
    shared_.set(u + bytes);
    peak_.max(used());
    return true;
  }
  void give(uint64_t bytes) { shared_.sub(bytes); }
  // Headroom and a group's reserved part: the PFC group checks its own
  // share (both were reserved at set-up), so these always fit.
  void take_headroom(uint64_t bytes) {
    headroom_.add(bytes);
    peak_.max(used());
  }
  void give_headroom(uint64_t bytes) { headroom_.sub(bytes); }
  void take_reserved(uint64_t bytes) {
    guaranteed_.add(bytes);
    peak_.max(used());
  }
  void give_reserved(uint64_t bytes) { guaranteed_.sub(bytes); }

  uint64_t size() const { return size_; }
  uint64_t reserved() const { return reserved_; }
  uint64_t shared_free() const { return size_ - reserved_ - shared_.get(); }
  uint64_t used() const { return shared_.get() + headroom_.get() + guaranteed_.get(); }
  uint64_t headroom_used() const { return headroom_.get(); }
  uint64_t peak() const { return peak_.get(); }
  Counter refused;  // frames the shared part had no room for

 private:
  const uint64_t size_;
  uint64_t reserved_ = 0;  // set-up only
  Counter shared_;
  Counter headroom_;
  Counter guaranteed_;  // held in the groups' reserved parts
  Counter peak_;
};

}  // namespace vf::dp
