#include "device/engine/dma.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vf::engine {

int check_mem_fd(int fd, pid_t pid) {
  if (fd < 0 || pid <= 0) return EACCES;
  struct statfs fs{};
  if (fstatfs(fd, &fs) || fs.f_type != PROC_SUPER_MAGIC) return EACCES;
  const int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_ACCMODE) != O_RDWR) return EACCES;
  char link[64], want[64], got[128];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  std::snprintf(want, sizeof(want), "/proc/%d/mem", int(pid));
  const ssize_t n = readlink(link, got, sizeof(got) - 1);
  if (n < 0) return EACCES;
  got[n] = '\0';
  if (std::strcmp(got, want) == 0) return 0;  // whether it still lives: ProcessMem::mm_alive
  // A process that has exited leaves "/proc/<pid>/mem (deleted)".
  return std::strncmp(got, want, std::strlen(want)) == 0 ? ESRCH : EACCES;
}

ProcessMem::~ProcessMem() {
  if (mem_fd_ >= 0) close(mem_fd_);
}

int ProcessMem::open(pid_t pid, int mem_fd) {
  if (int err = check_mem_fd(mem_fd, pid)) {
    if (mem_fd >= 0) close(mem_fd);
    return err;
  }
  pid_ = pid;
  mem_fd_ = mem_fd;
  if (!mm_alive()) return ESRCH;
  return 0;
}

// The address space behind the file: a read at address 0 (never mapped for
// an ordinary process) fails with EIO while it exists and moves 0 bytes once
// it is gone (exec or exit), which is what the kernel tells us and nothing
// a client can fake.
bool ProcessMem::mm_alive() {
  char b;
  if (pread(mem_fd_, &b, 1, 0) == 0) dead_ = true;
  return !dead_;
}

bool ProcessMem::alive(Nanos now) {
  if (dead_) return false;
  if (checked_once_ && now >= checked_at_ && now - checked_at_ < kAliveRecheck) return true;
  if (!mm_alive()) return false;
  checked_at_ = now;
  checked_once_ = true;
  return true;
}

size_t ProcessMem::through_file(bool write, const iovec* local, unsigned nlocal,
                                const iovec* remote, unsigned nremote, uint64_t& calls) {
  // /proc/<pid>/mem takes one remote offset a call: walk the remote pieces,
  // each with the slice of the local list that lines up with it.
  iovec slice[kIovMax];
  unsigned li = 0;
  size_t loff = 0, total = 0;
  for (unsigned ri = 0; ri < nremote; ++ri) {
    size_t want = remote[ri].iov_len;
    if (want == 0) continue;
    unsigned ns = 0;
    for (size_t need = want; need && li < nlocal;) {
      const size_t take = std::min(need, local[li].iov_len - loff);
      slice[ns++] = iovec{static_cast<char*>(local[li].iov_base) + loff, take};
      need -= take;
      loff += take;
      if (loff == local[li].iov_len) {
        ++li;
        loff = 0;
      }
    }
    if (ns == 0) break;
    size_t sliced = 0;
    for (unsigned i = 0; i < ns; ++i) sliced += slice[i].iov_len;
    ++calls;
    const off_t at = off_t(reinterpret_cast<uintptr_t>(remote[ri].iov_base));
    const ssize_t r = write ? pwritev(mem_fd_, slice, int(ns), at) : preadv(mem_fd_, slice, int(ns), at);
    if (r == 0 && sliced) dead_ = true;  // the address space is gone
    if (r <= 0) break;
    total += size_t(r);
    if (size_t(r) < sliced || sliced < want) break;
  }
  return total;
}

bool ProcessMem::copy_in_process() {
  in_process_ = !dead_ && pid_ == getpid();
  return in_process_;
}

// The two lists' pieces lined up, as process_vm_readv/writev line them up.
size_t ProcessMem::copy_here(bool write, const iovec* local, unsigned nlocal, const iovec* remote, unsigned nremote) {
  size_t total = 0, loff = 0, roff = 0;
  for (unsigned li = 0, ri = 0; li < nlocal && ri < nremote;) {
    const size_t n = std::min(local[li].iov_len - loff, remote[ri].iov_len - roff);
    char* l = static_cast<char*>(local[li].iov_base) + loff;
    char* r = static_cast<char*>(remote[ri].iov_base) + roff;
    if (n) std::memcpy(write ? r : l, write ? l : r, n);
    total += n;
    loff += n, roff += n;
    if (loff == local[li].iov_len) ++li, loff = 0;
    if (roff == remote[ri].iov_len) ++ri, roff = 0;
  }
  return total;
}

size_t ProcessMem::transfer(bool write, const iovec* local, unsigned nlocal, const iovec* remote,
                            unsigned nremote, Nanos now, uint64_t& calls) {
  if (nlocal == 0 || nremote == 0 || nlocal > kIovMax || nremote > kIovMax) return 0;
  if (in_process_) {
    ++calls;  // one "call", as the direct path would make: batching stays visible
    return copy_here(write, local, nlocal, remote, nremote);
  }
  if (!alive(now)) return 0;
  if (direct_) {
    ++calls;
    const ssize_t r = write ? process_vm_writev(pid_, local, nlocal, remote, nremote, 0)
                            : process_vm_readv(pid_, local, nlocal, remote, nremote, 0);
    if (r >= 0) return size_t(r);
    if (errno == ESRCH) {
      dead_ = true;
      return 0;
    }
    if (errno != EPERM) return 0;
    direct_ = false;  // the kernel says fabricd may not ptrace it: use the file
  }
  return through_file(write, local, nlocal, remote, nremote, calls);
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
  // The maps just read must be those of the address space behind the file:
  // if it is gone (exec, exit, reused pid) they may belong to a stranger.
  return ok && mm_alive();
}

}  // namespace vf::engine
