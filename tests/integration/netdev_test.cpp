// The vHCAs' Linux interfaces (daemon/ip/netdev.hpp) as a host sees them: they
// hold the vHCAs' addresses while fabricd runs (a TCP side channel to a
// vHCA's address works, as it does to ib0 or a RoCE NIC's netdev), follow the
// port's state, vanish however fabricd exits, and a config whose address or
// interface name the host already uses is refused, naming both.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

using namespace std::chrono_literals;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string net_attr(const std::string& ifname, const std::string& attr) {
  return trim(read_file("/sys/class/net/" + ifname + "/" + attr));
}

bool has_interface(const std::string& name) { return ::if_nametoindex(name.c_str()) != 0; }

// Polls `pred` for up to 5 s: the kernel applies carrier and address changes
// asynchronously to the ioctl that asked for them.
template <class Pred>
bool eventually(Pred pred) {
  for (auto end = std::chrono::steady_clock::now() + 5s; std::chrono::steady_clock::now() < end;
       std::this_thread::sleep_for(20ms))
    if (pred()) return true;
  return pred();
}

sockaddr_in inet(const std::string& ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

// Binds a listener to `ip`, connects to it from the same host and accepts.
// Returns "" or what failed (with errno's text).
std::string tcp_round_trip(const std::string& ip) {
  const int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a = inet(ip, 0);
  if (::bind(l, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    const std::string e = std::string("bind ") + ip + ": " + std::strerror(errno);
    ::close(l);
    return e;
  }
  socklen_t len = sizeof(a);
  ::getsockname(l, reinterpret_cast<sockaddr*>(&a), &len);
  ::listen(l, 1);
  const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  std::string err;
  if (::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) err = std::string("connect: ") + std::strerror(errno);
  const int s = err.empty() ? ::accept(l, nullptr, nullptr) : -1;
  if (err.empty() && s < 0) err = std::string("accept: ") + std::strerror(errno);
  if (s >= 0) ::close(s);
  ::close(c);
  ::close(l);
  return err;
}

struct Vhca {
  const char* name;
  const char* ip;
  const char* mtu;  // RoCE: the link's IP MTU; IB: IPoIB datagram mode, IB MTU - 4
};
constexpr Vhca kVhcas[] = {
    {"vib0", "198.18.0.101", "4092"}, {"vib1", "198.18.0.102", "4092"},
    {"vroce0", "198.18.0.1", "1500"}, {"vroce1", "198.18.0.2", "1500"}};

TEST(Netdevs, HoldTheVhcaAddressesWhileFabricdRuns) {
  Fabricd d(default_config());
  for (const Vhca& v : kVhcas) {
    SCOPED_TRACE(v.name);
    ASSERT_TRUE(has_interface(v.name));
    const RunResult addr = run({"ip", "-o", "-4", "addr", "show", "dev", v.name});
    EXPECT_NE(addr.out.find(std::string(" ") + v.ip + "/32 "), std::string::npos) << addr.out;
    EXPECT_EQ(net_attr(v.name, "mtu"), v.mtu);
    EXPECT_EQ(net_attr(v.name, "carrier"), "1");
    EXPECT_EQ(tcp_round_trip(v.ip), "");
  }
  // RoCE: every GID in use names the interface; IB GIDs have none.
  const std::string ports = d.runtime_dir() + "/sys/class/infiniband/";
  EXPECT_EQ(read_file(ports + "vroce0/ports/1/gid_attrs/ndevs/0"), "vroce0\n");
  EXPECT_EQ(read_file(ports + "vroce1/ports/1/gid_attrs/ndevs/1"), "vroce1\n");
  EXPECT_EQ(access((ports + "vib0/ports/1/gid_attrs/ndevs").c_str(), F_OK), -1);
  // The tap carries the vHCA's MAC, so the kernel's link-local address is GID 0.
  in6_addr gid0{}, ll{};
  std::string g = trim(read_file(ports + "vroce0/ports/1/gids/0"));
  ASSERT_EQ(inet_pton(AF_INET6, g.c_str(), &gid0), 1) << g;
  ASSERT_TRUE(eventually([&] {
    const std::string out = run({"ip", "-o", "-6", "addr", "show", "dev", "vroce0", "scope", "link"}).out;
    const size_t at = out.find("inet6 ");
    if (at == std::string::npos) return false;
    const std::string a = out.substr(at + 6, out.find('/', at) - at - 6);
    return inet_pton(AF_INET6, a.c_str(), &ll) == 1;
  }));
  EXPECT_EQ(std::memcmp(&gid0, &ll, sizeof(ll)), 0) << g;
  // fabricctl hca show says where the address lives.
  const RunResult show = d.ctl({"hca", "show", "vib0"});
  EXPECT_NE(show.out.find("ip 198.18.0.101/32 on interface vib0"), std::string::npos) << show.describe();

  ASSERT_EQ(d.stop().exit_code, 0);
  for (const Vhca& v : kVhcas) EXPECT_FALSE(has_interface(v.name)) << v.name;
  EXPECT_NE(tcp_round_trip("198.18.0.1"), "");  // no longer an address of the host
}

TEST(Netdevs, CarrierFollowsThePort) {
  Fabricd d(default_config());
  for (const char* name : {"vib0", "vroce1"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(d.ctl({"port", "set", name, "state", "down"}).exit_code, 0);
    EXPECT_TRUE(eventually([&] { return net_attr(name, "carrier") == "0"; }));
    EXPECT_EQ(net_attr(name, "operstate"), "down");
    ASSERT_EQ(d.ctl({"port", "set", name, "state", "up"}).exit_code, 0);
    EXPECT_TRUE(eventually([&] { return net_attr(name, "carrier") == "1"; }));
  }
}

TEST(Netdevs, GoneAfterSigkillAndCleanOnTheNextStart) {
  Fabricd d(default_config());
  ASSERT_TRUE(has_interface("vroce0"));
  d.stop(SIGKILL);
  EXPECT_TRUE(eventually([] { return !has_interface("vroce0") && !has_interface("vib1"); }));
  d.restart();
  EXPECT_TRUE(has_interface("vroce0"));
  EXPECT_EQ(tcp_round_trip("198.18.0.2"), "");
}

// A veth pair the test owns (the kernel here has no dummy driver); deleting
// one end deletes both.
class HostInterface {
 public:
  explicit HostInterface(std::string name) : name_(std::move(name)) {
    const RunResult r = run({"ip", "link", "add", name_, "type", "veth", "peer", "name", name_ + "p"});
    if (r.exit_code != 0) throw std::runtime_error("ip link add " + name_ + ": " + r.describe());
  }
  ~HostInterface() { run({"ip", "link", "del", name_}); }
  void ip(std::vector<std::string> args) {
    const RunResult r = run(std::move(args));
    if (r.exit_code != 0) throw std::runtime_error(r.describe());
  }

 private:
  std::string name_;
};

// fabricd's start on the default config, which must fail as a config error
// (EX_CONFIG) whose message names `want`s; no interface of it may be left.
void expect_refused(const std::vector<std::string>& want) {
  char tmpl[] = "/tmp/vf-it-clash-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string cfg = default_config();
  cfg.replace(cfg.find("/run/vfabric"), 12, std::string(tmpl) + "/run");
  cfg.replace(cfg.find("127.0.0.1:9469"), 14, "\"off\"");
  const std::string path = std::string(tmpl) + "/fabricd.yaml";
  std::ofstream(path) << cfg;
  const RunResult r = run({Paths::fabricd(), "--config", path}, {}, 60s);
  EXPECT_EQ(r.exit_code, 78) << r.describe();
  for (const std::string& w : want) EXPECT_NE(r.err.find(w), std::string::npos) << w << "\n" << r.describe();
  EXPECT_FALSE(has_interface("vib0"));
  run({"rm", "-rf", tmpl});
}

TEST(Netdevs, AnAddressTheHostHasIsRefused) {
  HostInterface h("vfclash0");
  h.ip({"ip", "addr", "add", "198.18.0.2/30", "dev", "vfclash0"});
  expect_refused({"vHCA vroce0", "198.18.0.1/32", "address 198.18.0.2/30 on vfclash0"});
}

TEST(Netdevs, ARouteTheHostHasIsRefused) {
  HostInterface h("vfclash0");
  h.ip({"ip", "link", "set", "vfclash0", "up"});
  h.ip({"ip", "route", "add", "198.18.0.96/28", "dev", "vfclash0"});
  expect_refused({"vHCA vib0", "198.18.0.101/32", "route to 198.18.0.96/28 via vfclash0"});
}

TEST(Netdevs, AnInterfaceNameTheHostHasIsRefused) {
  HostInterface h("vroce1");
  expect_refused({"vHCA vroce1", "already has an interface named vroce1", "netdev:"});
}

}  // namespace
}  // namespace vf::test
