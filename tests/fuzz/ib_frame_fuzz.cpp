// Native IB frames as a switch and a vHCA port receive them from a link:
// peeks (LRH DLID/VL/SL), the switch's VL rewrite, then the HCA's full check
// and decapsulation. Input: [split byte][bit 0: fix the CRCs] frame. A frame that passes must leave
// at least a BTH and never more than it came with.
#include <cstdlib>
#include <vector>

#include "dataplane/wire/frame_peek.hpp"
#include "dataplane/wire/ib_framing.hpp"
#include "dataplane/wire/transport.hpp"
#include "tests/fuzz/frame_fixups.hpp"
#include "tests/fuzz/fuzz_mbuf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vf::fuzz::init_eal();
  if (size < 2) return 0;
  const vf::fuzz::FrameInput in = vf::fuzz::frame_input(data, size, vf::fuzz::fix_ib_crcs);
  const size_t split = in.split;
  data = in.frame.data();
  size = in.frame.size();
  {
    vf::fuzz::FrameMbuf f(data, size, split);
    (void)vf::wire::ib_frame_dlid(f.get());
    (void)vf::wire::ib_frame_sl(f.get());
    auto vl = vf::wire::ib_frame_vl(f.get());
    (void)vf::wire::ib_frame_set_vl(f.get(), uint8_t(vl.value_or(0) ^ 1) & 0xF);
  }
  vf::fuzz::FrameMbuf f(data, size, split);
  vf::wire::RxMeta meta;
  if (vf::wire::ib_decapsulate(f.get(), &meta) == vf::wire::RxError::kOk) {
    const uint32_t left = rte_pktmbuf_pkt_len(f.get());
    if (left < vf::wire::kBthLen || left > size || rte_pktmbuf_data_len(f.get()) != left) std::abort();
  }
  return 0;
}
