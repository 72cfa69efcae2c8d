// The subnet management agent of every node (IBA 14.2.5): a vHCA port's and
// a switch's. It answers SubnGet from the model of the fabric as it is now;
// the fabric's own SM programs the switches directly, so what it set is
// exactly what these attributes read back. SubnSet is refused the way a
// port whose M_Key protects it refuses a requester without the key: no
// response at all (the requester times out) -- only fabricd's SM holds it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "daemon/mad/mad.hpp"
#include "daemon/mad/model.hpp"

namespace vf::mad {

enum class Verdict : uint8_t { kRespond, kDrop };

// Turns the SMP `m` that node `node` received on port `in_port` (a switch's
// port 0 when it was addressed to the switch itself) into its response, in
// place: method GetResp, the status, the attribute. The caller handles the
// directed-route fields.
Verdict sma_process(const MadModel& model, size_t node, uint8_t in_port, Mad& m);

// Attribute `attr` (modifier `mod`) of node `node` as its SMA reads it when
// asked through port `in_port`, into the 64 bytes at `out`: 0, or the MAD
// status saying why there is none. The SA builds its records from these.
uint16_t sma_attribute(const MadModel& model, size_t node, uint16_t attr, uint32_t mod, uint8_t in_port,
                       uint8_t* out);

// The IBA encodings sma_process uses, for the model builder and tests.
uint8_t vl_cap_code(uint8_t data_vls);  // 1, 2, 4, 8, 15 VLs -> 1..5

}  // namespace vf::mad
