// Shared by the vfabric-bench phases: failing loudly, waiting on a CQ, and the
// same-run cost of the system calls the engine moves data with.
#pragma once

#include <infiniband/verbs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/rc_pair.hpp"

namespace vf::bench {

using Clock = std::chrono::steady_clock;
using vf::test::VerbsSide;

[[noreturn]] inline void die(const std::string& what, int err = errno) {
  std::fprintf(stderr, "vfabric-bench: %s: %s\n", what.c_str(), std::strerror(err));
  std::exit(1);
}

[[noreturn]] inline void die_wc(const char* what, const ibv_wc& wc) {
  std::fprintf(stderr, "vfabric-bench: %s completion failed: %s (wr_id %llu, opcode %d)\n", what,
               ibv_wc_status_str(wc.status), static_cast<unsigned long long>(wc.wr_id),
               int(wc.opcode));
  std::exit(1);
}

// Waits for `n` completions on `s`, returns how many were receives.
inline int wait_cq(VerbsSide& s, int n) {
  ibv_wc wc[16];
  int recvs = 0;
  while (n > 0) {
    int got = ibv_poll_cq(s.cq, n < 16 ? n : 16, wc);
    if (got < 0) die("ibv_poll_cq");
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("a", wc[i]);
      recvs += wc[i].opcode == IBV_WC_RECV;
    }
    n -= got;
  }
  return recvs;
}

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The same-run floor: one process_vm_writev (or readv) of `bytes` within this
// process, in microseconds per call.
inline double vm_copy_us(size_t bytes, int iters, bool write) {
  std::vector<char> src(bytes, 'a'), dst(bytes);
  iovec l{dst.data(), bytes}, r{src.data(), bytes};
  if (write) std::swap(l.iov_base, r.iov_base);
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    const ssize_t n = write ? process_vm_writev(getpid(), &l, 1, &r, 1, 0)
                            : process_vm_readv(getpid(), &l, 1, &r, 1, 0);
    if (n != ssize_t(bytes)) die(write ? "process_vm_writev" : "process_vm_readv");
  }
  return seconds_since(t0) * 1e6 / iters;
}

inline double gbps(size_t bytes, long iters, double secs) {
  return double(bytes) * double(iters) * 8 / secs / 1e9;
}

}  // namespace vf::bench
