// How many packet buffers fabricd's one mbuf pool holds, sized from the
// fabric it runs. Every mbuf is touched when the pool is made (DPDK writes
// each header), so a pool far larger than the fabric costs start-up time --
// 0.3 s of a 0.7 s start for 32767 of them on a two-port lab -- and a pool
// too small makes senders wait for buffers. What can be in flight at once:
// each linked port's egress queues, the bandwidth-delay product of each
// link in both directions, and the frames the engines and ports make
// themselves (ACKs, CNPs, credit updates, pauses, ARP). When the pool runs
// dry the engine sends later and a switch skips a flood or multicast copy
// (`flood_no_mbuf`); `fabricctl status` shows the pool's size and use. The
// EAL's memory (-m) may hold fewer: Eal then makes the largest pool that
// fits, down to kMinPoolMbufs, and says so.
#pragma once

#include <cstdint>

#include "daemon/config/config.hpp"

namespace vf {

inline constexpr uint32_t kMbufsPerPort = 512;     // two full class queues of 256 frames
inline constexpr uint32_t kMbufsReserve = 2048;    // frames engines and ports make themselves
inline constexpr uint32_t kMinPoolMbufs = 4095;    // DPDK's best sizes are 2^n - 1
inline constexpr uint32_t kMaxPoolMbufs = 262143;  // 1.2 GiB of 4.9 KiB buffers

// Frames a link holds on the wire in one direction at its rate and delay,
// counted in full path-MTU frames (the bulk traffic that fills a pipe).
uint64_t link_flight_frames(config::LinkLayer ll, const config::Link& l);

// 2^n - 1 buffers covering every port and link of every fabric, within
// [kMinPoolMbufs, kMaxPoolMbufs].
uint32_t mbuf_pool_size(const config::Config& cfg);

}  // namespace vf
