#include "daemon/ip/netdev.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace vf {
namespace {

[[noreturn]] void fail(const NetdevSpec& s, std::string_view step, int err) {
  throw std::runtime_error(fmt::format("network interface {} of vHCA {}: cannot {}: {}", s.name, s.hca, step,
                                       std::strerror(err)));
}

ifreq request_for(const std::string& name) {
  ifreq r{};
  std::memcpy(r.ifr_name, name.data(), std::min(name.size(), sizeof(r.ifr_name) - 1));
  return r;
}

sockaddr_in inet(uint32_t host_order) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(host_order);
  return a;
}

// The ioctls `ip` predates: enough for one address, the MTU, the MAC and the
// flags, and no netlink code of our own. The address and mask are set while
// the interface is down, so no route with the kernel's classful default mask
// ever exists.
void configure(const NetdevSpec& s, int sock) {
  ifreq r = request_for(s.name);
  if (s.ethernet) {
    r.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    std::memcpy(r.ifr_hwaddr.sa_data, s.mac.data(), s.mac.size());
    if (::ioctl(sock, SIOCSIFHWADDR, &r) != 0) fail(s, "set its MAC address", errno);
  }
  r = request_for(s.name);
  r.ifr_mtu = int(s.mtu);
  if (::ioctl(sock, SIOCSIFMTU, &r) != 0) fail(s, fmt::format("set its MTU to {}", s.mtu), errno);
  r = request_for(s.name);
  const sockaddr_in a = inet(s.ipv4);
  std::memcpy(&r.ifr_addr, &a, sizeof(a));
  if (::ioctl(sock, SIOCSIFADDR, &r) != 0) fail(s, "assign its address", errno);
  r = request_for(s.name);
  const sockaddr_in m = inet(addr::ipv4_mask(s.prefix_len));
  std::memcpy(&r.ifr_netmask, &m, sizeof(m));
  if (::ioctl(sock, SIOCSIFNETMASK, &r) != 0) fail(s, "set its netmask", errno);
  r = request_for(s.name);
  if (::ioctl(sock, SIOCGIFFLAGS, &r) != 0) fail(s, "read its flags", errno);
  r.ifr_flags = short(r.ifr_flags | IFF_UP);
  if (::ioctl(sock, SIOCSIFFLAGS, &r) != 0) fail(s, "bring it up", errno);
}

}  // namespace

uint32_t ipoib_mtu(uint32_t ib_mtu) { return ib_mtu > 4 ? ib_mtu - 4 : ib_mtu; }

Netdev::Netdev(const NetdevSpec& spec) : spec_(spec) {
  // TUNSETIFF on an existing tun/tap of that name would attach to it
  // (someone else's interface): refuse any name already taken.
  if (const unsigned idx = ::if_nametoindex(spec_.name.c_str()); idx != 0)
    throw std::runtime_error(fmt::format("network interface {} of vHCA {} already exists (ifindex {}); remove it "
                                         "(ip link del {}) or set another netdev: for the HCA",
                                         spec_.name, spec_.hca, idx, spec_.name));
  fd_ = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) fail(spec_, "open /dev/net/tun (needs CAP_NET_ADMIN and the tun module)", errno);
  ifreq r = request_for(spec_.name);
  r.ifr_flags = short((spec_.ethernet ? IFF_TAP : IFF_TUN) | IFF_NO_PI);
  if (::ioctl(fd_, TUNSETIFF, &r) != 0) {
    const int err = errno;
    ::close(fd_);
    fail(spec_, "create it", err);
  }
  const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  try {
    if (sock < 0) fail(spec_, "open a socket to configure it", errno);
    configure(spec_, sock);
  } catch (...) {
    if (sock >= 0) ::close(sock);
    ::close(fd_);
    throw;
  }
  ::close(sock);
  ifindex_ = int(::if_nametoindex(spec_.name.c_str()));
}

Netdev::~Netdev() {
  if (fd_ >= 0) ::close(fd_);
}

int Netdev::set_carrier(bool up) {
  int on = up ? 1 : 0;
  return ::ioctl(fd_, TUNSETCARRIER, &on) == 0 ? 0 : errno;
}

void Netdev::drain() {
  std::array<char, 65536> buf;
  for (;;) {
    const ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n <= 0) return;  // EAGAIN: empty
    ++stats_.discarded_packets;
    stats_.discarded_bytes += uint64_t(n);
  }
}

}  // namespace vf
