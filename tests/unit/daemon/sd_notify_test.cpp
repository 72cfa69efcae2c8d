// SdNotify against a datagram socket named by NOTIFY_SOCKET, the way systemd
// provides it (PID 1 is not systemd on the test machines).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "daemon/service/sd_notify.hpp"
#include "test_util.hpp"

namespace vf {
namespace {

class NotifySocket {
 public:
  // `name` starting with '@' is an abstract socket, as systemd may use.
  explicit NotifySocket(const std::string& name) : name_(name) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    socklen_t len;
    if (name[0] == '@') {
      std::memcpy(sa.sun_path + 1, name.data() + 1, name.size() - 1);
      len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    } else {
      std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", name.c_str());
      len = sizeof sa;
    }
    bound_ = bind(fd_, reinterpret_cast<sockaddr*>(&sa), len) == 0;
  }
  ~NotifySocket() { close(fd_); }
  bool bound() const { return bound_; }
  std::string next(int timeout_ms = 1000) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) != 1) return "<nothing>";
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    return n < 0 ? "<error>" : std::string(buf, static_cast<std::size_t>(n));
  }

 private:
  std::string name_;
  int fd_ = -1;
  bool bound_ = false;
};

class SdNotifyTest : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
  }
  test::TempDir tmp_;
};

TEST_F(SdNotifyTest, SendsTheStateChanges) {
  std::string path = (tmp_.path() / "notify").string();
  NotifySocket s(path);
  ASSERT_TRUE(s.bound());
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  EXPECT_TRUE(SdNotify::enabled());
  EXPECT_TRUE(SdNotify::status("building the fabric"));
  EXPECT_EQ(s.next(), "STATUS=building the fabric");
  EXPECT_TRUE(SdNotify::ready());
  EXPECT_EQ(s.next(), "READY=1");
  EXPECT_TRUE(SdNotify::watchdog());
  EXPECT_EQ(s.next(), "WATCHDOG=1");
  EXPECT_TRUE(SdNotify::reloading());
  EXPECT_EQ(s.next(), "RELOADING=1");
  EXPECT_TRUE(SdNotify::stopping());
  EXPECT_EQ(s.next(), "STOPPING=1");
  EXPECT_STREQ(std::getenv("NOTIFY_SOCKET"), path.c_str());  // kept for later calls
}

TEST_F(SdNotifyTest, StatusCannotSmuggleOtherAssignments) {
  std::string path = (tmp_.path() / "notify").string();
  NotifySocket s(path);
  setenv("NOTIFY_SOCKET", path.c_str(), 1);
  EXPECT_TRUE(SdNotify::status("vib0 up\nREADY=1"));
  EXPECT_EQ(s.next(), "STATUS=vib0 up READY=1");
  EXPECT_TRUE(SdNotify::status(std::string(5000, 's')));
  EXPECT_EQ(s.next().size(), std::string("STATUS=").size() + 1024);
}

TEST_F(SdNotifyTest, AbstractSocket) {
  std::string name = "@vfabric-test-" + std::to_string(getpid());
  NotifySocket s(name);
  ASSERT_TRUE(s.bound());
  setenv("NOTIFY_SOCKET", name.c_str(), 1);
  EXPECT_TRUE(SdNotify::ready());
  EXPECT_EQ(s.next(), "READY=1");
}

TEST_F(SdNotifyTest, NoOpsWithoutSystemd) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(SdNotify::enabled());
  EXPECT_FALSE(SdNotify::ready());
  EXPECT_FALSE(SdNotify::status("x"));
  EXPECT_FALSE(SdNotify::watchdog());
  EXPECT_FALSE(SdNotify::stopping());
  setenv("NOTIFY_SOCKET", "", 1);
  EXPECT_FALSE(SdNotify::ready());
  // A socket nobody listens on: reported, not fatal.
  setenv("NOTIFY_SOCKET", (tmp_.path() / "gone").c_str(), 1);
  EXPECT_FALSE(SdNotify::ready());
}

TEST_F(SdNotifyTest, WatchdogInterval) {
  EXPECT_EQ(SdNotify::watchdog_interval(), std::nullopt);
  setenv("WATCHDOG_USEC", "30000000", 1);
  EXPECT_EQ(SdNotify::watchdog_interval(), std::chrono::microseconds(30'000'000));
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_EQ(SdNotify::watchdog_interval(), std::chrono::microseconds(30'000'000));
  setenv("WATCHDOG_PID", "1", 1);  // meant for another process
  EXPECT_EQ(SdNotify::watchdog_interval(), std::nullopt);
  unsetenv("WATCHDOG_PID");
  setenv("WATCHDOG_USEC", "garbage", 1);
  EXPECT_EQ(SdNotify::watchdog_interval(), std::nullopt);
  setenv("WATCHDOG_USEC", "0", 1);
  EXPECT_EQ(SdNotify::watchdog_interval(), std::nullopt);
}

}  // namespace
}  // namespace vf
