// Vocabulary every layer shares, each defined once: the link layer of a port,
// link-layer and network addresses, and the management VL. The dataplane,
// the engine and the daemon all speak in these (the engine and the provider
// translate to libibverbs' encodings only where they meet an app).
#pragma once

#include <array>
#include <cstdint>

namespace vf {

enum class LinkLayer : uint8_t { kInfiniBand, kEthernet };

using Mac = std::array<uint8_t, 6>;
using Gid = std::array<uint8_t, 16>;  // IB GID, or a RoCE IP address (IPv4 as ::ffff:a.b.c.d)

inline constexpr uint8_t kVl15 = 15;  // subnet management; never flow controlled (IBA 7.6.4)
inline constexpr unsigned kNumSls = 16;

}  // namespace vf
