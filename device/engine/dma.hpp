// "DMA" into and out of an app: process_vm_readv/writev against the pid of the
// client that registered the memory, never any other process. A system call
// costs microseconds on a VM -- far more than the copy -- so callers batch:
// the requester fills a whole burst of packets with one read, the responder
// places a whole receive burst of one client with one write.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "dataplane/scheduler.hpp"
#include "device/abi/vhca_abi.h"

namespace vf::engine {

// The memory of one client process. Holds a pidfd so a pid that died and was
// reused is never touched: liveness is re-checked (cheaply, at most every
// kAliveRecheck of engine time) before any transfer.
class ProcessMem {
 public:
  ProcessMem() = default;
  ~ProcessMem();
  ProcessMem(const ProcessMem&) = delete;
  ProcessMem& operator=(const ProcessMem&) = delete;

  int open(pid_t pid);  // 0, ESRCH
  pid_t pid() const { return pid_; }
  bool alive(Nanos now);
  bool dead() const { return dead_; }

  // One process_vm_readv (remote -> local) or process_vm_writev (local ->
  // remote) over at most kIovMax pieces a side, both sides the same total
  // length. Returns the bytes moved: the kernel copies in order and stops at
  // the first page it cannot reach, so a short count says exactly which byte
  // failed and that everything before it arrived. 0 when the process is gone.
  // `calls` is incremented for each system call made.
  size_t readv(const iovec* local, unsigned nlocal, const iovec* remote, unsigned nremote,
               Nanos now, uint64_t& calls);
  size_t writev(const iovec* local, unsigned nlocal, const iovec* remote, unsigned nremote,
                Nanos now, uint64_t& calls);

  // Whether [addr, addr+len) is mapped in the process, readable, and writable
  // when `need_write`. Reads /proc/<pid>/maps (slow path only).
  bool range_mapped(uint64_t addr, uint64_t len, bool need_write);

  static constexpr Nanos kAliveRecheck = 100'000;
  static constexpr unsigned kIovMax = 1024;  // IOV_MAX: the kernel's limit per side

 private:
  size_t transfer(bool write, const iovec* local, unsigned nlocal, const iovec* remote,
                  unsigned nremote, Nanos now, uint64_t& calls);

  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool dead_ = false;
  Nanos checked_at_ = 0;
  bool checked_once_ = false;
};

// Collects the pieces of a transfer into caller-provided storage. A piece
// that continues the previous one is merged into it, so the consecutive
// packets of one buffer cost the kernel a single iovec.
struct IoList {
  IoList(iovec* storage, unsigned capacity) : iov(storage), cap(capacity) {}
  iovec* iov;
  unsigned cap;
  unsigned n = 0;
  size_t bytes = 0;
  // False (nothing added) when the storage is full.
  bool add(uint64_t addr, size_t len) {
    if (len == 0) return true;
    if (n && reinterpret_cast<uint64_t>(iov[n - 1].iov_base) + iov[n - 1].iov_len == addr) {
      iov[n - 1].iov_len += len;
    } else {
      if (n == cap) return false;
      iov[n].iov_base = reinterpret_cast<void*>(addr);
      iov[n].iov_len = len;
      ++n;
    }
    bytes += len;
    return true;
  }
  // Back to an earlier (n, bytes): undoes the adds of a packet that failed.
  // The merged tail piece is trimmed back to its earlier length.
  void truncate(unsigned old_n, size_t old_bytes) {
    if (old_n && n >= old_n) {
      size_t tail = 0;
      for (unsigned i = 0; i + 1 < old_n; ++i) tail += iov[i].iov_len;
      iov[old_n - 1].iov_len = old_bytes - tail;
    }
    n = old_n;
    bytes = old_bytes;
  }
};

}  // namespace vf::engine
