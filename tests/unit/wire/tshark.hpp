// Runs Wireshark's tshark on one Ethernet frame and returns the fields asked
// for, comma separated, one line per frame. tshark is independent of this
// code: what it decodes from our bytes is what the standards say they mean.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace vf::wire::test {

struct TsharkResult {
  int status = -1;
  std::string out;
};

inline void put_le(std::FILE* f, uint32_t v, int n) {
  for (int i = 0; i < n; ++i) std::fputc(int(v >> (8 * i)) & 0xFF, f);
}

// `fields`: "-e eth.dst -e arp.opcode ..." (with _ws.malformed to catch a
// frame the dissector rejects).
inline TsharkResult tshark_fields(const uint8_t* frame, size_t len, const std::string& fields) {
  char path[] = "/tmp/vf-tshark-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  std::FILE* f = fdopen(fd, "wb");
  // pcap header (LINKTYPE_ETHERNET), one record header.
  for (auto [v, n] : {std::pair{0xA1B2C3D4u, 4}, {2u, 2}, {4u, 2}, {0u, 4}, {0u, 4}, {65535u, 4}, {1u, 4},
                      {1700000000u, 4}, {0u, 4}, {uint32_t(len), 4}, {uint32_t(len), 4}})
    put_le(f, v, n);
  std::fwrite(frame, 1, len, f);
  std::fclose(f);
  const std::string cmd = std::string("tshark -r ") + path + " -T fields -E separator=, " + fields + " 2>/dev/null";
  TsharkResult r;
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    unlink(path);
    return r;
  }
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  r.status = pclose(p);
  unlink(path);
  return r;
}

}  // namespace vf::wire::test
