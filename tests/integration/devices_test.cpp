// Unmodified ibverbs-utils see the vHCAs of a real fabricd.
#include <gtest/gtest.h>

#include <filesystem>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

class Devices : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Fabricd(default_config()); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }
  static Fabricd* daemon_;
};
Fabricd* Devices::daemon_ = nullptr;

TEST_F(Devices, IbvDevicesListsAllFour) {
  auto r = run({"ibv_devices"}, daemon_->app_env());
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (auto name : {"vib0", "vib1", "vroce0", "vroce1"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.describe();
}

// One device's block of `ibv_devinfo -v` output.
std::string devinfo(Fabricd& d, const std::string& dev) {
  auto r = run({"ibv_devinfo", "-v", "-d", dev}, d.app_env());
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return r.out;
}

TEST_F(Devices, DevinfoInfinibandPort) {
  std::string out = devinfo(*daemon_, "vib0");
  EXPECT_NE(out.find("hca_id:\tvib0"), std::string::npos) << out;
  EXPECT_NE(out.find("transport:\t\t\tInfiniBand (0)"), std::string::npos) << out;
  EXPECT_NE(out.find("state:\t\t\tPORT_ACTIVE (4)"), std::string::npos) << out;
  EXPECT_NE(out.find("link_layer:\t\tInfiniBand"), std::string::npos) << out;
  EXPECT_NE(out.find("active_mtu:\t\t4096 (5)"), std::string::npos) << out;
  EXPECT_NE(out.find("max_mtu:\t\t4096 (5)"), std::string::npos) << out;
  EXPECT_NE(out.find("active_width:\t\t4X (2)"), std::string::npos) << out;
  EXPECT_NE(out.find("active_speed:\t\t25.0 Gbps (32)"), std::string::npos) << out;  // EDR lane
  EXPECT_NE(out.find("phys_state:\t\tLINK_UP (5)"), std::string::npos) << out;
  EXPECT_NE(out.find("GID[  0]:\t\tfe80:0000:0000:0000"), std::string::npos) << out;
  // Each IB port has a unique non-zero LID from the subnet manager.
  EXPECT_EQ(out.find("port_lid:\t\t0\n"), std::string::npos) << out;
}

TEST_F(Devices, DevinfoRoceV2Port) {
  std::string out = devinfo(*daemon_, "vroce0");
  EXPECT_NE(out.find("link_layer:\t\tEthernet"), std::string::npos) << out;
  EXPECT_NE(out.find("state:\t\t\tPORT_ACTIVE (4)"), std::string::npos) << out;
  EXPECT_NE(out.find("active_mtu:\t\t1024 (3)"), std::string::npos) << out;  // 1500-byte Ethernet
  EXPECT_NE(out.find("::ffff:198.18.0.1, RoCE v2"), std::string::npos) << out;
}

TEST_F(Devices, DevinfoListsEveryDevice) {
  auto r = run({"ibv_devinfo"}, daemon_->app_env());
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  for (auto name : {"vib0", "vib1", "vroce0", "vroce1"})
    EXPECT_NE(r.out.find(std::string("hca_id:\t") + name), std::string::npos) << r.describe();
}

// What query_port says (through the provider) and what sysfs says (read by
// libibverbs and tools directly) must be the same port.
TEST_F(Devices, QueryPortAgreesWithSysfs) {
  for (std::string dev : {"vib0", "vroce0"}) {
    std::string out = devinfo(*daemon_, dev);
    const std::string port = daemon_->runtime_dir() + "/sys/class/infiniband/" + dev + "/ports/1/";
    unsigned long cap = std::stoul(read_file(port + "cap_mask"), nullptr, 16);
    char want[64];
    std::snprintf(want, sizeof(want), "port_cap_flags:\t\t0x%08lx", cap);
    EXPECT_NE(out.find(want), std::string::npos) << dev << ": " << want << "\n" << out;
    EXPECT_NE(out.find("gid_tbl_len:\t\t16"), std::string::npos) << out;
    // IB: a 16-entry table (the default P_Key, then invalid entries); RoCE: one.
    const bool ib = dev == "vib0";
    EXPECT_NE(out.find(ib ? "pkey_tbl_len:\t\t16\n" : "pkey_tbl_len:\t\t1\n"), std::string::npos) << out;
    int files = 0;
    while (std::filesystem::exists(port + "pkeys/" + std::to_string(files))) ++files;
    EXPECT_EQ(files, ib ? 16 : 1) << "sysfs and query_port must agree";
    EXPECT_NE(out.find("fw_ver:\t\t\t\t" + read_file(daemon_->runtime_dir() + "/sys/class/infiniband/" + dev + "/fw_ver").substr(0, 5)),
              std::string::npos) << out;
  }
}

}  // namespace
}  // namespace vf::test
