// Frames and sinks for the dataplane tests. Frames carry a 32-bit tag at
// kTagOffset so a test can tell which one arrived when.
#pragma once

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <deque>
#include <cstring>
#include <vector>

#include "dataplane/fabric/link.hpp"
#include "dataplane/fabric/port.hpp"
#include "dataplane/wire/bytes.hpp"
#include "tests/support/eal_env.hpp"

namespace vf::dp::test {

inline constexpr uint32_t kTagOffset = 20;

inline rte_mbuf* make_frame(uint32_t len, uint32_t tag = 0) {
  rte_mbuf* m = rte_pktmbuf_alloc(vf::test::test_mbuf_pool());
  if (!m) return nullptr;
  auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, uint16_t(len)));
  std::memset(p, 0, len);
  if (len >= kTagOffset + 4) wire::put32(p + kTagOffset, tag);
  return m;
}

// Just enough LRH for the fabric: VL, SL, DLID (no CRCs).
inline rte_mbuf* make_ib(uint32_t len, uint8_t vl, uint8_t sl, uint16_t dlid, uint32_t tag = 0) {
  rte_mbuf* m = make_frame(len, tag);
  auto* p = rte_pktmbuf_mtod(m, uint8_t*);
  p[0] = uint8_t(vl << 4 | 0x0);
  p[1] = uint8_t(sl << 4 | 0x2);
  wire::put16(p + 2, dlid);
  return m;
}

// Ethernet header; pcp < 0 = untagged.
inline rte_mbuf* make_eth(uint32_t len, const Mac& dst, int pcp, uint32_t tag = 0) {
  rte_mbuf* m = make_frame(len, tag);
  auto* p = rte_pktmbuf_mtod(m, uint8_t*);
  std::memcpy(p, dst.data(), 6);
  if (pcp >= 0) {
    wire::put16(p + 12, 0x8100);
    wire::put16(p + 14, uint16_t(pcp << 13 | 1));
    wire::put16(p + 16, 0x0800);
  } else {
    wire::put16(p + 12, 0x0800);
  }
  return m;
}

inline uint32_t tag_of(const rte_mbuf* m) {
  return rte_pktmbuf_data_len(m) >= kTagOffset + 4
             ? wire::get32(rte_pktmbuf_mtod(m, const uint8_t*) + kTagOffset)
             : 0;
}

// A receiving port's owner: keeps what arrives until the test lets it go (per
// class, as a congested switch would), or frees at once when `hold` is off
// for that class.
struct Holder {
  std::array<bool, kNumClasses> hold{};
  std::vector<std::deque<rte_mbuf*>> held = std::vector<std::deque<rte_mbuf*>>(kNumClasses);
  std::vector<uint32_t> tags;  // in arrival order
  Port* port = nullptr;

  static void on_rx(void* self, Port& p, rte_mbuf* m, unsigned cls) {
    auto& h = *static_cast<Holder*>(self);
    h.tags.push_back(tag_of(m));
    if (h.hold[cls]) {
      h.held[cls].push_back(m);
      return;
    }
    const uint32_t bytes = rte_pktmbuf_pkt_len(m);
    rte_pktmbuf_free(m);
    p.release(cls, bytes);
  }
  void let_go(unsigned cls) {
    while (!held[cls].empty()) {
      rte_mbuf* m = held[cls].front();
      held[cls].pop_front();
      const uint32_t bytes = rte_pktmbuf_pkt_len(m);
      rte_pktmbuf_free(m);
      port->release(cls, bytes);
    }
  }
  ~Holder() {
    for (auto& q : held)
      for (rte_mbuf* m : q) rte_pktmbuf_free(m);
  }
};

struct Arrival {
  Nanos at;
  uint32_t tag;
  unsigned cls;
  uint8_t byte0;  // LRH VL nibble lives here
};

// Records what arrives, then frees it. Usable as a link's FrameSink or as the
// owner of a bare Port standing in for a host.
struct Recorder {
  explicit Recorder(Scheduler& s) : sched(&s) {}
  Scheduler* sched;
  std::vector<Arrival> got;

  void take(rte_mbuf* m, unsigned cls) {
    got.push_back({sched->now(), tag_of(m), cls, rte_pktmbuf_mtod(m, const uint8_t*)[0]});
    rte_pktmbuf_free(m);
  }
  static void on_frame(void* self, rte_mbuf* m) { static_cast<Recorder*>(self)->take(m, 0); }
  static void on_port(void* self, Port& p, rte_mbuf* m, unsigned cls) {
    const uint32_t bytes = rte_pktmbuf_pkt_len(m);
    static_cast<Recorder*>(self)->take(m, cls);
    p.release(cls, bytes);
  }
  FrameSink sink() { return FrameSink{&Recorder::on_frame, this}; }
  void own(Port& p) { p.set_owner(this, &Recorder::on_port); }

  std::vector<uint32_t> tags() const {
    std::vector<uint32_t> t;
    for (const Arrival& a : got) t.push_back(a.tag);
    return t;
  }
};

}  // namespace vf::dp::test
