// "DMA" into and out of an app: process_vm_readv/writev against the pid of the
// client that registered the memory, never any other process. Every transfer
// is batched: one syscall moves a packet's payload across all its SGE pieces.
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

  // Reads `len` bytes described by `remote` (n pieces) into `dst`. Returns
  // true only if every byte moved.
  bool read(const iovec* remote, unsigned n, void* dst, size_t len, Nanos now);
  // Writes the `nlocal` local pieces to the `nremote` remote pieces (equal
  // total length). Returns true only if every byte moved.
  bool write(const iovec* local, unsigned nlocal, const iovec* remote, unsigned nremote,
             Nanos now);

  // Whether [addr, addr+len) is mapped in the process, readable, and writable
  // when `need_write`. Reads /proc/<pid>/maps (slow path only).
  bool range_mapped(uint64_t addr, uint64_t len, bool need_write);

  static constexpr Nanos kAliveRecheck = 100'000;

 private:
  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool dead_ = false;
  Nanos checked_at_ = 0;
  bool checked_once_ = false;
};

// Collects the remote pieces of one transfer (at most one per SGE).
struct IoList {
  iovec iov[VHCA_MAX_SGE];
  unsigned n = 0;
  size_t bytes = 0;
  void add(uint64_t addr, size_t len) {
    iov[n].iov_base = reinterpret_cast<void*>(addr);
    iov[n].iov_len = len;
    ++n;
    bytes += len;
  }
};

}  // namespace vf::engine
