#include "dataplane/fabric/impairment.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace vf::dp {

namespace {
constexpr uint32_t kIbLrhLen = 8;
constexpr uint32_t kEthHeaderLen = 14;

uint64_t threshold(double p, const char* what) {
  if (!(p >= 0 && p <= 1)) throw std::invalid_argument(std::string(what) + " must be a probability 0..1");
  if (p >= 1) return UINT64_MAX;
  return uint64_t(std::ldexp(p, 64));
}
}  // namespace

void ImpairmentSpec::check() const {
  threshold(loss, "loss");
  threshold(corrupt, "corrupt");
  threshold(duplicate, "duplicate");
  threshold(reorder, "reorder");
}

Impairment::Impairment(LinkLayer ll, const ImpairmentSpec& spec, Counter* corrupted_out)
    : spec_(spec),
      header_(ll == LinkLayer::kInfiniBand ? kIbLrhLen : kEthHeaderLen),
      loss_below_(threshold(spec.loss, "loss")),
      corrupt_below_(threshold(spec.corrupt, "corrupt")),
      duplicate_below_(threshold(spec.duplicate, "duplicate")),
      reorder_below_(threshold(spec.reorder, "reorder")),
      state_(spec.seed),
      corrupted_out_(corrupted_out) {}

// splitmix64: one multiply-xorshift step per draw, good enough for a coin.
uint64_t Impairment::draw() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

WireVerdict Impairment::on_frame(void* self, rte_mbuf* m, const WireTime&, const WireTime&) {
  auto& im = *static_cast<Impairment*>(self);
  if (im.loss_below_ && im.draw() < im.loss_below_) {
    im.lost.add();
    return WireVerdict::kLose;
  }
  const uint32_t len = rte_pktmbuf_data_len(m);
  if (im.corrupt_below_ && im.draw() < im.corrupt_below_ && len > im.header_) {
    const uint64_t r = im.draw();
    uint8_t* b = rte_pktmbuf_mtod(m, uint8_t*);
    b[im.header_ + r % (len - im.header_)] ^= uint8_t(1u << (r >> 61));
    im.corrupted.add();
    if (im.corrupted_out_) im.corrupted_out_->add();
  }
  if (im.duplicate_below_ && im.draw() < im.duplicate_below_) return WireVerdict::kDuplicate;
  if (im.reorder_below_ && im.draw() < im.reorder_below_) return WireVerdict::kHold;
  return WireVerdict::kPass;
}

}  // namespace vf::dp
