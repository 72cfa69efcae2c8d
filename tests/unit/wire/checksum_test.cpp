// Internet checksums against a plain RFC 1071 loop written here.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "dataplane/wire/checksum.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/udp.hpp"

namespace vf::wire {
namespace {

uint32_t plain_sum(const std::vector<uint8_t>& d, uint32_t acc = 0) {
  for (size_t i = 0; i < d.size(); i += 2)
    acc += uint32_t(d[i]) << 8 | (i + 1 < d.size() ? d[i + 1] : 0);
  while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
  return acc;
}

TEST(Checksum, SumMatchesPlainLoop) {
  std::mt19937 rng(5);
  for (size_t n = 0; n < 300; ++n) {
    std::vector<uint8_t> d(n);
    for (auto& b : d) b = uint8_t(rng());
    EXPECT_EQ(inet_sum(d.data(), n), plain_sum(d)) << n;
  }
  std::vector<uint8_t> ones(64, 0xFF);
  EXPECT_EQ(inet_sum(ones.data(), 64), 0xFFFF);
}

TEST(Checksum, UdpOverIpv6) {
  std::vector<uint8_t> pkt(40 + 8 + 27);
  std::mt19937 rng(6);
  for (auto& b : pkt) b = uint8_t(rng());
  uint8_t* ip = pkt.data();
  uint8_t* u = ip + 40;
  const size_t ulen = pkt.size() - 40;
  udp_set_len(u, uint16_t(ulen));
  udp_set_checksum(u, 0x1234);  // must be ignored
  const uint16_t c = udp_checksum_ipv6(ip, u, ulen);
  // Pseudo-header: src, dst, 32-bit length, 3 zero bytes, next header 17.
  std::vector<uint8_t> ph(ip + 8, ip + 40);
  for (int s = 24; s >= 0; s -= 8) ph.push_back(uint8_t(ulen >> s));
  ph.insert(ph.end(), {0, 0, 0, 17});
  std::vector<uint8_t> seg(u, u + ulen);
  seg[6] = seg[7] = 0;
  ph.insert(ph.end(), seg.begin(), seg.end());
  uint16_t expect = uint16_t(~plain_sum(ph));
  if (expect == 0) expect = 0xFFFF;
  EXPECT_EQ(c, expect);
  udp_set_checksum(u, c);
  EXPECT_TRUE(udp_checksum_ok_ipv6(ip, u, ulen));
  u[20] ^= 1;
  EXPECT_FALSE(udp_checksum_ok_ipv6(ip, u, ulen));
}

TEST(Checksum, UdpOverIpv4) {
  std::vector<uint8_t> pkt(20 + 8 + 13);
  std::mt19937 rng(7);
  for (auto& b : pkt) b = uint8_t(rng());
  uint8_t* ip = pkt.data();
  uint8_t* u = ip + 20;
  const size_t ulen = pkt.size() - 20;
  const uint16_t c = udp_checksum_ipv4(ip, u, ulen);
  std::vector<uint8_t> ph(ip + 12, ip + 20);
  ph.insert(ph.end(), {0, 17, uint8_t(ulen >> 8), uint8_t(ulen)});
  std::vector<uint8_t> seg(u, u + ulen);
  seg[6] = seg[7] = 0;
  ph.insert(ph.end(), seg.begin(), seg.end());
  EXPECT_EQ(c, uint16_t(~plain_sum(ph)) ? uint16_t(~plain_sum(ph)) : 0xFFFF);
  udp_set_checksum(u, c);
  EXPECT_TRUE(udp_checksum_ok_ipv4(ip, u, ulen));
  ip[13] ^= 0x40;  // the pseudo-header covers the addresses
  EXPECT_FALSE(udp_checksum_ok_ipv4(ip, u, ulen));
}

}  // namespace
}  // namespace vf::wire
