// What `fabricd --check` and `fabricctl config check FILE` say about a config
// without starting anything: the error that would stop fabricd (file, line,
// what to do), or a summary plus what is valid but worth knowing (a routing
// with a credit loop).
#pragma once

#include <string>
#include <vector>

namespace vf {

struct ConfigCheck {
  bool ok = false;
  std::string error;  // when !ok: "file:line:col: what; what to do"
  size_t fabrics = 0, switches = 0, hcas = 0, links = 0;
  std::vector<std::string> warnings;
};

ConfigCheck check_config_file(const std::string& path);

}  // namespace vf
