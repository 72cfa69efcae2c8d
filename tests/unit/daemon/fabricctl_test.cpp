// The built fabricctl binary against an in-process control server with
// canned answers (the schema of ctl/control-api.md), and against no daemon.
#include <utility>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

#include "core/version.hpp"
#include "daemon/control/control_server.hpp"
#include "test_util.hpp"

namespace vf::control {
namespace {
using namespace std::chrono_literals;

const std::string kCtl = VF_FABRICCTL_PATH;
const std::string kLibm = "/lib/x86_64-linux-gnu/libm.so.6";
const std::string kLibpthread = "/lib/x86_64-linux-gnu/libpthread.so.0";
// A sanitizer build of fabricctl refuses to start with a user LD_PRELOAD
// unless told that the library order is fine (no effect on normal builds).
const std::string kAsanOptions = "verify_asan_link_order=0:detect_leaks=0";

json canned_hcas() {
  return json::parse(R"([
    {"name":"vib0","fabric":"ib","link_layer":"infiniband","lid":1,"gids":["fe80::256:4600:12:3456"],
     "port_state":"ACTIVE","active_mtu":4096,"objects":{"clients":0,"pds":0,"mrs":0,"cqs":0,"qps":0}},
    {"name":"vib1","fabric":"ib","link_layer":"infiniband","lid":2,"gids":["fe80::256:4600:12:3457"],
     "port_state":"DOWN","active_mtu":4096,"objects":{"qps":0}},
    {"name":"vroce0","fabric":"roce","link_layer":"ethernet","lid":0,
     "gids":["fe80::56:46ff:fe12:3456","::ffff:198.18.0.1"],"port_state":"ACTIVE","active_mtu":1024,
     "objects":{"qps":3}},
    {"name":"vroce1","fabric":"roce","link_layer":"ethernet","lid":0,
     "gids":["fe80::56:46ff:fe12:3457","::ffff:198.18.0.2"],"port_state":"ACTIVE","active_mtu":1024}
  ])");
}

enum class Mode { Normal, BusyDataplane, Silent, Hostile };

class FabricctlTest : public ::testing::Test {
 protected:
  void start(Mode mode) {
    ServerOptions o;
    o.socket_path = tmp_.path() / "control.sock";
    server_ = std::make_unique<ControlServer>(io_, o);
    const std::string dir = tmp_.str();
    server_->add_command("status", [dir](const json&) {
      return json{{"daemon",
                   {{"pid", 1234}, {"version", "0.1.0"}, {"uptime_s", 3725}, {"config", "/etc/vfabric/fabricd.yaml"},
                    {"runtime_dir", dir}, {"time_dilation", 1}}},
                  {"fabrics", json::parse(R"([
                     {"name":"ib","link_layer":"infiniband","switches":1,"hcas":2,"links":2},
                     {"name":"roce","link_layer":"ethernet","switches":1,"hcas":2,"links":2}])")},
                  {"hca_count", 4},
                  {"clients", 2}};
    });
    if (mode == Mode::BusyDataplane) {
      server_->add_command("hca.list", [](const json&) -> json {
        throw ControlError("the dataplane is busy", "retry in a moment");
      });
    } else if (mode == Mode::Silent) {
      server_->add_async_command("hca.list", [this](const json&, Reply r) { kept_.push_back(r); });
    } else if (mode == Mode::Hostile) {
      server_->add_command("hca.list", [](const json&) {
        return json::parse(R"([{"name":"evil\u001b[31m","fabric":7,"link_layer":null,"gids":"x"}, 5])");
      });
      server_->add_command("env", [](const json&) { return json{{"BAD NAME", "x"}}; });
    } else {
      server_->add_async_command("hca.list", [](const json&, Reply r) {
        std::thread([r] { r.ok(canned_hcas()); }).detach();  // answered from "the lcore"
      });
    }
    if (mode != Mode::Hostile)
      server_->add_command("env", [dir](const json&) {
        return json{{"SYSFS_PATH", dir + "/sys"},
                    {"RDMAV_DRIVERS", "/opt/vf/lib/libvhca"},
                    {"VFABRIC_RUNTIME_DIR", dir},
                    {"LD_PRELOAD", kLibm}};
      });
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) {
      std::promise<void> done;
      boost::asio::post(io_, [&] {
        server_->stop();
        kept_.clear();
        done.set_value();
      });
      done.get_future().wait();
      io_.stop();
      thread_.join();
    }
  }
  test::RunResult ctl(std::vector<std::string> args, std::map<std::string, std::optional<std::string>> env = {}) {
    args.insert(args.begin(), {kCtl, "--runtime-dir", tmp_.str()});
    env.emplace("VFABRIC_RUNTIME_DIR", std::nullopt);
    env.emplace("LD_PRELOAD", std::nullopt);
    env.emplace("ASAN_OPTIONS", kAsanOptions);
    return test::run(args, env);
  }

  test::TempDir tmp_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  std::unique_ptr<ControlServer> server_;
  std::vector<Reply> kept_;
  std::thread thread_;
};

const char* kHcaTable =
    "NAME    FABRIC  LINK_LAYER  PORT_STATE  LID/GID            MTU   QPS\n"
    "vib0    ib      infiniband  ACTIVE      1                  4096  0\n"
    "vib1    ib      infiniband  DOWN        2                  4096  0\n"
    "vroce0  roce    ethernet    ACTIVE      ::ffff:198.18.0.1  1024  3\n"
    "vroce1  roce    ethernet    ACTIVE      ::ffff:198.18.0.2  1024  -\n";

TEST_F(FabricctlTest, HcaListTable) {
  start(Mode::Normal);
  auto r = ctl({"hca", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, kHcaTable);
  EXPECT_EQ(r.err, "");
}

TEST_F(FabricctlTest, HcaListJsonIsTheDaemonsJson) {
  start(Mode::Normal);
  auto r = ctl({"hca", "list", "--json"});  // global option after the subcommand
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), canned_hcas());
  r = ctl({"--json", "hca", "list"});
  EXPECT_EQ(json::parse(r.out), canned_hcas());
}

TEST_F(FabricctlTest, Status) {
  start(Mode::Normal);
  auto r = ctl({"status"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "fabricd 0.1.0, pid 1234, up 1h 02m 05s\n"
                   "config:       /etc/vfabric/fabricd.yaml\n"
                   "runtime dir:  " + tmp_.str() + "\n"
                   "clients:      2\n"
                   "\n"
                   "FABRIC  LINK_LAYER  SWITCHES  HCAS  LINKS\n"
                   "ib      infiniband  1         2     2\n"
                   "roce    ethernet    1         2     2\n"
                   "\n" + std::string(kHcaTable));
  r = ctl({"status", "--json"});
  json j = json::parse(r.out);
  EXPECT_EQ(j["daemon"]["pid"], 1234);
  EXPECT_EQ(j["hcas"], canned_hcas());
}

TEST_F(FabricctlTest, StatusSurvivesAFailingHcaList) {
  start(Mode::BusyDataplane);
  auto r = ctl({"status"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("vHCAs: unavailable (the dataplane is busy)"), std::string::npos) << r.out;
  r = ctl({"hca", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "fabricctl: the dataplane is busy\nhint: retry in a moment\n");
}

TEST_F(FabricctlTest, EnvPrintsExportsForEval) {
  start(Mode::Normal);
  auto r = ctl({"env"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "export LD_PRELOAD='" + kLibm + "'\"${LD_PRELOAD:+:$LD_PRELOAD}\"\n"
                   "export RDMAV_DRIVERS='/opt/vf/lib/libvhca'\n"
                   "export SYSFS_PATH='" + tmp_.str() + "/sys'\n"
                   "export VFABRIC_RUNTIME_DIR='" + tmp_.str() + "'\n");
  // And a shell really gets them, our LD_PRELOAD first, the user's kept.
  auto sh = test::run({"sh", "-c", "eval \"$(" + kCtl + " --runtime-dir " + tmp_.str() +
                                       " env)\" && echo \"$SYSFS_PATH|$LD_PRELOAD\""},
                      {{"LD_PRELOAD", kLibpthread}, {"VFABRIC_RUNTIME_DIR", std::nullopt}, {"ASAN_OPTIONS", kAsanOptions}});
  EXPECT_EQ(sh.out, tmp_.str() + "/sys|" + kLibm + ":" + kLibpthread + "\n") << sh.err;
  r = ctl({"env", "--json"});
  EXPECT_EQ(json::parse(r.out)["RDMAV_DRIVERS"], "/opt/vf/lib/libvhca");
}

TEST_F(FabricctlTest, ExecRunsTheProgramInTheEnvironment) {
  start(Mode::Normal);
  auto r = ctl({"exec", "--", "sh", "-c", "echo \"$SYSFS_PATH|$RDMAV_DRIVERS|$VFABRIC_RUNTIME_DIR|$LD_PRELOAD\"; exit 7"},
               {{"LD_PRELOAD", kLibpthread}});
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_EQ(r.out, tmp_.str() + "/sys|/opt/vf/lib/libvhca|" + tmp_.str() + "|" + kLibm + ":" + kLibpthread + "\n");
  // The program's options are its own, with or without "--".
  r = ctl({"exec", "printf", "%s %s\\n", "--json", "--runtime-dir"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "--json --runtime-dir\n");
  r = ctl({"exec", "--", "no-such-program-vfabric"});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("fabricctl: cannot run no-such-program-vfabric: No such file or directory"), std::string::npos)
      << r.err;
  r = ctl({"exec"});
  EXPECT_EQ(r.status, 2);
}

TEST_F(FabricctlTest, RuntimeDirFromTheEnvironment) {
  start(Mode::Normal);
  auto r = test::run({kCtl, "hca", "list"}, {{"VFABRIC_RUNTIME_DIR", tmp_.str()}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, kHcaTable);
}

TEST_F(FabricctlTest, HostileRepliesAreRenderedSafely) {
  start(Mode::Hostile);
  auto r = ctl({"hca", "list"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;  // no terminal escapes get through
  EXPECT_NE(r.out.find("evil?[31m"), std::string::npos) << r.out;
  r = ctl({"env"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("invalid variable"), std::string::npos) << r.err;
  r = ctl({"exec", "--", "true"});
  EXPECT_EQ(r.status, 1);  // never runs the program with a half-applied environment
}

TEST_F(FabricctlTest, SlowDaemonTimesOut) {
  start(Mode::Silent);
  auto t0 = std::chrono::steady_clock::now();
  auto r = ctl({"--timeout", "0.3", "hca", "list"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "fabricctl: fabricd did not answer within 300 ms\n");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST(Fabricctl, NoDaemon) {
  test::TempDir dir;
  for (std::vector<std::string> cmd : {std::vector<std::string>{"status"}, {"hca", "list"}, {"env"}, {"exec", "--", "true"}}) {
    std::vector<std::string> argv{kCtl, "--runtime-dir", dir.str()};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    auto r = test::run(argv);
    EXPECT_EQ(r.status, 1) << cmd[0];
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "fabricctl: fabricd is not running (cannot connect to " + dir.str() +
                         "/control.sock: No such file or directory). Start it with 'systemctl start fabricd' or "
                         "'fabricd --config configs/default.yaml'.\n")
        << cmd[0];
  }
  // A stale socket of a dead daemon.
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s/control.sock", dir.str().c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  close(fd);
  auto r = test::run({kCtl, "--runtime-dir", dir.str(), "status"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("fabricd is not running (cannot connect to " + dir.str() + "/control.sock: Connection refused)"),
            std::string::npos)
      << r.err;
}

// config check needs no daemon: fabricd's own parser and checks, run by fabricctl.
TEST(Fabricctl, ConfigCheckSaysWhatFabricdWouldSay) {
  const std::string configs = std::string(VF_SOURCE_DIR) + "/configs/";
  auto r = test::run({kCtl, "config", "check", configs + "fat-tree.yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, configs + "fat-tree.yaml: OK (1 fabric: 6 switches, 16 vHCAs, 24 links)\n");
  // Valid, with the routing's credit loop named.
  r = test::run({kCtl, "config", "check", configs + "ring.yaml"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\nwarning: fabric ib: minhop routing has a credit loop"), std::string::npos) << r.out;
  r = test::run({kCtl, "--json", "config", "check", configs + "ring.yaml"});
  const json j = json::parse(r.out);
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_EQ(j["hcas"], 5);
  EXPECT_EQ(j["warnings"].size(), 1u);

  test::TempDir dir;
  const std::string bad = dir.str() + "/bad.yaml";
  test::write_file(bad, "fabrics:\n  - name: ib\n    link_layer: infiniband\n    hcas: [{name: vib0}]\n    links: []\n    mtu: 9\n");
  r = test::run({kCtl, "config", "check", bad});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("fabricctl: " + bad + ":", 0), 0u) << r.err;
  r = test::run({kCtl, "--json", "config", "check", bad});
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(json::parse(r.out)["ok"].get<bool>());
  r = test::run({kCtl, "config", "check", dir.str() + "/missing.yaml"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
  r = test::run({kCtl, "config", "check"});
  EXPECT_EQ(r.status, 2) << "FILE is required";
}

TEST(Fabricctl, UsageAndHelp) {
  auto r = test::run({kCtl});
  EXPECT_EQ(r.status, 2);
  r = test::run({kCtl, "bogus"});
  EXPECT_EQ(r.status, 2);
  r = test::run({kCtl, "hca"});
  EXPECT_EQ(r.status, 2);
  r = test::run({kCtl, "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* s : {"EXAMPLES", "fabricctl exec -- ibv_devinfo", "eval \"$(fabricctl env)\"", "VFABRIC_RUNTIME_DIR",
                        "EXIT STATUS", "status", "hca", "env", "exec"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  r = test::run({kCtl, "hca", "list", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("LID/GID"), std::string::npos);
  r = test::run({kCtl, "--version"});
  EXPECT_EQ(r.out, std::string("fabricctl ") + vf::kVersion + "\n");
}

}  // namespace
}  // namespace vf::control
