#include "tests/fuzz/fuzz_mbuf.hpp"

#include <rte_eal.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace vf::fuzz {
namespace {

rte_mempool* pool() {
  static rte_mempool* p = [] {
    rte_mempool* m = rte_pktmbuf_pool_create("vf_fuzz_pool", 255, 0, 0, RTE_PKTMBUF_HEADROOM, SOCKET_ID_ANY);
    if (!m) std::abort();
    return m;
  }();
  return p;
}

void no_free(void*, void*) {}  // the buffer belongs to the Segment

}  // namespace

void init_eal() {
  static bool done = [] {
    std::vector<std::string> args = {"vf_fuzz", "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry",
                                     "-m", "64", "--log-level=lib.eal:error", "--file-prefix=vf_fuzz"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    if (rte_eal_init(int(argv.size()), argv.data()) < 0) std::abort();
    return true;
  }();
  (void)done;
}

void FrameMbuf::attach(Segment& s, const uint8_t* data, size_t size) {
  s.buf.reset(new uint8_t[size ? size : 1]);
  if (size) std::memcpy(s.buf.get(), data, size);
  s.shinfo.free_cb = no_free;
  rte_mbuf_ext_refcnt_set(&s.shinfo, 1);
  s.m = rte_pktmbuf_alloc(pool());
  if (!s.m) std::abort();
  rte_pktmbuf_attach_extbuf(s.m, s.buf.get(), 0, uint16_t(size), &s.shinfo);
  if (!rte_pktmbuf_append(s.m, uint16_t(size)) && size) std::abort();
}

FrameMbuf::FrameMbuf(const uint8_t* data, size_t size, size_t split) {
  if (size > UINT16_MAX) size = UINT16_MAX;
  if (split == 0 || split >= size) {
    attach(a_, data, size);
    head_ = a_.m;
    return;
  }
  attach(a_, data, split);
  attach(b_, data + split, size - split);
  if (rte_pktmbuf_chain(a_.m, b_.m) != 0) std::abort();
  b_.m = nullptr;  // freed with the chain
  head_ = a_.m;
}

FrameMbuf::~FrameMbuf() { rte_pktmbuf_free(head_); }

}  // namespace vf::fuzz
