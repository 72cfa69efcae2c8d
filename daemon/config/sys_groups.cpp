#include "daemon/config/sys_groups.hpp"

#include <grp.h>

#include <cerrno>
#include <vector>

namespace vf {

std::optional<gid_t> group_id(const std::string& name) {
  // getgrnam_r: no static buffer shared with other threads; big groups
  // need a bigger buffer (ERANGE).
  std::vector<char> buf(16384);
  group g{}, *res = nullptr;
  int rc;
  while ((rc = ::getgrnam_r(name.c_str(), &g, buf.data(), buf.size(), &res)) == ERANGE && buf.size() < (1u << 22))
    buf.resize(buf.size() * 2);
  if (rc != 0 || !res) return std::nullopt;
  return res->gr_gid;
}

}  // namespace vf
