// Which configured link an operator means: `fabricctl link set` names it by
// one end ("leaf0/3", or a vHCA "vib0") or by its two nodes ("leaf0 spine1",
// when only one link joins them). Pure config: the control thread resolves
// the request and gives a readable error before anything reaches the lcore.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

#include "daemon/config/config.hpp"

namespace vf {

struct LinkRef {
  size_t fabric;  // index into Config::fabrics
  size_t link;    // index into that fabric's links
};

struct LinkLookupError {
  std::string message;
  std::string hint;
};

// `a`: "node" or "node/N"; `b`: empty, or the other end in the same forms.
std::variant<LinkRef, LinkLookupError> find_link(const config::Config& cfg, std::string_view a,
                                                 std::string_view b = {});

}  // namespace vf
