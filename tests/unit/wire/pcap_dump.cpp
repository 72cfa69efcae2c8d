// Writes sample frames built by the framing code to pcap files, so a capture
// tool can check them: roce.pcap (DLT_EN10MB) and ib.pcap (DLT_INFINIBAND,
// 247). Usage: wire_pcap_dump DIR. A one-off verification aid, not a test.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "dataplane/wire/framing.hpp"
#include "dataplane/wire/transport.hpp"
#include "eal_init.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

void put_le(std::FILE* f, uint32_t v, int n) {
  for (int i = 0; i < n; ++i) std::fputc(int(v >> (8 * i)) & 0xFF, f);
}

void write_pcap(const std::string& path, uint32_t linktype, const std::vector<Bytes>& frames) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  put_le(f, 0xA1B2C3D4, 4);  // classic pcap, microseconds
  put_le(f, 2, 2);
  put_le(f, 4, 2);
  put_le(f, 0, 4);
  put_le(f, 0, 4);
  put_le(f, 65535, 4);
  put_le(f, linktype, 4);
  uint32_t ts = 1700000000;
  for (const Bytes& b : frames) {
    put_le(f, ts++, 4);
    put_le(f, 0, 4);
    put_le(f, uint32_t(b.size()), 4);
    put_le(f, uint32_t(b.size()), 4);
    std::fwrite(b.data(), 1, b.size(), f);
  }
  std::fclose(f);
}

Bytes transport(uint8_t opcode, size_t payload, size_t ext) {
  const size_t pad = (4 - payload % 4) % 4;
  Bytes t(vf::wire::kBthLen + ext + payload + pad, 0);
  vf::wire::bth_set_opcode(t.data(), opcode);
  vf::wire::bth_set_padcnt(t.data(), unsigned(pad));
  vf::wire::bth_set_pkey(t.data(), 0xFFFF);
  vf::wire::bth_set_dqpn(t.data(), 0x11);
  vf::wire::bth_set_ackreq(t.data(), true);
  vf::wire::bth_set_psn(t.data(), 0x123456);
  if (ext == vf::wire::kRethLen) vf::wire::reth_set(t.data() + 12, 0x7F0000001000ull, 0x1234, uint32_t(payload));
  if (ext == vf::wire::kDethLen) vf::wire::deth_set(t.data() + 12, 0x11111111, 0x22);
  for (size_t i = 0; i < payload; ++i) t[vf::wire::kBthLen + ext + i] = uint8_t('a' + i % 26);
  return t;
}

template <class F>
Bytes framed(rte_mempool* pool, const Bytes& t, F frame) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  std::memcpy(rte_pktmbuf_append(m, uint16_t(t.size())), t.data(), t.size());
  if (!frame(m)) std::exit(2);
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  Bytes b(p, p + rte_pktmbuf_data_len(m));
  rte_pktmbuf_free(m);
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 1;
  }
  rte_mempool* pool = vf::test::init_eal_and_pool("vf_wire_pcap");
  using namespace vf::wire;
  const std::vector<Bytes> samples = {
      transport(0x04, 13, 0),          // RC SEND_ONLY
      transport(0x0A, 1024, kRethLen),  // RC RDMA WRITE_ONLY
      transport(0x64, 256, kDethLen),   // UD SEND_ONLY
  };

  RoceRoute v4;
  const uint8_t mac_a[6] = {0x02, 0, 0, 0, 0, 0x0A}, mac_b[6] = {0x02, 0, 0, 0, 0, 0x0B};
  std::memcpy(v4.src_mac, mac_a, 6);
  std::memcpy(v4.dst_mac, mac_b, 6);
  const uint8_t s4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
  const uint8_t d4[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 2};
  std::memcpy(v4.sgid, s4, 16);
  std::memcpy(v4.dgid, d4, 16);
  v4.traffic_class = 0x6A;
  RoceRoute v4tag = v4;
  v4tag.vlan = true;
  v4tag.vid = 100;
  v4tag.pcp = 3;
  RoceRoute v6 = v4;
  const uint8_t s6[16] = {0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const uint8_t d6[16] = {0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  std::memcpy(v6.sgid, s6, 16);
  std::memcpy(v6.dgid, d6, 16);

  std::vector<Bytes> roce;
  for (const RoceRoute* r : {&v4, &v4tag, &v6})
    for (const Bytes& t : samples) roce.push_back(framed(pool, t, [&](rte_mbuf* m) { return roce_encapsulate(m, *r); }));

  IbRoute local;
  local.slid = 7;
  local.dlid = 5;
  local.sl = 2;
  local.vl = 3;
  IbRoute global = local;
  global.grh = true;
  global.traffic_class = 0xB8;
  global.flow_label = 0x12345;
  global.hop_limit = 5;
  std::memcpy(global.sgid, s6, 16);
  std::memcpy(global.dgid, d6, 16);
  std::vector<Bytes> ib;
  for (const IbRoute* r : {&local, &global})
    for (const Bytes& t : samples) ib.push_back(framed(pool, t, [&](rte_mbuf* m) { return ib_encapsulate(m, *r); }));

  const std::string dir = argv[1];
  write_pcap(dir + "/roce.pcap", 1, roce);
  write_pcap(dir + "/ib.pcap", 247, ib);
  std::printf("wrote %zu RoCEv2 frames to %s/roce.pcap and %zu IB frames to %s/ib.pcap\n", roce.size(),
              dir.c_str(), ib.size(), dir.c_str());
  return 0;
}
