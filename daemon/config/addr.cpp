#include "daemon/config/addr.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <cstring>

#include "daemon/config/units.hpp"

namespace vf::addr {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<uint32_t> parse_ipv4(std::string_view text) {
  uint32_t ip = 0;
  int parts = 0;
  while (parts < 4) {
    std::size_t dot = text.find('.');
    std::string_view part = text.substr(0, dot);
    auto v = units::parse_uint(part, 255);
    if (!v || part.size() > 3) return std::nullopt;
    ip = (ip << 8) | static_cast<uint32_t>(*v);
    ++parts;
    if (dot == std::string_view::npos) {
      text = {};
      break;
    }
    text.remove_prefix(dot + 1);
  }
  if (parts != 4 || !text.empty()) return std::nullopt;
  return ip;
}

std::string format_ipv4(uint32_t ip) {
  return fmt::format("{}.{}.{}.{}", ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff, ip & 0xff);
}

std::string ipv4_unusable_reason(uint32_t ip) {
  uint32_t a = ip >> 24;
  if (a == 0) return "0.0.0.0/8 is 'this network', not a host address";
  if (a == 127) return "127.0.0.0/8 is loopback";
  if (a >= 224 && a <= 239) return "224.0.0.0/4 is multicast";
  if (ip == 0xffffffffu) return "255.255.255.255 is the broadcast address";
  if (a >= 240) return "240.0.0.0/4 is reserved";
  return {};
}

std::optional<Mac> parse_mac(std::string_view text) {
  if (text.size() != 17) return std::nullopt;
  Mac mac{};
  char sep = text[2];
  if (sep != ':' && sep != '-') return std::nullopt;
  for (int i = 0; i < 6; ++i) {
    int hi = hex_value(text[i * 3]), lo = hex_value(text[i * 3 + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    if (i < 5 && text[i * 3 + 2] != sep) return std::nullopt;
    mac[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return mac;
}

std::string format_prefix(uint32_t ip, uint8_t len) { return format_ipv4(ip) + "/" + std::to_string(len); }

std::string format_mac(const Mac& m) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5]);
}

std::optional<uint64_t> parse_guid(std::string_view text) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  std::string digits;
  if (text.size() == 19) {  // xxxx:xxxx:xxxx:xxxx
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (i % 5 == 4) {
        if (text[i] != ':') return std::nullopt;
      } else {
        digits.push_back(text[i]);
      }
    }
  } else {
    digits.assign(text);
  }
  if (digits.empty() || digits.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : digits) {
    int h = hex_value(c);
    if (h < 0) return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(h);
  }
  return v;
}

std::string format_guid_sysfs(uint64_t g) {
  return fmt::format("{:04x}:{:04x}:{:04x}:{:04x}", (g >> 48) & 0xffff, (g >> 32) & 0xffff,
                     (g >> 16) & 0xffff, g & 0xffff);
}

std::string format_guid_hex(uint64_t g) { return fmt::format("0x{:016x}", g); }

std::optional<Gid> parse_ipv6(std::string_view text) {
  if (text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  std::string s(text);
  Gid gid{};
  if (inet_pton(AF_INET6, s.c_str(), gid.data()) != 1) return std::nullopt;
  return gid;
}

std::string format_gid_sysfs(const Gid& g) {
  std::string out;
  out.reserve(39);
  for (int i = 0; i < 8; ++i) {
    if (i) out.push_back(':');
    out += fmt::format("{:02x}{:02x}", g[i * 2], g[i * 2 + 1]);
  }
  return out;
}

std::string format_gid_short(const Gid& g) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, g.data(), buf, sizeof buf);
  return buf;
}

Gid make_gid(uint64_t prefix, uint64_t iid) {
  Gid g{};
  for (int i = 0; i < 8; ++i) {
    g[i] = static_cast<uint8_t>(prefix >> (56 - 8 * i));
    g[8 + i] = static_cast<uint8_t>(iid >> (56 - 8 * i));
  }
  return g;
}

Gid ipv4_mapped_gid(uint32_t ip) {
  Gid g{};
  g[10] = 0xff;
  g[11] = 0xff;
  g[12] = static_cast<uint8_t>(ip >> 24);
  g[13] = static_cast<uint8_t>(ip >> 16);
  g[14] = static_cast<uint8_t>(ip >> 8);
  g[15] = static_cast<uint8_t>(ip);
  return g;
}

uint64_t eui64_from_mac(const Mac& m) {
  return static_cast<uint64_t>(m[0] ^ 0x02) << 56 | static_cast<uint64_t>(m[1]) << 48 |
         static_cast<uint64_t>(m[2]) << 40 | 0xffULL << 32 | 0xfeULL << 24 |
         static_cast<uint64_t>(m[3]) << 16 | static_cast<uint64_t>(m[4]) << 8 | m[5];
}

}  // namespace vf::addr
