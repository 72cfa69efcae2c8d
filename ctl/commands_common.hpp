// Helpers shared by the command files: error reporting and JSON field access
// that tolerates what a daemon of another version may leave out.
#pragma once

#include <cstdio>
#include <iostream>
#include <string>

#include "ctl/client.hpp"
#include "ctl/commands.hpp"
#include "ctl/table.hpp"

namespace vf::ctl {

template <typename Fn>
int guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const Unreachable& e) {
    std::cerr << "fabricctl: " << e.what() << '\n';
  } catch (const DaemonError& e) {
    std::cerr << "fabricctl: " << cell(e.what(), 512) << '\n';
    if (!e.hint().empty()) std::cerr << "hint: " << cell(e.hint(), 512) << '\n';
  } catch (const std::exception& e) {
    std::cerr << "fabricctl: " << e.what() << '\n';
  }
  return 1;
}

// Field `key` of `obj` as display text; "" when absent (prints as "-").
std::string text(const json& obj, const char* key);
// 3725 -> "1h 02m 05s".
std::string duration_text(double seconds);
// The JSON the daemon sent, pretty-printed.
void print_json(const json& j);

}  // namespace vf::ctl
