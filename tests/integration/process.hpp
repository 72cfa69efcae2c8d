// The tests' names for the subprocess runner (core/subprocess.hpp).
#pragma once

#include "core/subprocess.hpp"

namespace vf::test {
using proc::Env;
using proc::Process;
using proc::run;
using proc::RunResult;
}  // namespace vf::test
