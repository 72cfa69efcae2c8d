#include "tests/fuzz/frame_fixups.hpp"

#include "dataplane/wire/eth.hpp"
#include "dataplane/wire/icrc.hpp"
#include "dataplane/wire/ipv4.hpp"
#include "dataplane/wire/lrh.hpp"
#include "dataplane/wire/transport.hpp"
#include "dataplane/wire/udp.hpp"

namespace vf::fuzz {

using namespace vf::wire;

void fix_ib_crcs(std::vector<uint8_t>& f) {
  if (f.size() < kLrhLen) return;
  const bool global = (f[1] & 0x3) == 0x3;
  const size_t n = f.size();
  if (n < kLrhLen + (global ? 40 : 0) + kBthLen + 6) return;
  icrc_store(f.data() + n - 6, icrc_ib(f.data(), n - 6));
  vcrc_store(f.data() + n - 2, vcrc(f.data(), n - 2));
}

void fix_roce_crcs(std::vector<uint8_t>& f) {
  size_t l3 = kEthHdrLen;
  if (f.size() >= 18 && f[12] == 0x81 && f[13] == 0x00) l3 += 4;
  if (f.size() < l3 + 1) return;
  uint8_t* ip = f.data() + l3;
  size_t hdr = 40;  // IPv6
  if (ipv4_version(ip) == 4) {
    hdr = size_t(ipv4_ihl(ip)) * 4;
    if (hdr < kIpv4HdrLen || f.size() < l3 + hdr) return;
    ipv4_set_checksum(ip, 0);
    ipv4_set_checksum(ip, ipv4_compute_checksum(ip));
  } else if (ip[0] >> 4 != 6) {
    return;
  }
  if (f.size() < l3 + hdr + 8 + kBthLen + 4) return;
  udp_set_checksum(ip + hdr, 0);
  const size_t n = f.size();
  icrc_store(f.data() + n - 4, icrc_roce(ip, n - 4 - l3));
}

FrameInput frame_input(const uint8_t* data, size_t size, void (*fix)(std::vector<uint8_t>&)) {
  FrameInput in{data[0], std::vector<uint8_t>(data + 2, data + size)};
  if (data[1] & 1) fix(in.frame);
  return in;
}

}  // namespace vf::fuzz
