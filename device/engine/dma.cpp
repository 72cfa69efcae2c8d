#include "device/engine/dma.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vf::engine {

ProcessMem::~ProcessMem() {
  if (pidfd_ >= 0) close(pidfd_);
}

int ProcessMem::open(pid_t pid) {
  if (pid <= 0) return ESRCH;
  pid_ = pid;
#ifdef SYS_pidfd_open
  int fd = int(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    if (errno == ESRCH) return ESRCH;
    fd = -1;  // old kernel: fall back to trusting the pid (the socket's lifetime)
  }
  pidfd_ = fd;
#endif
  return 0;
}

bool ProcessMem::alive(Nanos now) {
  if (dead_) return false;
  if (pidfd_ < 0) return true;
  if (checked_once_ && now >= checked_at_ && now - checked_at_ < kAliveRecheck) return true;
  pollfd p{pidfd_, POLLIN, 0};
  int r = ::poll(&p, 1, 0);
  if (r > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
    dead_ = true;  // exited: its pid may be reused, never touch it again
    return false;
  }
  checked_at_ = now;
  checked_once_ = true;
  return true;
}

size_t ProcessMem::transfer(bool write, const iovec* local, unsigned nlocal, const iovec* remote,
                            unsigned nremote, Nanos now, uint64_t& calls) {
  if (nlocal == 0 || nremote == 0 || nlocal > kIovMax || nremote > kIovMax) return 0;
  if (!alive(now)) return 0;
  ++calls;
  const ssize_t r = write ? process_vm_writev(pid_, local, nlocal, remote, nremote, 0)
                          : process_vm_readv(pid_, local, nlocal, remote, nremote, 0);
  if (r < 0) {
    if (errno == ESRCH) dead_ = true;
    return 0;
  }
  return size_t(r);
}

size_t ProcessMem::readv(const iovec* local, unsigned nlocal, const iovec* remote,
                         unsigned nremote, Nanos now, uint64_t& calls) {
  return transfer(false, local, nlocal, remote, nremote, now, calls);
}

size_t ProcessMem::writev(const iovec* local, unsigned nlocal, const iovec* remote,
                          unsigned nremote, Nanos now, uint64_t& calls) {
  return transfer(true, local, nlocal, remote, nremote, now, calls);
}

bool ProcessMem::range_mapped(uint64_t addr, uint64_t len, bool need_write) {
  if (dead_ || len == 0) return false;
  const uint64_t end = addr + len;
  if (end < addr) return false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/maps", int(pid_));
  FILE* f = std::fopen(path, "re");
  if (!f) return false;
  // Mappings are listed in address order; walk them and require [addr, end)
  // to be covered without a gap by mappings with the needed permissions.
  uint64_t covered = addr;
  char* line = nullptr;
  size_t cap = 0;
  bool ok = false;
  while (getline(&line, &cap, f) > 0) {
    uint64_t lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &lo, &hi, perms) != 3) break;
    if (hi <= covered) continue;
    if (lo > covered) break;  // gap
    if (perms[0] != 'r' || (need_write && perms[1] != 'w')) break;
    covered = hi;
    if (covered >= end) {
      ok = true;
      break;
    }
  }
  std::free(line);
  std::fclose(f);
  // The pid must still be the process we opened: a pidfd that reports exit
  // means the maps we just read may belong to a stranger.
  if (ok && pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) {
      dead_ = true;
      ok = false;
    }
  }
  return ok;
}

}  // namespace vf::engine
