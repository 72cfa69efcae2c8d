// A switch's packet memory, shared by the receive buffers of all its ports: a
// frame holds its bytes from arrival until it leaves the switch or is
// dropped. It is its own object, not a port hook, because several ports share
// it and flow control (credits, PFC) keeps the ports' IngressHooks for itself.
// The PFC issue builds per-(port, priority) reserved / shared / headroom
// accounting on this; what exists is one pool with a size, and a frame that
// does not fit is dropped at ingress (the port's receive discards).
#pragma once

#include <cstdint>

#include "dataplane/fabric/counter.hpp"

namespace vf::dp {

class SharedBuffer {
 public:
  explicit SharedBuffer(uint64_t bytes) : size_(bytes) {}
  SharedBuffer(const SharedBuffer&) = delete;
  SharedBuffer& operator=(const SharedBuffer&) = delete;

  // Occupies `bytes` if they fit; false (counted in `refused`) when not.
  bool take(uint64_t bytes) {
    const uint64_t u = used_.get();
    if (u + bytes > size_) {
      refused.add();
      return false;
    }
    used_.set(u + bytes);
    peak_.max(u + bytes);
    return true;
  }
  void give(uint64_t bytes) { used_.sub(bytes); }

  uint64_t size() const { return size_; }
  uint64_t used() const { return used_.get(); }
  uint64_t peak() const { return peak_.get(); }
  Counter refused;  // frames dropped because the buffer was full

 private:
  const uint64_t size_;
  Counter used_;
  Counter peak_;
};

}  // namespace vf::dp
