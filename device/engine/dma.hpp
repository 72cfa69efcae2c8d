// "DMA" into and out of an app, under the kernel's rules.
//
// Trust model (docs/security.md): fabricd touches only the address space that
// the app itself handed over at OPEN_CONTEXT, as an open /proc/self/mem. The
// kernel checked that open (a process may always open its own), the file
// stays bound to that one address space (mm), and once the process execs or
// exits the mm is gone and every access through the file moves 0 bytes -- so
// an exec'd setuid image, a reused pid or another user's process can never be
// reached, whatever the app's fds or pids do afterwards.
//
// Copies take one of two paths. Direct: process_vm_readv/writev, the fast
// one (one call moves many pieces, no bounce page); fabricd holds no
// CAP_SYS_PTRACE, so the kernel allows it only where fabricd's own
// credentials may ptrace the target (same uid/gid, dumpable) and refuses it
// (EPERM) for everyone else. Through the file: preadv/pwritev on the mem fd,
// which works for any client but costs a call per remote piece and copies
// page by page. A client starts on the direct path and moves to the file for
// good on the first EPERM. The direct path still needs to know the image is
// the one that registered: the mm behind the file is checked at most every
// kAliveRecheck of engine time (an exec by a process fabricd may ptrace
// anyway is the only thing that window can reach).
//
// A system call costs microseconds on a VM -- far more than the copy -- so
// callers batch: the requester fills a whole burst of packets with one read,
// the responder places a whole receive burst of one client with one write.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/scheduler.hpp"
#include "device/abi/vhca_abi.h"

namespace vf::engine {

class ProcessMem {
 public:
  ProcessMem() = default;
  ~ProcessMem();
  ProcessMem(const ProcessMem&) = delete;
  ProcessMem& operator=(const ProcessMem&) = delete;

  // Takes ownership of mem_fd, which must be /proc/<pid>/mem of that very
  // process, open read-write. 0; EACCES when the fd is anything else; ESRCH
  // when the process is gone.
  int open(pid_t pid, int mem_fd);
  pid_t pid() const { return pid_; }
  bool alive(Nanos now);
  bool dead() const { return dead_; }
  // Tests: use the file path from the start, as for another user's client.
  void force_file_path() { direct_ = false; }
  // The client is this very process (an in-process app of the virtual-time
  // fabric): copies become memcpy, no system call. Its registered memory
  // must then stay mapped -- an unmapped page faults here instead of ending
  // the copy short. False (nothing changes) for any other process.
  bool copy_in_process();
  bool in_process() const { return in_process_; }
  bool direct() const { return direct_; }

  // One transfer (remote -> local for readv, local -> remote for writev) over
  // at most kIovMax pieces a side, both sides the same total length. Returns
  // the bytes moved: copying goes in order and stops at the first page that
  // cannot be reached, so a short count says exactly which byte failed and
  // that everything before it arrived. 0 when the process is gone. `calls` is
  // incremented for each system call made.
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
  size_t through_file(bool write, const iovec* local, unsigned nlocal, const iovec* remote,
                      unsigned nremote, uint64_t& calls);
  bool mm_alive();
  static size_t copy_here(bool write, const iovec* local, unsigned nlocal, const iovec* remote, unsigned nremote);

  pid_t pid_ = -1;
  bool in_process_ = false;
  int mem_fd_ = -1;
  bool direct_ = true;
  bool dead_ = false;
  Nanos checked_at_ = 0;
  bool checked_once_ = false;
};

// Whether `fd` is /proc/<pid>/mem of `pid`, open read-write: what a client
// must hand over at OPEN_CONTEXT. 0, EACCES, or ESRCH (the process is gone).
int check_mem_fd(int fd, pid_t pid);

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
