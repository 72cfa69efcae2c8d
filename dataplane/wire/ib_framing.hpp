// Native InfiniBand framing: the engine's transport packet (BTH .. pad) in an
// mbuf becomes LRH [+ GRH] + BTH .. pad + ICRC + VCRC, and back.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>

#include "dataplane/wire/rx_error.hpp"
#include "dataplane/wire/rx_meta.hpp"

namespace vf::wire {

struct IbRoute {
  uint16_t slid = 0, dlid = 0;
  uint8_t sl = 0, vl = 0;
  bool grh = false;  // the GRH fields below are used only when set
  uint8_t sgid[16] = {}, dgid[16] = {};
  uint8_t traffic_class = 0, hop_limit = 64;
  uint32_t flow_label = 0;
};

// Frames the single-segment mbuf `m`, whose data is BTH .. pad (a multiple of
// 4 bytes, PadCnt set). Prepends LRH (+ GRH), appends ICRC and VCRC, sets LNH,
// PktLen and GRH PayLen. Returns false, leaving `m` untouched, when `m` is
// segmented, not a whole number of words, shorter than a BTH, too long for
// PktLen, or short of headroom/tailroom.
bool ib_encapsulate(rte_mbuf* m, const IbRoute& route);

// Checks a received IB frame in `m` and strips it to BTH .. pad (LRH, GRH,
// ICRC and VCRC removed). Every field is distrusted; nothing past the mbuf's
// data is read. On success fills `meta` (if not null): slid, dlid, sl and, with
// a GRH, has_grh, sgid, dgid and traffic_class. On failure neither `m` nor
// `meta` changes. Order of checks: lengths, VCRC, LRH, GRH, ICRC.
RxError ib_decapsulate(rte_mbuf* m, RxMeta* meta);

// What a switch does to a frame it forwards: checks the frame's length and
// VCRC (a switch drops a frame with a bad VCRC), then rewrites the VL chosen by
// SL-to-VL mapping and recomputes the VCRC (the ICRC does not cover VL).
// Returns kOk, or why the frame must be dropped (then `m` is unchanged).
RxError ib_frame_set_vl(rte_mbuf* m, uint8_t vl);

}  // namespace vf::wire
