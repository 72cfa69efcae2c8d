// fabricd's YAML config as an admin (or a config-management bug) may write it:
// every input either loads or is refused with a ConfigError that says where
// and what. Any other exception, a crash or a hang is a finding.
#include <cstdlib>
#include <string_view>

#include "daemon/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  try {
    const vf::config::Config cfg = vf::config::load_config_string(yaml, "fuzz.yaml");
    (void)cfg;
  } catch (const vf::config::ConfigError& e) {
    if (*e.what() == '\0' || e.line() < 0 || e.column() < 0) std::abort();
  }
  return 0;
}
