// The runtime tree in a temp directory: every file with its exact content,
// device nodes, collision handling, crash recovery, and clean removal.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "daemon/config/config.hpp"
#include "daemon/runtime/owned_dir.hpp"
#include "daemon/runtime/runtime_tree.hpp"
#include "test_util.hpp"

namespace vf::runtime {
namespace {
namespace fs = std::filesystem;

const std::string kDefault = std::string(VF_SOURCE_DIR) + "/configs/default.yaml";

std::string hostname() {
  char h[256] = {};
  gethostname(h, sizeof h - 1);
  return h;
}

// Every regular file and symlink under `root`, relative path -> content (or "-> target").
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    auto rel = it->path().lexically_relative(root).string();  // fs::relative would resolve symlinks
    if (it->is_symlink()) out[rel] = "-> " + fs::read_symlink(it->path()).string();
    else if (it->is_regular_file()) out[rel] = test::read_file(it->path());
  }
  return out;
}

// Runs `f` in a child that then exits without cleaning up, like a SIGKILLed
// fabricd: the kernel drops its locks, its files stay. True when `f` did
// not throw.
template <class F>
bool in_dying_child(F f) {
  pid_t child = fork();
  if (child < 0) return false;
  if (child == 0) {
    try {
      f();
    } catch (...) {
      _exit(1);
    }
    _exit(0);
  }
  int st = 0;
  return waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

class RuntimeTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test::can_mknod()) << "the suite runs as root (scripts/test.sh): device nodes need CAP_MKNOD";
    struct stat st {};
    ASSERT_EQ(stat("/dev/null", &st), 0);
    null_ = st.st_rdev;
    opts_.runtime_dir = tmp_.path() / "run";
    opts_.dev_dir = tmp_.path() / "dev/infiniband";
    fs::create_directories(tmp_.path() / "dev");
    cfg_ = config::load_config(kDefault);
    specs_ = make_device_specs(cfg_);
  }
  std::string sys() const { return (opts_.runtime_dir / "sys").string(); }

  test::TempDir tmp_;
  TreeOptions opts_;
  config::Config cfg_;
  std::vector<DeviceSpec> specs_;
  dev_t null_ = 0;
};

TEST_F(RuntimeTreeTest, EveryFileHasTheKernelsFormat) {
  for (auto& s : specs_) s.umad_socket = "/run/x/" + s.ibdev + ".umad";
  RuntimeTree tree(opts_, specs_);
  EXPECT_EQ(tree.sysfs_path(), opts_.runtime_dir / "sys");
  ASSERT_EQ(tree.devices().size(), 4u);
  EXPECT_EQ(tree.devices()[0].ibdev, "vib0");
  EXPECT_EQ(tree.devices()[0].uverbs, "uverbs0");
  EXPECT_EQ(tree.devices()[3].uverbs, "uverbs3");

  const auto& vib0 = *cfg_.find_hca("vib0")->hca;
  const auto& vroce0 = *cfg_.find_hca("vroce0")->hca;
  const std::string dev = fmt::format("{}:{}\n", major(null_), minor(null_));
  const std::string g0 = addr::format_guid_sysfs(vib0.node_guid);
  const std::string r0 = addr::format_guid_sysfs(vroce0.node_guid);
  const std::string ib_gid0 = "fe80:0000:0000:0000:" + g0 + "\n";
  const auto iid = addr::eui64_from_mac(vroce0.mac);
  const std::string roce_gid0 = addr::format_gid_sysfs(addr::make_gid(0xfe80000000000000ULL, iid)) + "\n";
  const std::string zero = "0000:0000:0000:0000:0000:0000:0000:0000\n";

  std::map<std::string, std::string> want;
  want[".vfabric-tree"] = fmt::format("made by fabricd pid {}\n", getpid());
  want["class/infiniband_verbs/abi_version"] = "6\n";
  want["class/infiniband_mad/abi_version"] = "5\n";
  struct Dev {
    const char* name;
    int uverbs;
  };
  for (auto [name, n] : {Dev{"vib0", 0}, Dev{"vib1", 1}, Dev{"vroce0", 2}, Dev{"vroce1", 3}}) {
    const auto& h = *cfg_.find_hca(name)->hca;
    bool ib = std::string(name).rfind("vib", 0) == 0;
    std::string uv = fmt::format("class/infiniband_verbs/uverbs{}/", n);
    want[uv + "ibdev"] = std::string(name) + "\n";
    want[uv + "dev"] = dev;
    want[uv + "abi_version"] = "1\n";
    want[uv + "device"] = fmt::format("-> ../../infiniband/{}/device", name);
    // libibumad's umadN: the port behind it, and the socket the shim connects it to.
    std::string um = fmt::format("class/infiniband_mad/umad{}/", n);
    want[um + "ibdev"] = std::string(name) + "\n";
    want[um + "port"] = "1\n";
    want[um + "vfabric_socket"] = fmt::format("/run/x/{}.umad\n", name);
    std::string d = fmt::format("class/infiniband/{}/", name);
    want[d + "node_type"] = "1: CA\n";
    want[d + "node_guid"] = addr::format_guid_sysfs(h.node_guid) + "\n";
    want[d + "sys_image_guid"] = addr::format_guid_sysfs(h.node_guid) + "\n";
    want[d + "fw_ver"] = "1.0.0\n";
    want[d + "hca_type"] = "vHCA\n";
    want[d + "hw_rev"] = "0x1\n";
    want[d + "board_id"] = "VFABRIC_VHCA\n";
    want[d + "node_desc"] = (hostname() + " " + name).substr(0, 64) + "\n";
    want[d + "device/modalias"] = "vfabric:vhca\n";
    want[d + "device/vfabric_index"] = fmt::format("{}\n", n);
    std::string p = d + "ports/1/";
    want[p + "state"] = "4: ACTIVE\n";
    want[p + "phys_state"] = "5: LinkUp\n";
    want[p + "link_layer"] = ib ? "InfiniBand\n" : "Ethernet\n";
    want[p + "rate"] = "100 Gb/sec (4X EDR)\n";
    want[p + "lid"] = ib ? fmt::format("0x{:x}\n", n + 1) : "0x0\n";
    want[p + "sm_lid"] = ib ? "0x3\n" : "0x0\n";
    want[p + "lid_mask_count"] = "0\n";
    want[p + "sm_sl"] = "0\n";
    want[p + "cap_mask"] = ib ? "0x00014800\n" : "0x04010000\n";
    for (int i = 0; i < 16; ++i) {
      std::string gid = zero;
      if (ib && i == 0) gid = "fe80:0000:0000:0000:" + addr::format_guid_sysfs(h.node_guid) + "\n";
      if (!ib && i == 0)
        gid = addr::format_gid_sysfs(addr::make_gid(0xfe80000000000000ULL, addr::eui64_from_mac(h.mac))) + "\n";
      if (!ib && i == 1) gid = addr::format_gid_sysfs(addr::ipv4_mapped_gid(*h.ipv4)) + "\n";
      want[p + fmt::format("gids/{}", i)] = gid;
      want[p + fmt::format("gid_attrs/types/{}", i)] = (!ib && i < 2) ? "RoCE v2\n" : "IB/RoCE v1\n";
      // A RoCE GID in use names the vHCA's interface; IB GIDs have none.
      if (!ib && i < 2) want[p + fmt::format("gid_attrs/ndevs/{}", i)] = std::string(name) + "\n";
    }
    // IB: a 16-entry P_Key table, the default partition then invalid entries.
    for (int i = 0; i < (ib ? 16 : 1); ++i) want[p + fmt::format("pkeys/{}", i)] = i == 0 ? "0xffff\n" : "0x0000\n";
  }
  auto got = snapshot(sys());
  for (const auto& [path, content] : want) {
    auto it = got.find(path);
    if (it == got.end()) {
      ADD_FAILURE() << "missing " << path;
      continue;
    }
    EXPECT_EQ(it->second, content) << path;
  }
  for (const auto& [path, content] : got) EXPECT_TRUE(want.count(path)) << "unexpected " << path;

  // Spot checks in the exact forms libibverbs and users see.
  EXPECT_EQ(ib_gid0, want["class/infiniband/vib0/ports/1/gids/0"]);
  EXPECT_EQ(roce_gid0, want["class/infiniband/vroce0/ports/1/gids/0"]);
  EXPECT_EQ(want["class/infiniband/vroce0/ports/1/gids/1"], "0000:0000:0000:0000:0000:ffff:c612:0001\n");
  EXPECT_EQ(g0.size(), 19u);
  EXPECT_EQ(r0.substr(0, 4), "0056");

  // Nodes: char devices with /dev/null's numbers, usable by every user.
  for (int n = 0; n < 4; ++n) {
    struct stat st {};
    auto p = opts_.dev_dir / fmt::format("uverbs{}", n);
    ASSERT_EQ(lstat(p.c_str(), &st), 0) << p;
    EXPECT_TRUE(S_ISCHR(st.st_mode));
    EXPECT_EQ(st.st_rdev, null_);
    EXPECT_EQ(st.st_mode & 07777, 0666u);
  }
  // Read-only files, world-readable directories.
  struct stat st {};
  ASSERT_EQ(stat((sys() + "/class/infiniband/vib0/node_guid").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0444u);
  ASSERT_EQ(stat((sys() + "/class/infiniband/vib0/ports/1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST_F(RuntimeTreeTest, RemoveLeavesNothing) {
  {
    RuntimeTree tree(opts_, specs_);
    EXPECT_TRUE(fs::exists(opts_.dev_dir / ".uverbs0.lock"));
  }
  EXPECT_FALSE(fs::exists(opts_.runtime_dir / "sys"));
  EXPECT_FALSE(fs::exists(opts_.dev_dir));  // we made it, so it goes
  EXPECT_TRUE(fs::is_empty(opts_.runtime_dir)) << "left: " << fs::directory_iterator(opts_.runtime_dir)->path();
}

TEST_F(RuntimeTreeTest, ExistingNodesAreNeverTouched) {
  fs::create_directories(opts_.dev_dir);
  test::write_file(opts_.dev_dir / "uverbs0", "a real device, say");
  ASSERT_EQ(mknod((opts_.dev_dir / "uverbs2").c_str(), S_IFCHR | 0600, makedev(231, 194)), 0);
  {
    RuntimeTree tree(opts_, specs_);
    EXPECT_EQ(tree.find("vib0")->uverbs, "uverbs1");
    EXPECT_EQ(tree.find("vib1")->uverbs, "uverbs3");  // 2 is taken too
    EXPECT_EQ(tree.find("vroce0")->uverbs, "uverbs4");
    EXPECT_EQ(tree.find("vroce1")->uverbs, "uverbs5");
    EXPECT_EQ(test::read_file(fs::path(sys()) / "class/infiniband_verbs/uverbs1/ibdev"), "vib0\n");
    EXPECT_FALSE(fs::exists(fs::path(sys()) / "class/infiniband_verbs/uverbs0"));
  }
  EXPECT_EQ(test::read_file(opts_.dev_dir / "uverbs0"), "a real device, say");
  struct stat st {};
  ASSERT_EQ(lstat((opts_.dev_dir / "uverbs2").c_str(), &st), 0);
  EXPECT_EQ(st.st_rdev, makedev(231, 194));
  EXPECT_FALSE(fs::exists(opts_.dev_dir / "uverbs1"));
  EXPECT_TRUE(fs::exists(opts_.dev_dir));  // not ours: stays
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(opts_.dev_dir)) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"uverbs0", "uverbs2"}));  // no lock files left behind
}

TEST_F(RuntimeTreeTest, OneTreePerRuntimeDir) {
  RuntimeTree live(opts_, specs_);
  try {
    RuntimeTree second(opts_, specs_);
    FAIL();
  } catch (const RuntimeTreeError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("another fabricd (pid {}) is using runtime directory", getpid())),
              std::string::npos)
        << e.what();
  }
  // The live tree is untouched.
  EXPECT_EQ(test::read_file(fs::path(sys()) / "class/infiniband_verbs/uverbs0/ibdev"), "vib0\n");
  EXPECT_TRUE(fs::exists(opts_.dev_dir / "uverbs3"));
  EXPECT_FALSE(fs::exists(opts_.dev_dir / "uverbs4"));
}

TEST_F(RuntimeTreeTest, RecoversFromACrashedPredecessor) {
  // A child builds a tree and dies without cleaning up, like a SIGKILLed
  // fabricd; the kernel drops its lock, its files and nodes stay.
  ASSERT_TRUE(in_dying_child([&] { new RuntimeTree(opts_, specs_); }));
  ASSERT_TRUE(fs::exists(opts_.dev_dir / "uverbs0"));

  // Meanwhile another (live) fabricd took over uverbs3: it holds the lock.
  int other = open((opts_.dev_dir / ".uverbs3.lock").c_str(), O_RDWR);
  ASSERT_GE(other, 0);
  ASSERT_EQ(flock(other, LOCK_EX | LOCK_NB), 0);
  RuntimeTree tree(opts_, specs_);
  EXPECT_EQ(tree.find("vib0")->uverbs, "uverbs0");  // stale nodes removed and reused
  EXPECT_EQ(tree.find("vroce0")->uverbs, "uverbs2");
  EXPECT_EQ(tree.find("vroce1")->uverbs, "uverbs4");  // 3 belongs to someone else now
  EXPECT_EQ(test::read_file(fs::path(sys()) / "class/infiniband_verbs/uverbs4/ibdev"), "vroce1\n");
  EXPECT_TRUE(fs::exists(opts_.dev_dir / "uverbs3"));  // the live owner's node is untouched
  close(other);
}

TEST_F(RuntimeTreeTest, OrphansOfDeadDaemonsAreSweptWhateverTheirRuntimeDir) {
  // A fabricd with another runtime_dir died holding uverbs7 (far above what
  // this tree needs): its lock is free, so the node is swept at start.
  fs::create_directories(opts_.dev_dir);
  ASSERT_EQ(mknod((opts_.dev_dir / "uverbs7").c_str(), S_IFCHR | 0666, null_), 0);
  test::write_file(opts_.dev_dir / ".uverbs7.lock", "");
  // A real device with a stray lock file is never touched.
  ASSERT_EQ(mknod((opts_.dev_dir / "uverbs8").c_str(), S_IFCHR | 0600, makedev(231, 200)), 0);
  test::write_file(opts_.dev_dir / ".uverbs8.lock", "");
  {
    RuntimeTree tree(opts_, specs_);
    EXPECT_FALSE(fs::exists(opts_.dev_dir / "uverbs7"));
    EXPECT_FALSE(fs::exists(opts_.dev_dir / ".uverbs7.lock"));
    EXPECT_TRUE(fs::exists(opts_.dev_dir / "uverbs8"));
    EXPECT_TRUE(fs::exists(opts_.dev_dir / ".uverbs0.lock"));
  }
  EXPECT_FALSE(fs::exists(opts_.dev_dir / ".uverbs0.lock"));
  EXPECT_TRUE(fs::exists(opts_.dev_dir / "uverbs8"));
}

TEST_F(RuntimeTreeTest, RefusesAForeignSysDirectory) {
  fs::create_directories(opts_.runtime_dir / "sys/class");
  try {
    RuntimeTree tree(opts_, specs_);
    FAIL();
  } catch (const RuntimeTreeError& e) {
    EXPECT_NE(std::string(e.what()).find("exists and was not made by fabricd"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(opts_.runtime_dir / "sys/class"));
  EXPECT_FALSE(fs::exists(opts_.dev_dir / "uverbs0"));  // nothing left behind
}

TEST_F(RuntimeTreeTest, ForeignStagingDirectoriesAreLeftAlone) {
  // .sys.old / .sys.new are names fabricd uses; someone else's stay put.
  fs::create_directories(opts_.runtime_dir / ".sys.old");
  test::write_file(opts_.runtime_dir / ".sys.old/theirs", "keep");
  try {
    RuntimeTree tree(opts_, specs_);
    FAIL();
  } catch (const RuntimeTreeError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find((opts_.runtime_dir / ".sys.old").string() + " exists and was not made by fabricd"),
              std::string::npos) << w;
    EXPECT_NE(w.find("move it away"), std::string::npos) << w;
  }
  EXPECT_EQ(test::read_file(opts_.runtime_dir / ".sys.old/theirs"), "keep");
  // An empty one (a predecessor died right after mkdir) is harmless and goes.
  fs::remove(opts_.runtime_dir / ".sys.old/theirs");
  fs::create_directories(opts_.runtime_dir / ".sys.new");
  RuntimeTree tree(opts_, specs_);
  EXPECT_FALSE(fs::exists(opts_.runtime_dir / ".sys.new"));
}

TEST_F(RuntimeTreeTest, ALinkPlantedInSysIsNotFollowedOnRemoval) {
  fs::create_directories(tmp_.path() / "outside/dir");
  test::write_file(tmp_.path() / "outside/dir/precious", "keep");
  {
    RuntimeTree tree(opts_, specs_);
    fs::create_directory_symlink(tmp_.path() / "outside/dir", fs::path(sys()) / "class/planted");
    fs::create_symlink(tmp_.path() / "outside/dir/precious", fs::path(sys()) / "class/infiniband/vib0/planted_file");
  }
  EXPECT_FALSE(fs::exists(opts_.runtime_dir / "sys"));
  EXPECT_EQ(test::read_file(tmp_.path() / "outside/dir/precious"), "keep");
}

// <runtime_dir>/hca, where the device sockets live.
class OwnedDirTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(run_); }
  test::TempDir tmp_;
  fs::path run_ = tmp_.path() / "run";
  fs::path hca_ = run_ / "hca";
};

TEST_F(OwnedDirTest, AForeignPreExistingDirectorySurvivesWithAClearError) {
  fs::create_directories(hca_);
  test::write_file(hca_ / "theirs.sock", "someone else's");
  try {
    runtime::OwnedDir d(hca_);
    FAIL();
  } catch (const RuntimeTreeError& e) {
    std::string w = e.what();
    EXPECT_EQ(w.rfind(hca_.string() + " exists and was not made by fabricd (it has no .vfabric-owner file)", 0), 0u) << w;
    EXPECT_NE(w.find("move it away, or set daemon.runtime_dir"), std::string::npos) << w;
  }
  EXPECT_EQ(test::read_file(hca_ / "theirs.sock"), "someone else's");

  // A link in its place is refused too, and neither it nor its target goes.
  fs::remove_all(hca_);
  fs::create_directories(tmp_.path() / "elsewhere");
  fs::create_directory_symlink(tmp_.path() / "elsewhere", hca_);
  try {
    runtime::OwnedDir d(hca_);
    FAIL();
  } catch (const RuntimeTreeError& e) {
    EXPECT_NE(std::string(e.what()).find("is a symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_symlink(hca_));
  EXPECT_TRUE(fs::is_directory(tmp_.path() / "elsewhere"));
}

TEST_F(OwnedDirTest, RemovalTakesItsOwnContentAndNeverFollowsLinks) {
  fs::create_directories(tmp_.path() / "outside/sub");
  test::write_file(tmp_.path() / "outside/precious", "keep");
  test::write_file(tmp_.path() / "outside/sub/also", "keep");
  {
    runtime::OwnedDir d(hca_);
    struct stat st {};
    ASSERT_EQ(stat(hca_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u);
    test::write_file(hca_ / "vib0.sock", "");
    fs::create_directories(hca_ / "deeper");
    fs::create_directory_symlink(tmp_.path() / "outside", hca_ / "deeper/to_dir");
    fs::create_symlink(tmp_.path() / "outside/precious", hca_ / "to_file");
  }
  EXPECT_FALSE(fs::exists(fs::symlink_status(hca_)));
  EXPECT_EQ(test::read_file(tmp_.path() / "outside/precious"), "keep");
  EXPECT_EQ(test::read_file(tmp_.path() / "outside/sub/also"), "keep");
}

TEST_F(OwnedDirTest, ADeadFabricdsLeftoverIsClearedALiveOnesIsNot) {
  ASSERT_TRUE(in_dying_child([&] {  // hca/ with a stale socket, never cleaned up
    new runtime::OwnedDir(hca_);
    test::write_file(hca_ / "vib0.sock", "stale");
  }));
  ASSERT_TRUE(fs::exists(hca_ / "vib0.sock"));

  runtime::OwnedDir live(hca_);
  EXPECT_FALSE(fs::exists(hca_ / "vib0.sock"));  // the dead one's is gone
  test::write_file(hca_ / "vib0.sock", "live");
  try {
    runtime::OwnedDir second(hca_);
    FAIL();
  } catch (const RuntimeTreeError& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format("is in use by another fabricd (made by fabricd pid {})", getpid())),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_file(hca_ / "vib0.sock"), "live");
}

TEST_F(OwnedDirTest, RemoveSparesADirectorySwappedInAfterStart) {
  runtime::OwnedDir d(hca_);
  // Someone replaces hca/ while fabricd runs; what is there now is not ours.
  fs::rename(hca_, run_ / "hca.moved");
  fs::create_directories(hca_);
  test::write_file(hca_ / "theirs", "keep");
  d.remove();
  EXPECT_EQ(test::read_file(hca_ / "theirs"), "keep");
}

TEST_F(RuntimeTreeTest, UnwritableRuntimeDirIsAClearError) {
  test::write_file(tmp_.path() / "file", "");
  opts_.runtime_dir = tmp_.path() / "file/run";
  try {
    RuntimeTree tree(opts_, specs_);
    FAIL();
  } catch (const RuntimeTreeError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("cannot create runtime directory " + opts_.runtime_dir.string()), std::string::npos) << w;
    EXPECT_NE(w.find("runtime_dir"), std::string::npos) << w;
  }
}

TEST_F(RuntimeTreeTest, PortStateAndLidUpdatesAreAtomicReplacements) {
  RuntimeTree tree(opts_, specs_);
  const fs::path port = fs::path(sys()) / "class/infiniband/vib1/ports/1";
  struct stat before {};
  ASSERT_EQ(stat(port.parent_path().parent_path().c_str(), &before), 0);
  PortInfo rec = specs_[1].port;
  rec.state = PortState::kDown;
  rec.phys_state = PhysState::kDisabled;
  tree.update_port("vib1", rec);
  EXPECT_EQ(test::read_file(port / "state"), "1: DOWN\n");
  EXPECT_EQ(test::read_file(port / "phys_state"), "3: Disabled\n");
  rec.state = PortState::kActive;
  rec.phys_state = PhysState::kLinkUp;
  tree.update_port("vib1", rec);
  EXPECT_EQ(test::read_file(port / "state"), "4: ACTIVE\n");
  rec.lid = 0x1234;
  rec.sm_lid = 7;
  rec.lmc = 2;
  tree.update_port("vib1", rec);
  EXPECT_EQ(test::read_file(port / "lid"), "0x1234\n");
  EXPECT_EQ(test::read_file(port / "sm_lid"), "0x7\n");
  EXPECT_EQ(test::read_file(port / "lid_mask_count"), "2\n");
  // libibverbs keys device identity on the ibdev directory's mtime; port
  // updates must not touch it.
  struct stat after {};
  ASSERT_EQ(stat(port.parent_path().parent_path().c_str(), &after), 0);
  EXPECT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
  EXPECT_EQ(before.st_mtim.tv_sec, after.st_mtim.tv_sec);
  for (const auto& e : fs::directory_iterator(port)) EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
  EXPECT_THROW(tree.update_port("nope", rec), RuntimeTreeError);
}

// The files follow the record: changed ones are replaced (new inode), the
// others stay the very same files, GIDs past a shrunk table go, and a record
// the tree cannot render changes nothing.
TEST_F(RuntimeTreeTest, UpdatePortRewritesOnlyWhatTheRecordChanged) {
  RuntimeTree tree(opts_, specs_);
  const fs::path port = fs::path(sys()) / "class/infiniband/vroce0/ports/1";
  auto ino = [&](const char* rel) {
    struct stat st {};
    EXPECT_EQ(lstat((port / rel).c_str(), &st), 0) << rel;
    return st.st_ino;
  };
  const auto rate_ino = ino("rate"), gid0_ino = ino("gids/0");
  PortInfo rec = specs_[2].port;
  ASSERT_EQ(rec.link_layer, LinkLayer::kEthernet);
  rec.gids.push_back(addr::ipv4_mapped_gid(0xC6120063));  // 198.18.0.99 at index 2
  rec.state = PortState::kInit;
  tree.update_port("vroce0", rec);
  EXPECT_EQ(test::read_file(port / "gids/2"), "0000:0000:0000:0000:0000:ffff:c612:0063\n");
  EXPECT_EQ(test::read_file(port / "gid_attrs/types/2"), "RoCE v2\n");
  EXPECT_EQ(test::read_file(port / "state"), "2: INIT\n");
  EXPECT_EQ(ino("rate"), rate_ino);
  EXPECT_EQ(ino("gids/0"), gid0_ino);

  rec.gid_tbl_len = 4;  // the table shrinks from 16
  tree.update_port("vroce0", rec);
  EXPECT_TRUE(fs::exists(port / "gids/3"));
  EXPECT_FALSE(fs::exists(port / "gids/4"));
  EXPECT_FALSE(fs::exists(port / "gid_attrs/types/15"));

  PortInfo bad = rec;
  bad.state = PortState::kDown;
  bad.active_speed = 3;  // no such encoding: no rate to show
  EXPECT_THROW(tree.update_port("vroce0", bad), RuntimeTreeError);
  EXPECT_EQ(test::read_file(port / "state"), "2: INIT\n");
}

// counters/ and hw_counters/ follow what the daemon renders: new files
// appear, a changed value is a new file (atomic), an unchanged one is left
// alone, a vanished name goes, and nothing outside those two directories
// can be written through it.
TEST_F(RuntimeTreeTest, UpdateCountersReplacesChangedValuesOnly) {
  RuntimeTree tree(opts_, specs_);
  const fs::path port = fs::path(sys()) / "class/infiniband/vib0/ports/1";
  tree.update_counters("vib0", {{"counters/port_xmit_data", "0\n"},
                                {"counters/port_rcv_data", "0\n"},
                                {"hw_counters/sent_pkts", "0\n"}});
  EXPECT_EQ(test::read_file(port / "counters/port_xmit_data"), "0\n");
  struct stat rcv {}, xmit {};
  ASSERT_EQ(stat((port / "counters/port_rcv_data").c_str(), &rcv), 0);
  ASSERT_EQ(stat((port / "counters/port_xmit_data").c_str(), &xmit), 0);
  EXPECT_EQ(rcv.st_mode & 07777, 0444u);
  tree.update_counters("vib0", {{"counters/port_xmit_data", "250\n"}, {"counters/port_rcv_data", "0\n"}});
  EXPECT_EQ(test::read_file(port / "counters/port_xmit_data"), "250\n");
  struct stat rcv2 {}, xmit2 {};
  ASSERT_EQ(stat((port / "counters/port_rcv_data").c_str(), &rcv2), 0);
  ASSERT_EQ(stat((port / "counters/port_xmit_data").c_str(), &xmit2), 0);
  EXPECT_EQ(rcv2.st_ino, rcv.st_ino);
  EXPECT_NE(xmit2.st_ino, xmit.st_ino);
  EXPECT_FALSE(fs::exists(port / "hw_counters/sent_pkts"));
  for (const char* bad : {"state", "counters/../state", "gids/0", "counters/", "hw_counters/a/b"})
    EXPECT_THROW(tree.update_counters("vib0", {{bad, "1\n"}}), RuntimeTreeError) << bad;
  EXPECT_EQ(test::read_file(port / "state"), "4: ACTIVE\n");
  EXPECT_THROW(tree.update_counters("nope", {}), RuntimeTreeError);
}

TEST_F(RuntimeTreeTest, MovedFromTreeRemovesNothing) {
  std::optional<RuntimeTree> b;
  {
    RuntimeTree a(opts_, specs_);
    b.emplace(std::move(a));
  }
  EXPECT_TRUE(fs::exists(opts_.runtime_dir / "sys/class/infiniband/vib0"));
  EXPECT_TRUE(fs::exists(opts_.dev_dir / "uverbs0"));
  b.reset();
  EXPECT_FALSE(fs::exists(opts_.runtime_dir / "sys"));
}

TEST_F(RuntimeTreeTest, HostileSpecsAreRejected) {
  auto bad = specs_;
  bad[0].ibdev = "../../etc";
  EXPECT_THROW(RuntimeTree(opts_, bad), RuntimeTreeError);
  bad = specs_;
  bad[0].device_attrs["../x"] = "y";
  EXPECT_THROW(RuntimeTree(opts_, bad), RuntimeTreeError);
  bad = specs_;
  bad[0].fw_ver = "1\nnode_type";
  EXPECT_THROW(RuntimeTree(opts_, bad), RuntimeTreeError);
  bad = specs_;
  bad[1].ibdev = bad[0].ibdev;
  EXPECT_THROW(RuntimeTree(opts_, bad), RuntimeTreeError);
  bad = specs_;
  bad[0].umad_socket = "/run/x\nibdev";  // would put a second line in vfabric_socket
  EXPECT_THROW(RuntimeTree(opts_, bad), RuntimeTreeError);
  bad = specs_;
  bad[0].umad_socket = "/" + std::string(120, 'x');  // no sockaddr_un holds it
  EXPECT_THROW(RuntimeTree(opts_, bad), RuntimeTreeError);
  EXPECT_FALSE(fs::exists(opts_.runtime_dir / "sys"));
}

TEST_F(RuntimeTreeTest, ProviderAttributesLandUnderDevice) {
  specs_[0].device_attrs["vfabric_socket"] = "/run/vfabric/vib0.sock";
  RuntimeTree tree(opts_, specs_);
  EXPECT_EQ(test::read_file(fs::path(sys()) / "class/infiniband/vib0/device/vfabric_socket"), "/run/vfabric/vib0.sock\n");
  // Reachable through the uverbs entry too, as on a real system.
  EXPECT_EQ(test::read_file(fs::path(sys()) / "class/infiniband_verbs/uverbs0/device/modalias"), "vfabric:vhca\n");
}

}  // namespace
}  // namespace vf::runtime
