#include "daemon/runtime/runtime_tree.hpp"

#include "device/abi/vhca_ucma.h"
#include "device/abi/vhca_umad.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <sstream>
#include <utility>

#include "daemon/config/link_attrs.hpp"
#include "daemon/runtime/owned_dir.hpp"

namespace vf::runtime {
namespace fs = std::filesystem;
namespace {

constexpr const char* kMarker = ".vfabric-tree";   // inside sys/: "fabricd made this"
constexpr const char* kLock = "lock";              // inside runtime_dir: one tree per directory
constexpr const char* kModalias = "vfabric:vhca";  // the provider's match table entry
// class/infiniband_verbs/abi_version: the uverbs ABI (kernel value; libibverbs
// accepts 3..6). uverbsN/abi_version: the driver ABI handed to the provider
// in verbs_sysfs_dev::abi_ver; 1 is what mlx5/rxe kernels report.
constexpr const char* kUverbsAbi = "6";
constexpr const char* kDriverAbi = "1";

[[noreturn]] void fail_errno(int err, const fs::path& p, std::string_view action, std::string_view fix) {
  throw RuntimeTreeError(fmt::format("cannot {} {}: {}; {}", action, p.string(), std::strerror(err), fix));
}

constexpr std::string_view kFixWritable =
    "run fabricd as root or set daemon.runtime_dir to a directory it can write";

void make_dir(const fs::path& p) {
  if (::mkdir(p.c_str(), 0755) != 0) fail_errno(errno, p, "create directory", kFixWritable);
  ::chmod(p.c_str(), 0755);  // independent of the umask: every user's libibverbs reads it
}

void write_all(int fd, std::string_view data, const fs::path& p) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      fail_errno(e, p, "write", kFixWritable);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

// New file; never follows or reuses anything already there.
void write_file(const fs::path& p, std::string_view content) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
  if (fd < 0) fail_errno(errno, p, "create", kFixWritable);
  write_all(fd, content, p);
  ::fchmod(fd, 0444);
  ::close(fd);
}

// Atomic replacement: readers see the old or the new content, never a mix.
void replace_file(const fs::path& p, std::string_view content) {
  fs::path tmp = p.parent_path() / ("." + p.filename().string() + ".tmp");
  ::unlink(tmp.c_str());
  write_file(tmp, content);
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    fail_errno(e, p, "replace", kFixWritable);
  }
}

// An emulation node (char device with /dev/null's numbers), never a real device's.
bool is_emulated_node(const fs::path& p, dev_t rdev) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == rdev;
}

// An exclusive, non-blocking flock on `p` (created if missing); -1 when
// someone else holds it. Re-checks that the locked file is still the one at
// `p`, so a concurrent unlink cannot hand two processes "the" lock.
int try_lock(const fs::path& p) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) fail_errno(errno, p, "create", "fabricd must run as root (it manages /dev/infiniband)");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return -1;
    }
    struct stat a {}, b {};
    if (::fstat(fd, &a) == 0 && ::lstat(p.c_str(), &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
      return fd;
    ::close(fd);  // unlinked or replaced under us: try again
  }
  return -1;
}

// Still the node we made: a char device with our numbers, inode and ctime.
bool same_node(const fs::path& p, dev_t rdev, ino_t ino, const timespec& ctime) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == rdev && st.st_ino == ino &&
         st.st_ctim.tv_sec == ctime.tv_sec && st.st_ctim.tv_nsec == ctime.tv_nsec;
}

bool exists_nofollow(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

bool valid_attr_name(std::string_view s) {
  if (s.empty() || s.size() > 64 || s == "modalias") return false;
  // Upper case too: the kernel's own counters/VL15_dropped has it.
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

bool valid_ibdev(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// A port record the tree can render; checked before anything is written or
// replaced, so a bad record leaves the published files as they were.
void check_port(std::string_view ibdev, const PortInfo& p) {
  auto bad = [&](std::string_view what) {
    throw RuntimeTreeError(fmt::format("vHCA '{}': {}", ibdev, what));
  };
  if (p.gids.size() > gid_table_len(p)) bad("more GIDs than the GID table holds");
  if (gid_table_len(p) > 256) bad("table lengths above 256 are not supported");
  if (config::sysfs_rate_text_ibv(p.active_width, p.active_speed).empty())
    bad("the port's speed and width have no sysfs rate");
}

// Returns what it wrote under ports/1.
PortFiles write_device(const fs::path& sys, const DeviceSpec& d, const PublishedDevice& pub, dev_t rdev) {
  const fs::path ib = sys / "class/infiniband" / d.ibdev;
  make_dir(ib);
  write_file(ib / "node_type", "1: CA\n");
  write_file(ib / "node_guid", addr::format_guid_sysfs(d.node_guid) + "\n");
  write_file(ib / "sys_image_guid", addr::format_guid_sysfs(d.sys_image_guid) + "\n");
  write_file(ib / "fw_ver", d.fw_ver + "\n");
  write_file(ib / "hca_type", d.hca_type + "\n");
  write_file(ib / "hw_rev", d.hw_rev + "\n");
  write_file(ib / "board_id", d.board_id + "\n");
  write_file(ib / "node_desc", d.node_desc + "\n");

  make_dir(ib / "device");
  write_file(ib / "device/modalias", std::string(kModalias) + "\n");
  for (const auto& [k, v] : d.device_attrs) write_file(ib / "device" / k, v + "\n");

  const fs::path port = ib / "ports/1";
  make_dir(ib / "ports");
  make_dir(port);
  // Every index below the table length needs both gids/<i> and
  // gid_attrs/types/<i>: once gid_attrs/ exists, libibverbs treats a missing
  // types/<i> as an error rather than "IB/RoCE v1" (port_sysfs.hpp).
  // ndevs/<i> names the RoCE GID's interface, which libibverbs resolves with
  // if_nametoindex() and UCX reads addresses and MTU from; only GIDs in use
  // have one, and without an interface there is no file ("none").
  make_dir(port / "gids");
  make_dir(port / "gid_attrs");
  make_dir(port / "gid_attrs/types");
  PortFiles files = port_info_files(d.port);
  for (const auto& [rel, content] : files) write_file(port / rel, content);
  if (!d.netdev.empty()) {
    make_dir(port / "gid_attrs/ndevs");
    for (size_t i = 0; i < d.port.gids.size(); ++i)
      write_file(port / "gid_attrs/ndevs" / std::to_string(i), d.netdev + "\n");
  }
  make_dir(port / "pkeys");
  for (uint32_t i = 0; i < d.pkey_table_len; ++i)
    write_file(port / "pkeys" / std::to_string(i), fmt::format("0x{:04x}\n", i < d.pkeys.size() ? d.pkeys[i] : 0));

  // The uverbs entry last: it is what makes libibverbs look at the device.
  const fs::path uv = sys / "class/infiniband_verbs" / pub.uverbs;
  make_dir(uv);
  write_file(uv / "ibdev", d.ibdev + "\n");
  write_file(uv / "dev", fmt::format("{}:{}\n", major(rdev), minor(rdev)));
  write_file(uv / "abi_version", std::string(kDriverAbi) + "\n");
  if (::symlink(("../../infiniband/" + d.ibdev + "/device").c_str(), (uv / "device").c_str()) != 0)
    fail_errno(errno, uv / "device", "create symlink", kFixWritable);

  // libibumad finds the port's umadN by ibdev and port; the preload shim
  // connects open("/dev/infiniband/umadN") to vfabric_socket. A vHCA has
  // one port, so umadN shares the uverbs number.
  if (!d.umad_socket.empty()) {
    const fs::path um = sys / "class/infiniband_mad" / ("umad" + std::to_string(pub.uverbs_no));
    make_dir(um);
    write_file(um / "ibdev", d.ibdev + "\n");
    write_file(um / "port", "1\n");
    write_file(um / "vfabric_socket", d.umad_socket + "\n");
  }
  return files;
}

void check_spec(const DeviceSpec& d) {
  auto bad = [&](std::string_view what) {
    throw RuntimeTreeError(fmt::format("vHCA '{}': {}", d.ibdev, what));
  };
  if (!valid_ibdev(d.ibdev)) bad("the name is not a valid RDMA device name ([a-z0-9_]{1,63})");
  check_port(d.ibdev, d.port);
  if (d.pkeys.size() > d.pkey_table_len) bad("more P_Keys than the P_Key table holds");
  if (d.pkey_table_len > 256) bad("table lengths above 256 are not supported");
  for (const auto& [k, v] : d.device_attrs) {
    if (!valid_attr_name(k)) bad(fmt::format("device attribute name '{}' is not allowed", k));
    if (v.find('\0') != std::string::npos || v.size() > 4096) bad("device attribute value is not text");
  }
  if (d.umad_socket.size() >= 108 || d.umad_socket.find_first_of(std::string_view("\n\0", 2)) != std::string::npos)
    bad("the umad socket path is not a short single line (sockaddr_un holds 107 bytes)");
  for (const std::string* s : {&d.fw_ver, &d.hca_type, &d.hw_rev, &d.board_id, &d.node_desc})
    if (s->find('\n') != std::string::npos || s->find('\0') != std::string::npos || s->size() > 64)
      bad("an attribute is not a single short line");
}

}  // namespace

RuntimeTree::RuntimeTree(TreeOptions opts, const std::vector<DeviceSpec>& devices) : opts_(std::move(opts)) {
  for (const auto& d : devices) check_spec(d);
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (devices[i].ibdev == devices[j].ibdev)
        throw RuntimeTreeError(fmt::format("vHCA name '{}' is used twice", devices[i].ibdev));

  struct stat null_st {};
  if (::stat("/dev/null", &null_st) != 0 || !S_ISCHR(null_st.st_mode))
    throw RuntimeTreeError("/dev/null is not a character device; the uverbs nodes borrow its numbers");
  rdev_ = null_st.st_rdev;

  std::error_code ec;
  fs::create_directories(opts_.runtime_dir, ec);
  if (ec)
    throw RuntimeTreeError(fmt::format("cannot create runtime directory {}: {}; {}", opts_.runtime_dir.string(),
                                       ec.message(), kFixWritable));
  if (!fs::is_directory(opts_.runtime_dir))
    throw RuntimeTreeError(fmt::format("runtime directory {} is not a directory", opts_.runtime_dir.string()));
  if (::access(opts_.runtime_dir.c_str(), W_OK | X_OK) != 0)
    throw RuntimeTreeError(fmt::format("runtime directory {} is not writable: {}; {}", opts_.runtime_dir.string(),
                                       std::strerror(errno), kFixWritable));
  lock();
  active_ = true;
  try {
    make_dev_dir();
    cleanup_stale();
    make_nodes(devices);
    build(devices);
  } catch (...) {
    remove();
    throw;
  }
}

RuntimeTree::~RuntimeTree() { remove(); }

void RuntimeTree::lock() {
  const fs::path p = opts_.runtime_dir / kLock;
  lock_fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock_fd_ < 0) fail_errno(errno, p, "create", kFixWritable);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    char pid[32] = {};
    ssize_t n = ::pread(lock_fd_, pid, sizeof pid - 1, 0);
    ::close(lock_fd_);
    lock_fd_ = -1;
    if (e == EWOULDBLOCK)
      throw RuntimeTreeError(fmt::format("another fabricd (pid {}) is using runtime directory {}; stop it or set a "
                                         "different daemon.runtime_dir",
                                         n > 0 ? std::string(pid, strnlen(pid, sizeof pid)).substr(0, 10) : "?",
                                         opts_.runtime_dir.string()));
    fail_errno(e, p, "lock", kFixWritable);
  }
  std::string me = std::to_string(::getpid());
  if (::ftruncate(lock_fd_, 0) == 0 && ::pwrite(lock_fd_, me.data(), me.size(), 0) < 0) {
    // The pid is only for the message above; the lock itself is what counts.
  }
}

RuntimeTree::RuntimeTree(RuntimeTree&& o) noexcept
    : opts_(std::move(o.opts_)),
      lock_fd_(std::exchange(o.lock_fd_, -1)),
      rdev_(o.rdev_),
      made_dev_dir_(o.made_dev_dir_),
      active_(o.active_),
      nodes_(std::move(o.nodes_)),
      devices_(std::move(o.devices_)),
      port_files_(std::move(o.port_files_)),
      counter_files_(std::move(o.counter_files_)) {
  o.active_ = false;
}

RuntimeTree& RuntimeTree::operator=(RuntimeTree&& o) noexcept {
  if (this != &o) {
    remove();
    opts_ = std::move(o.opts_);
    lock_fd_ = std::exchange(o.lock_fd_, -1);
    rdev_ = o.rdev_;
    made_dev_dir_ = o.made_dev_dir_;
    active_ = o.active_;
    nodes_ = std::move(o.nodes_);
    devices_ = std::move(o.devices_);
    port_files_ = std::move(o.port_files_);
    counter_files_ = std::move(o.counter_files_);
    o.active_ = false;
  }
  return *this;
}

const PublishedDevice* RuntimeTree::find(std::string_view ibdev) const {
  for (const auto& d : devices_)
    if (d.ibdev == ibdev) return &d;
  return nullptr;
}

void RuntimeTree::make_dev_dir() {
  if (::mkdir(opts_.dev_dir.c_str(), 0755) == 0) {
    made_dev_dir_ = true;
    ::chmod(opts_.dev_dir.c_str(), 0755);
  } else if (errno != EEXIST) {
    fail_errno(errno, opts_.dev_dir, "create directory",
               "fabricd must run as root: libibverbs only looks for device nodes in /dev/infiniband");
  }
}

void RuntimeTree::cleanup_stale() {
  const fs::path sys = sysfs_path();
  // The staging names are fabricd's too: a crashed predecessor's (marked,
  // or empty if it died right after mkdir) go; anything else stays.
  for (const char* stage : {".sys.new", ".sys.old"}) {
    const fs::path p = opts_.runtime_dir / stage;
    if (!remove_if_marked(p, kMarker)) throw RuntimeTreeError(foreign_dir_message(p, kMarker));
  }
  if (exists_nofollow(sys)) {
    struct stat st {};
    if (::lstat(sys.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || !exists_nofollow(sys / kMarker))
      throw RuntimeTreeError(foreign_dir_message(sys, kMarker));
    const fs::path old = opts_.runtime_dir / ".sys.old";
    if (::rename(sys.c_str(), old.c_str()) != 0) fail_errno(errno, sys, "remove stale", kFixWritable);
    remove_tree(old);
  }
  sweep_orphans();
}

// Node ownership (see the header): uverbsN with /dev/null's numbers belongs to
// whoever holds the flock on .uverbsN.lock; the kernel drops it when that
// process dies, however it dies.
void RuntimeTree::sweep_orphans() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(opts_.dev_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".uverbs", 0) != 0 || name.size() <= 12 || name.substr(name.size() - 5) != ".lock") continue;
    const std::string num = name.substr(7, name.size() - 12);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos) continue;
    int fd = try_lock(e.path());
    if (fd < 0) continue;  // its owner is alive
    const fs::path node = opts_.dev_dir / ("uverbs" + num);
    if (is_emulated_node(node, rdev_)) ::unlink(node.c_str());
    ::unlink(e.path().c_str());
    ::close(fd);
  }
}

void RuntimeTree::make_nodes(const std::vector<DeviceSpec>& devices) {
  for (const auto& d : devices) {
    bool done = false;
    for (uint32_t n = d.index; n < d.index + 1024 && !done; ++n) {
      const fs::path p = opts_.dev_dir / fmt::format("uverbs{}", n);
      const fs::path lockp = opts_.dev_dir / fmt::format(".uverbs{}.lock", n);
      int fd = try_lock(lockp);
      if (fd < 0) continue;  // a live fabricd owns this number
      auto give_up = [&] {
        ::unlink(lockp.c_str());
        ::close(fd);
      };
      // mknod fails with EEXIST on any existing name; only an emulated node
      // whose lock we now hold (its owner died) may be replaced. A real
      // device's node, or anything else, is never touched.
      if (::mknod(p.c_str(), S_IFCHR | 0666, rdev_) != 0) {
        int e = errno;
        if (e == EEXIST && is_emulated_node(p, rdev_) && ::unlink(p.c_str()) == 0 &&
            ::mknod(p.c_str(), S_IFCHR | 0666, rdev_) == 0) {
          // reclaimed an orphan
        } else if (e == EEXIST) {
          give_up();
          continue;
        } else {
          give_up();
          fail_errno(e, p, "create device node",
                     "fabricd needs CAP_MKNOD and a writable /dev (libibverbs only looks in /dev/infiniband)");
        }
      }
      ::chmod(p.c_str(), 0666);  // every user's libibverbs opens it O_RDWR; it is /dev/null
      struct stat st {};
      if (::lstat(p.c_str(), &st) != 0) {
        int e = errno;
        give_up();
        fail_errno(e, p, "stat", kFixWritable);
      }
      nodes_.push_back({p, st.st_ino, st.st_ctim, lockp, fd});
      devices_.push_back({d.ibdev, fmt::format("uverbs{}", n), n, p});
      done = true;
    }
    if (!done)
      throw RuntimeTreeError(fmt::format("no free uverbs number for '{}' in {}; remove stale nodes there",
                                         d.ibdev, opts_.dev_dir.string()));
  }
}

void RuntimeTree::build(const std::vector<DeviceSpec>& devices) {
  const fs::path stage = opts_.runtime_dir / ".sys.new";
  make_dir(stage);
  write_file(stage / kMarker, fmt::format("made by fabricd pid {}\n", ::getpid()));
  make_dir(stage / "class");
  make_dir(stage / "class/infiniband");
  make_dir(stage / "class/infiniband_verbs");
  write_file(stage / "class/infiniband_verbs/abi_version", std::string(kUverbsAbi) + "\n");
  make_dir(stage / "class/infiniband_mad");
  write_file(stage / "class/infiniband_mad/abi_version", std::to_string(VHCA_UMAD_ABI_VERSION) + "\n");
  if (!opts_.rdma_cm_socket.empty()) {
    make_dir(stage / "class/misc");
    make_dir(stage / "class/misc/rdma_cm");
    write_file(stage / "class/misc/rdma_cm/abi_version", std::to_string(VHCA_UCMA_ABI_VERSION) + "\n");
    write_file(stage / "class/misc/rdma_cm/vfabric_socket", opts_.rdma_cm_socket + "\n");
  }
  for (std::size_t i = 0; i < devices.size(); ++i)
    port_files_.push_back(write_device(stage, devices[i], devices_[i], rdev_));
  counter_files_.resize(devices.size());  // update_counters adds them
  if (::rename(stage.c_str(), sysfs_path().c_str()) != 0) fail_errno(errno, sysfs_path(), "publish", kFixWritable);
}

void RuntimeTree::remove() noexcept {
  if (!active_) {
    if (lock_fd_ >= 0) ::close(lock_fd_);  // a constructor that failed after locking
    lock_fd_ = -1;
    return;
  }
  active_ = false;
  const fs::path sys = sysfs_path();
  const fs::path old = opts_.runtime_dir / ".sys.old";
  // Renamed away first so readers see all of it or none of it; a foreign
  // .sys.old (refused at start) is never in the way of ours.
  if (exists_nofollow(sys / kMarker) && remove_if_marked(old, kMarker) && ::rename(sys.c_str(), old.c_str()) == 0)
    remove_tree(old);
  remove_if_marked(opts_.runtime_dir / ".sys.new", kMarker);
  for (const auto& n : nodes_) {
    if (same_node(n.path, rdev_, n.ino, n.ctime)) ::unlink(n.path.c_str());
    ::unlink(n.lock_path.c_str());  // while still holding it
    ::close(n.lock_fd);
  }
  nodes_.clear();
  devices_.clear();
  port_files_.clear();
  counter_files_.clear();
  if (made_dev_dir_) ::rmdir(opts_.dev_dir.c_str());  // only if empty
  made_dev_dir_ = false;
  // Unlinked while still held, so nobody locks the old file after we let go.
  ::unlink((opts_.runtime_dir / kLock).c_str());
  ::close(lock_fd_);
  lock_fd_ = -1;
}

fs::path RuntimeTree::port_dir(std::string_view ibdev) const {
  if (!find(ibdev)) throw RuntimeTreeError(fmt::format("no vHCA named '{}'", ibdev));
  return sysfs_path() / "class/infiniband" / std::string(ibdev) / "ports/1";
}

namespace {
// Makes `dir`'s files under the names of `now` those of `next`: changed or
// new ones replaced atomically, vanished ones removed, the rest untouched.
void sync_files(const fs::path& dir, PortFiles& now, PortFiles next) {
  for (const auto& [rel, content] : next) {
    auto it = now.find(rel);
    if (it == now.end() || it->second != content) replace_file(dir / rel, content);
  }
  for (const auto& [rel, content] : now)
    if (!next.count(rel)) ::unlink((dir / rel).c_str());
  now = std::move(next);
}
}  // namespace

std::size_t RuntimeTree::index_of(std::string_view ibdev) const {
  const PublishedDevice* d = find(ibdev);
  if (!d) throw RuntimeTreeError(fmt::format("no vHCA named '{}'", ibdev));
  return std::size_t(d - devices_.data());
}

void RuntimeTree::update_port(std::string_view ibdev, const PortInfo& port) {
  const fs::path dir = port_dir(ibdev);
  check_port(ibdev, port);
  sync_files(dir, port_files_.at(index_of(ibdev)), port_info_files(port));
}

void RuntimeTree::update_counters(std::string_view ibdev, const PortFiles& files) {
  const fs::path dir = port_dir(ibdev);
  for (const auto& [rel, content] : files) {
    const auto slash = rel.find('/');
    const std::string sub = rel.substr(0, slash);
    if ((sub != "counters" && sub != "hw_counters") || slash == std::string::npos ||
        !valid_attr_name(rel.substr(slash + 1)) || content.find('\0') != std::string::npos || content.size() > 64)
      throw RuntimeTreeError(fmt::format("vHCA '{}': '{}' is not a counter file", ibdev, rel));
  }
  for (const char* sub : {"counters", "hw_counters"})
    if (!exists_nofollow(dir / sub)) make_dir(dir / sub);
  sync_files(dir, counter_files_.at(index_of(ibdev)), files);
}

}  // namespace vf::runtime
