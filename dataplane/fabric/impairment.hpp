// Loss, corruption, duplication and reordering on one link direction, as `tc
// netem` gives them to an Ethernet lab: each frame is lost with probability
// `loss`, else has one bit flipped with probability `corrupt`, and then
// arrives twice with probability `duplicate` or after the next frame with
// probability `reorder` (the link carries out those two, LinkDirection). Draws come from a seeded generator, so
// a run with the same seed and the same traffic loses and corrupts the same
// frames. A lost frame still used its wire time (WireStage). A corrupted one
// keeps its link header, so it is still forwarded, and fails a check where
// one is made: the VCRC at the receiving HCA on IB (which covers every byte);
// on RoCE the ICRC or the IPv4 header checksum -- except a flip in the UDP
// checksum, which neither covers and RoCEv2 does not check (a real link's
// Ethernet FCS would catch it; the emulated wire carries none).
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/fabric/counter.hpp"
#include "dataplane/fabric/types.hpp"
#include "dataplane/fabric/wire_stage.hpp"

namespace vf::dp {

struct ImpairmentSpec {
  double loss = 0;       // 0..1
  double corrupt = 0;    // 0..1, of the frames not lost
  double duplicate = 0;  // 0..1, of the frames not lost: arrives twice
  double reorder = 0;    // 0..1, of the frames not lost or duplicated: arrives after the next one
  uint64_t seed = 1;
  bool any() const { return loss > 0 || corrupt > 0 || duplicate > 0 || reorder > 0; }
  // Throws std::invalid_argument unless all are probabilities.
  void check() const;
  friend bool operator==(const ImpairmentSpec&, const ImpairmentSpec&) = default;
};

class Impairment {
 public:
  // `ll` says where the link header ends (never corrupted). Throws
  // std::invalid_argument for a probability outside 0..1.
  // `corrupted_out` (may be null): also counts corrupted frames there (the
  // link direction's counter, which outlives this).
  Impairment(LinkLayer ll, const ImpairmentSpec& spec, Counter* corrupted_out = nullptr);

  WireStage stage() { return WireStage{this, &Impairment::on_frame}; }
  const ImpairmentSpec& spec() const { return spec_; }
  Counter lost;       // frames this impairment dropped
  Counter corrupted;  // frames it flipped a bit in

 private:
  static WireVerdict on_frame(void* self, rte_mbuf* m, const WireTime&, const WireTime&);
  uint64_t draw();

  const ImpairmentSpec spec_;
  const uint32_t header_;                      // bytes of link header left intact
  const uint64_t loss_below_, corrupt_below_, duplicate_below_, reorder_below_;  // probability x 2^64
  uint64_t state_;
  Counter* corrupted_out_;
};

}  // namespace vf::dp
