// What `fabricd --check` and `fabricctl config check FILE` say about a config
// without starting anything: the error that would stop fabricd (file, line,
// what to do), or a summary plus what is valid but worth knowing (a routing
// with a credit loop).
#pragma once

#include <string>
#include <vector>

#include "daemon/config/config.hpp"

namespace vf {

struct ConfigCheck {
  bool ok = false;
  std::string error;  // when !ok: "file:line:col: what; what to do"
  size_t fabrics = 0, switches = 0, hcas = 0, links = 0;
  std::vector<std::string> warnings;
  std::vector<std::string> generated;  // "fabric 'ib': 3-level fat tree, k=16: ..." per generated topology
  std::vector<std::string> adaptive;   // "fabric 'ib': per-packet, among ..." per fabric with adaptive routing on
};

// `limits`: fabricd's (the default) or vfabric-sim's (config::kSimLimits).
ConfigCheck check_config_file(const std::string& path, const config::Limits& limits = {});

}  // namespace vf
