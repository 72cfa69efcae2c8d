#include "device/engine/ring.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace vf::engine {

int SharedRing::create(const char* name, uint32_t entries, uint32_t entry_size, int& fd_out) {
  fd_out = -1;
  if (entries == 0 || (entries & (entries - 1)) || entry_size == 0) return EINVAL;
  reset();
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t bytes = vhca_ring_bytes(entries, entry_size);
  const size_t len = size_t((bytes + uint64_t(page) - 1) / uint64_t(page) * uint64_t(page));
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return errno;
  int err = 0;
  void* p = MAP_FAILED;
  if (ftruncate(fd, off_t(len)) != 0) {
    err = errno;
  } else if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    // Without the seals an app could truncate the file under our mapping (SIGBUS).
    err = errno;
  } else {
    p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) err = errno;
  }
  if (err) {
    close(fd);
    return err == EINVAL ? ENOMEM : err;
  }
  base_ = static_cast<uint8_t*>(p);
  map_len_ = len;
  entries_ = entries;
  entry_size_ = entry_size;
  fd_out = fd;
  return 0;
}

void SharedRing::swap(SharedRing& o) noexcept {
  std::swap(base_, o.base_);
  std::swap(map_len_, o.map_len_);
  std::swap(entries_, o.entries_);
  std::swap(entry_size_, o.entry_size_);
}

void SharedRing::reset() {
  if (base_) munmap(base_, map_len_);
  base_ = nullptr;
  map_len_ = 0;
  entries_ = 0;
  entry_size_ = 0;
}

}  // namespace vf::engine
