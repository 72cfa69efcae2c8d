// Addresses a vHCA carries — IPv4, MAC, GUID, GID — with strict parsers and
// the exact text forms Linux uses (sysfs, ibstat, ip), so the runtime tree and
// fabricctl print what users already know from real hardware.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vf::addr {

using Mac = std::array<uint8_t, 6>;
using Gid = std::array<uint8_t, 16>;  // network byte order, like ibv_gid.raw

// Dotted quad, four decimal octets without leading zeros. Host byte order.
std::optional<uint32_t> parse_ipv4(std::string_view text);
std::string format_ipv4(uint32_t ip);
// The netmask of a /len prefix (0..32), host byte order.
inline uint32_t ipv4_mask(uint8_t len) { return len ? ~0u << (32 - len) : 0; }
// "198.18.0.0/24"
std::string format_prefix(uint32_t ip, uint8_t len);
// Why an address cannot be a host's unicast address (0/8, loopback,
// multicast, reserved, broadcast), or empty if it can.
std::string ipv4_unusable_reason(uint32_t ip);

// "02:00:5e:10:00:01" (or '-' separated). nullopt for malformed text.
std::optional<Mac> parse_mac(std::string_view text);
std::string format_mac(const Mac& mac);

// "0x0002c903000a1b2c", "0002:c903:000a:1b2c" (sysfs), or a bare hex run.
std::optional<uint64_t> parse_guid(std::string_view text);
std::string format_guid_sysfs(uint64_t guid);  // "0002:c903:000a:1b2c"
std::string format_guid_hex(uint64_t guid);    // "0x0002c903000a1b2c"

// IPv6 text ("fe80::") -> 16 bytes.
std::optional<Gid> parse_ipv6(std::string_view text);
// "fe80:0000:0000:0000:0202:c9ff:fe03:0a1b" — the kernel's %pI6, which
// libibverbs parses back at fixed 5-character strides.
std::string format_gid_sysfs(const Gid& gid);
// "fe80::202:c9ff:fe03:a1b", "::ffff:198.18.0.1" (inet_ntop).
std::string format_gid_short(const Gid& gid);

// GID = 64-bit subnet prefix + 64-bit interface id (port GUID).
Gid make_gid(uint64_t prefix, uint64_t interface_id);
// ::ffff:a.b.c.d, the RoCE v2 GID of an IPv4 address.
Gid ipv4_mapped_gid(uint32_t ip);
// Modified EUI-64 interface id from a MAC (RFC 4291 appendix A): insert
// ff:fe in the middle and flip the universal/local bit.
uint64_t eui64_from_mac(const Mac& mac);

}  // namespace vf::addr
