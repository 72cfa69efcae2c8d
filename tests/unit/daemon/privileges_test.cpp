#include "daemon/os/privileges.hpp"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace {

// Runs `body` in a child (capabilities are per thread and must not leak into
// the other tests) and returns its exit status.
template <typename F>
int in_child(F body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

// Exactly CAP_SYS_PTRACE leaves the effective set; whatever else the process
// holds (as root: CAP_MKNOD for the device nodes, ...) stays. Holds for any
// starting set, so it asserts the same thing as root or not.
TEST(Privileges, OnlyPtraceLeavesTheEffectiveSet) {
  EXPECT_EQ(in_child([] {
              const uint64_t before = vf::effective_capabilities();
              if (vf::drop_effective_capability(CAP_SYS_PTRACE)) return 1;
              if (vf::capability_effective(CAP_SYS_PTRACE)) return 2;
              const uint64_t after = vf::effective_capabilities();
              if (after != (before & ~(uint64_t(1) << CAP_SYS_PTRACE))) return 3;
              if (geteuid() == 0 && !vf::capability_effective(CAP_MKNOD)) return 4;
              return 0;
            }),
            0);
}

TEST(Privileges, BadCapabilityIsRefused) {
  EXPECT_EQ(vf::drop_effective_capability(-1), EINVAL);
  EXPECT_EQ(vf::drop_effective_capability(64), EINVAL);
  EXPECT_FALSE(vf::capability_effective(64));
}

}  // namespace
