// The runtime tree against the real, unmodified libibverbs (Debian's
// ibverbs-utils): proof that the files have the names and formats rdma-core 44
// parses. libibverbs looks for device nodes only in /dev/infiniband (compiled
// in), so this test creates real nodes there (never replacing existing ones)
// and holds the same ctest lock as the integration tests.
//
// ibv_devices lists only devices some provider claims. Without our provider:
//  - our vHCAs are still parsed (uverbs entry, ABI, node type, device node),
//    which IBV_SHOW_WARNINGS=1 makes visible as "no userspace device-specific
//    driver found for <name>";
//  - vHCAs named rxe* are claimed by Debian's rxe provider (it matches ibdev
//    names "rxe*"), so ibv_devices prints them with the node GUID read from
//    our node_guid file.
// The vfabric provider itself is covered by the integration tests.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "daemon/config/link_attrs.hpp"
#include "daemon/runtime/runtime_tree.hpp"
#include "test_util.hpp"

namespace vf::runtime {
namespace {

DeviceSpec spec(const std::string& name, uint32_t index, uint64_t guid, config::LinkLayer ll) {
  DeviceSpec d;
  d.ibdev = name;
  d.index = index;
  d.port.link_layer = config::to_core(ll);
  d.node_guid = d.sys_image_guid = guid;
  d.node_desc = "test " + name;
  d.port.gid_tbl_len = 4;
  d.pkey_table_len = 1;
  d.pkeys = {0xffff};
  d.port.gids = {addr::make_gid(0xfe80000000000000ULL, guid)};
  return d;
}

class Libibverbs : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(test::can_mknod()) << "the suite runs as root (scripts/test.sh): /dev/infiniband nodes need CAP_MKNOD";
    ASSERT_EQ(access("/usr/bin/ibv_devices", X_OK), 0) << "ibverbs-utils missing: run scripts/setup.sh";
    opts_.runtime_dir = tmp_.path() / "run";  // dev_dir stays /dev/infiniband: libibverbs' only choice
  }
  test::RunResult ibv_devices(const RuntimeTree& tree) {
    return test::run({"/usr/bin/ibv_devices"}, {{"SYSFS_PATH", tree.sysfs_path().string()},
                                                {"IBV_SHOW_WARNINGS", "1"},
                                                {"RDMAV_DRIVERS", std::nullopt},
                                                {"IBV_DRIVERS", std::nullopt}});
  }
  test::TempDir tmp_;
  TreeOptions opts_;
};

TEST_F(Libibverbs, ParsesEveryVhcaWithoutAProvider) {
  // High indices keep clear of real or integration-test devices; the tree
  // moves further up by itself if these are taken.
  RuntimeTree tree(opts_, {spec("vfut_ib0", 40, 0x0256460000000001ULL, config::LinkLayer::Infiniband),
                           spec("vfut_roce0", 41, 0x0256460000000002ULL, config::LinkLayer::Ethernet)});
  auto r = ibv_devices(tree);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("device"), std::string::npos) << r.out;
  // Reached only after libibverbs accepted abi_version, ibdev, dev,
  // node_type and stat()ed /dev/infiniband/uverbsN.
  EXPECT_NE(r.err.find("no userspace device-specific driver found for vfut_ib0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no userspace device-specific driver found for vfut_roce0"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Fatal"), std::string::npos) << r.err;
}

TEST_F(Libibverbs, ListsClaimedVhcasWithTheirGuids) {
  RuntimeTree tree(opts_, {spec("rxe_vfut0", 42, 0x0256460000abcdefULL, config::LinkLayer::Ethernet),
                           spec("rxe_vfut1", 43, 0x0256460000123456ULL, config::LinkLayer::Ethernet)});
  auto r = ibv_devices(tree);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rxe_vfut0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0256460000abcdef"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rxe_vfut1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0256460000123456"), std::string::npos) << r.out;
}

TEST_F(Libibverbs, DevicesVanishWithTheTree) {
  std::string sys;
  {
    RuntimeTree tree(opts_, {spec("rxe_vfut2", 44, 0x0256460000000003ULL, config::LinkLayer::Ethernet)});
    sys = tree.sysfs_path().string();
    EXPECT_NE(ibv_devices(tree).out.find("rxe_vfut2"), std::string::npos);
  }
  auto r = test::run({"/usr/bin/ibv_devices"}, {{"SYSFS_PATH", sys}, {"RDMAV_DRIVERS", std::nullopt}});
  EXPECT_EQ(r.out.find("rxe_vfut2"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace vf::runtime
