// The files that let an unmodified libibverbs find vHCAs without a kernel
// driver (DESIGN §2): a fake sysfs under <runtime_dir>/sys (used through
// SYSFS_PATH) and /dev/infiniband/uverbsN character nodes.
//
// What libibverbs (rdma-core 44) reads, and therefore what is written:
//   sys/class/infiniband_verbs/abi_version              "6"  (uverbs ABI 3..6)
//   sys/class/infiniband_verbs/uverbsN/ibdev            "<ibdev>"
//   sys/class/infiniband_verbs/uverbsN/dev              "<major>:<minor>" of the node
//   sys/class/infiniband_verbs/uverbsN/abi_version      "1"  (provider ABI; provider accepts 1)
//   sys/class/infiniband/<ibdev>/node_type              "1: CA"
//   sys/class/infiniband/<ibdev>/node_guid              "xxxx:xxxx:xxxx:xxxx"
//   sys/class/infiniband/<ibdev>/device/modalias        "vfabric:vhca" (provider match table)
//   sys/class/infiniband/<ibdev>/ports/1/gids/<i>       "fe80:0000:...:xxxx" (fixed 5-char groups)
//   sys/class/infiniband/<ibdev>/ports/1/gid_attrs/types/<i>  "RoCE v2" | "IB/RoCE v1"
//   sys/class/infiniband/<ibdev>/ports/1/pkeys/<i>      "0xffff"
//   sys/class/infiniband_mad/abi_version               "5"  (libibumad: umad ABI)
//   sys/class/infiniband_mad/umadN/{ibdev,port}        the port behind /dev/infiniband/umadN
//   sys/class/infiniband_mad/umadN/vfabric_socket      fabricd's socket for it (the shim's)
// plus what tools read (ibv_devinfo board_id; ibstat-style state, phys_state,
// rate, lid, sm_lid, lid_mask_count, sm_sl, cap_mask, link_layer, fw_ver, ...)
// and the live counters, ports/1/counters/ and hw_counters/ (update_counters).
// The ports/1 attributes are rendered from the port's PortInfo (port_sysfs.hpp).
//
// The device node path is compiled into libibverbs ("/dev/infiniband", no
// environment override), so real nodes are made there: char devices with
// /dev/null's numbers (open() must give a char device whose st_rdev equals
// `dev`, nothing more). Real devices' nodes are never touched: a taken
// uverbsN makes the tree use the next free number.
//
// Who owns an emulation node (/dev/null's numbers) is decided by a lock, not
// by bookkeeping that a crash could lose: the owner holds an flock on
// /dev/infiniband/.uverbsN.lock for as long as it serves uverbsN, and the
// kernel drops it when the owner dies, however it dies. A node whose lock
// nobody holds is an orphan of a dead fabricd (any runtime_dir) and is
// removed or reused; a locked one belongs to a live fabricd and is skipped.
// remove() deletes only the nodes this tree made (inode, ctime and numbers
// unchanged) and their lock files.
//
// The sysfs tree is built under a hidden name and renamed into place, so a
// reader sees all of it or none of it; removal renames it away first. Like
// everything fabricd deletes (owned_dir.hpp), sys/ and its staging names are
// removed only when they carry fabricd's marker, and without following links;
// a foreign one is left in place and start-up fails saying so.
//
// One tree per runtime_dir: the tree holds an exclusive flock on
// <runtime_dir>/lock for its lifetime (the kernel drops it if fabricd dies),
// so a second fabricd on the same directory fails instead of "cleaning up"
// the first one's live tree and nodes.
#pragma once

#include <sys/types.h>

#include <ctime>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/runtime/port_sysfs.hpp"
#include "daemon/runtime/sysfs_spec.hpp"

namespace vf::runtime {

class RuntimeTreeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TreeOptions {
  std::filesystem::path runtime_dir;                       // SYSFS_PATH = runtime_dir/sys
  std::filesystem::path dev_dir = "/dev/infiniband";       // tests point this into a temp dir
  // class/misc/rdma_cm: librdmacm reads abi_version there; the preload shim
  // connects /dev/infiniband/rdma_cm to vfabric_socket. Empty: no rdma_cm.
  std::string rdma_cm_socket;
};

struct PublishedDevice {
  std::string ibdev;
  std::string uverbs;              // "uverbs0": the sysfs and /dev name
  uint32_t uverbs_no = 0;
  std::filesystem::path dev_node;  // dev_dir/uverbsN
};

class RuntimeTree {
 public:
  // Builds everything or nothing: on failure, what was made is removed and
  // RuntimeTreeError says what failed and what to do.
  RuntimeTree(TreeOptions opts, const std::vector<DeviceSpec>& devices);
  ~RuntimeTree();
  RuntimeTree(RuntimeTree&& o) noexcept;
  RuntimeTree& operator=(RuntimeTree&& o) noexcept;
  RuntimeTree(const RuntimeTree&) = delete;
  RuntimeTree& operator=(const RuntimeTree&) = delete;

  // Removes the sysfs tree and the nodes this tree made. Idempotent.
  void remove() noexcept;

  std::filesystem::path sysfs_path() const { return opts_.runtime_dir / "sys"; }
  const std::vector<PublishedDevice>& devices() const { return devices_; }
  const PublishedDevice* find(std::string_view ibdev) const;

  // Re-renders ibdev's ports/1 files from its port record after the owner
  // changed it (port up/down, LIDs, GIDs): each file whose content changed is
  // replaced atomically (rename), GID entries past a shrunk table go; the
  // rest are left alone. Control thread; `port` is a copy the lcore made.
  void update_port(std::string_view ibdev, const PortInfo& port);
  // The live counters of ibdev's port: `files` maps "counters/<name>" and
  // "hw_counters/<name>" to their one-line content (counter_format.hpp's
  // add_counter_files), the kernel's ports/1/counters/ and hw_counters/.
  // Same replacement rules as update_port; a name outside those two
  // directories is refused. Control thread.
  void update_counters(std::string_view ibdev, const PortFiles& files);

 private:
  // A node is ours while it still has the inode and change time it had when
  // we made it (inode numbers alone get reused right away on some file
  // systems), and while we hold its lock.
  struct Node {
    std::filesystem::path path;
    ino_t ino = 0;
    timespec ctime{};
    std::filesystem::path lock_path;
    int lock_fd = -1;
  };
  void lock();
  void build(const std::vector<DeviceSpec>& devices);
  void make_dev_dir();
  void cleanup_stale();
  void sweep_orphans();
  void make_nodes(const std::vector<DeviceSpec>& devices);
  std::filesystem::path port_dir(std::string_view ibdev) const;
  std::size_t index_of(std::string_view ibdev) const;  // in devices_; throws when unknown

  TreeOptions opts_;
  int lock_fd_ = -1;               // flock on runtime_dir/lock
  dev_t rdev_ = 0;                 // /dev/null's numbers
  bool made_dev_dir_ = false;
  bool active_ = false;
  std::vector<Node> nodes_;
  std::vector<PublishedDevice> devices_;
  std::vector<PortFiles> port_files_;     // what each device's ports/1 holds now, by devices_ index
  std::vector<PortFiles> counter_files_;  // and its counters/ and hw_counters/
};

}  // namespace vf::runtime
