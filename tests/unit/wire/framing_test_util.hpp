// mbuf helpers for the framing tests.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <vector>

namespace vf::test {

using Bytes = std::vector<uint8_t>;

// A single-segment mbuf from the test pool holding `data` after
// `headroom` bytes (default: the pool's headroom).
rte_mbuf* mbuf_from(const Bytes& data, uint16_t headroom = RTE_PKTMBUF_HEADROOM);
Bytes mbuf_bytes(const rte_mbuf* m);

// An mbuf whose data is a copy of `data` that ends exactly where a
// PROT_NONE page begins, so reading even one byte past the mbuf's data
// faults. At most 4096 bytes; one guarded mbuf at a time.
rte_mbuf* guarded_mbuf(const Bytes& data);

// Two chained mbufs holding `data` split after `first` bytes.
rte_mbuf* chained_mbuf(const Bytes& data, size_t first);

// Flips one bit, counting from the most significant bit of byte 0.
inline void flip_bit(Bytes& b, size_t bit) { b[bit / 8] ^= uint8_t(0x80 >> (bit % 8)); }

}  // namespace vf::test
