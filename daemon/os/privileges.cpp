#include "daemon/os/privileges.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

#include <linux/capability.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace vf {
namespace {

struct Caps {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
};

int get(Caps& c) { return syscall(SYS_capget, &c.hdr, c.data) ? errno : 0; }

}  // namespace

int drop_effective_capability(int cap) {
  if (cap < 0 || cap >= 64) return EINVAL;
  Caps c;
  if (int err = get(c)) return err;
  const unsigned word = unsigned(cap) / 32;
  const uint32_t bit = 1u << (unsigned(cap) % 32);
  c.data[word].effective &= ~bit;
  c.data[word].inheritable &= ~bit;
  return syscall(SYS_capset, &c.hdr, c.data) ? errno : 0;
}

uint64_t effective_capabilities() {
  Caps c;
  if (get(c)) return 0;
  return uint64_t(c.data[1].effective) << 32 | c.data[0].effective;
}

bool capability_effective(int cap) {
  return cap >= 0 && cap < 64 && (effective_capabilities() >> cap & 1);
}

uint64_t process_capabilities(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("CapEff:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 16);
  return 0;
}

}  // namespace vf
