#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "framing_test_util.hpp"
#include "tests/support/eal_env.hpp"

namespace vf::test {

rte_mbuf* mbuf_from(const Bytes& data, uint16_t headroom) {
  rte_mbuf* m = rte_pktmbuf_alloc(test_mbuf_pool());
  if (!m) std::abort();
  m->data_off = headroom;
  char* p = rte_pktmbuf_append(m, uint16_t(data.size()));
  if (!p) std::abort();
  std::memcpy(p, data.data(), data.size());
  return m;
}

Bytes mbuf_bytes(const rte_mbuf* m) {
  const uint8_t* p = rte_pktmbuf_mtod(m, const uint8_t*);
  return Bytes(p, p + rte_pktmbuf_data_len(m));
}

namespace {

void no_free(void*, void*) {}

struct GuardPages {
  uint8_t* base;
  size_t page;
  GuardPages() : page(size_t(sysconf(_SC_PAGESIZE))) {
    void* p = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    base = static_cast<uint8_t*>(p);
    if (mprotect(base + page, page, PROT_NONE) != 0) std::abort();
  }
};

}  // namespace

rte_mbuf* guarded_mbuf(const Bytes& data) {
  static GuardPages g;
  static rte_mbuf_ext_shared_info shinfo;
  if (data.size() > g.page) std::abort();
  uint8_t* start = g.base + g.page - data.size();
  if (!data.empty()) std::memcpy(start, data.data(), data.size());
  shinfo.free_cb = no_free;
  shinfo.fcb_opaque = nullptr;
  rte_mbuf_ext_refcnt_set(&shinfo, 1);
  rte_mbuf* m = rte_pktmbuf_alloc(test_mbuf_pool());
  if (!m) std::abort();
  rte_pktmbuf_attach_extbuf(m, start, 0, uint16_t(data.size()), &shinfo);
  if (!rte_pktmbuf_append(m, uint16_t(data.size())) && !data.empty()) std::abort();
  return m;
}

rte_mbuf* chained_mbuf(const Bytes& data, size_t first) {
  rte_mbuf* a = mbuf_from(Bytes(data.begin(), data.begin() + long(first)));
  rte_mbuf* b = mbuf_from(Bytes(data.begin() + long(first), data.end()));
  if (rte_pktmbuf_chain(a, b) != 0) std::abort();
  return a;
}

}  // namespace vf::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new vf::test::EalEnvironment);
  return RUN_ALL_TESTS();
}
