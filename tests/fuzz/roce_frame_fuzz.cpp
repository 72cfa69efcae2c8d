// RoCEv2 frames as the Ethernet switch and a vHCA port receive them: peeks
// (destination MAC, PCP), ECN marking, then the HCA's full check and
// decapsulation. Input: [split byte][bit 0: fix the CRCs] frame. A frame that passes must leave at
// least a BTH and never more than it came with; the metadata says RoCE.
#include <cstdlib>
#include <vector>

#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/roce_framing.hpp"
#include "dataplane/wire/transport.hpp"
#include "tests/fuzz/frame_fixups.hpp"
#include "tests/fuzz/fuzz_mbuf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vf::fuzz::init_eal();
  if (size < 2) return 0;
  const vf::fuzz::FrameInput in = vf::fuzz::frame_input(data, size, vf::fuzz::fix_roce_crcs);
  const size_t split = in.split;
  data = in.frame.data();
  size = in.frame.size();
  {
    vf::fuzz::FrameMbuf f(data, size, split);
    volatile uint8_t sink = 0;
    if (const uint8_t* dst = vf::wire::eth_frame_dst(f.get())) sink = dst[5];
    (void)sink;
    (void)vf::wire::eth_frame_pcp(f.get());
    (void)vf::wire::roce_frame_mark_ce(f.get());
  }
  vf::fuzz::FrameMbuf f(data, size, split);
  vf::wire::RxMeta meta;
  if (vf::wire::roce_decapsulate(f.get(), &meta) == vf::wire::RxError::kOk) {
    const uint32_t left = rte_pktmbuf_pkt_len(f.get());
    if (left < vf::wire::kBthLen || left > size || !meta.has_grh) std::abort();
  }
  return 0;
}
