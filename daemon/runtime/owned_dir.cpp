#include "daemon/runtime/owned_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "daemon/runtime/runtime_tree.hpp"

namespace vf::runtime {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxDepth = 32;  // the sysfs tree is 8 deep; deeper is not ours

// Removes entry `name` of the open directory `dirfd`, which is on device
// `dev`. Every open is O_NOFOLLOW relative to its parent: a component
// swapped for a link between the stat and the open fails the open and the
// link itself is unlinked.
bool remove_at(int dirfd, const char* name, dev_t dev, int depth) {
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode)) return ::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT;
  if (st.st_dev != dev || depth > kMaxDepth) return false;  // a mount point, or a maze
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return (errno == ELOOP || errno == ENOTDIR) && ::unlinkat(dirfd, name, 0) == 0;
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || opened.st_ino != st.st_ino || opened.st_dev != st.st_dev) {
    ::close(fd);  // swapped under us: leave it
    return false;
  }
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  // Names first, then removal: readdir() over a changing directory may skip.
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
  bool ok = true;
  for (const auto& n : names) ok = remove_at(::dirfd(d), n.c_str(), dev, depth + 1) && ok;
  ::closedir(d);
  return ::unlinkat(dirfd, name, AT_REMOVEDIR) == 0 && ok;
}

bool has_marker(const fs::path& dir, std::string_view marker) {
  struct stat st {};
  return ::lstat((dir / marker).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

[[noreturn]] void fail(const fs::path& p, std::string_view problem, std::string_view fix) {
  throw RuntimeTreeError(fmt::format("{} {}; {}", p.string(), problem, fix));
}

}  // namespace

bool remove_tree(const fs::path& p) noexcept {
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  int dfd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno == ENOENT;
  struct stat st {};
  bool ok = true;
  const std::string name = p.filename().string();
  if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) ok = remove_at(dfd, name.c_str(), st.st_dev, 0);
  ::close(dfd);
  return ok;
}

bool remove_if_marked(const fs::path& p, std::string_view marker) noexcept {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return errno == ENOENT;
  if (S_ISDIR(st.st_mode) && has_marker(p, marker)) return remove_tree(p);
  return S_ISDIR(st.st_mode) && ::rmdir(p.c_str()) == 0;  // only when empty
}

std::string foreign_dir_message(const fs::path& p, std::string_view marker) {
  return fmt::format("{} exists and was not made by fabricd (it has no {} file); fabricd neither uses nor "
                     "deletes it: move it away, or set daemon.runtime_dir to a directory of fabricd's own",
                     p.string(), marker);
}

OwnedDir::OwnedDir(fs::path p) : path_(std::move(p)) {
  const fs::path marker = path_ / kMarker;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      fail(path_, "is a symbolic link, and fabricd does not follow links in its runtime directory",
           "remove the link, or set daemon.runtime_dir to a directory of fabricd's own");
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || !has_marker(path_, kMarker))
      throw RuntimeTreeError(foreign_dir_message(path_, kMarker));
    int fd = ::open(marker.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      char note[64] = {};
      ssize_t n = fd >= 0 ? ::pread(fd, note, sizeof note - 1, 0) : 0;
      if (fd >= 0) ::close(fd);
      std::string who(note, n > 0 ? static_cast<std::size_t>(n) : 0);
      while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
      fail(path_, fmt::format("is in use by another fabricd ({})", who.empty() ? "pid unknown" : who),
           "stop it, or set a different daemon.runtime_dir");
    }
    // A dead fabricd's: cleared while we hold its lock, then made afresh.
    bool cleared = remove_tree(path_);
    ::close(fd);
    if (!cleared)
      fail(path_, "is left over from a fabricd that died, and cannot be removed",
           "remove it by hand (nothing in it is needed) and start fabricd again");
  }
  if (::mkdir(path_.c_str(), 0755) != 0)
    fail(path_, fmt::format("cannot be created: {}", std::strerror(errno)),
         "run fabricd as root or set daemon.runtime_dir to a directory it can write");
  ::chmod(path_.c_str(), 0755);  // independent of the umask: every app connects to the sockets in it
  lock_fd_ = ::open(marker.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
    remove_if_marked(path_, kMarker);
    fail(marker, fmt::format("cannot be created: {}", std::strerror(e)), "check that nothing else writes to daemon.runtime_dir");
  }
  const std::string note = fmt::format("made by fabricd pid {}\n", ::getpid());
  if (::write(lock_fd_, note.data(), note.size()) < 0) {
    // Only informative; the lock is what counts.
  }
}

OwnedDir::~OwnedDir() { remove(); }

void OwnedDir::remove() noexcept {
  if (lock_fd_ < 0) return;
  // Still ours: the marker at the path is the file we hold.
  struct stat held {}, there {};
  if (::fstat(lock_fd_, &held) == 0 && ::lstat((path_ / kMarker).c_str(), &there) == 0 &&
      held.st_ino == there.st_ino && held.st_dev == there.st_dev)
    remove_tree(path_);
  ::close(lock_fd_);
  lock_fd_ = -1;
}

}  // namespace vf::runtime
