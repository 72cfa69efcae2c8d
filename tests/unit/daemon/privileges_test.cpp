#include "daemon/privileges.hpp"

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

TEST(Privileges, PtraceLeavesTheEffectiveSet) {
  if (!vf::capability_effective(CAP_SYS_PTRACE)) GTEST_SKIP() << "needs CAP_SYS_PTRACE (run as root)";
  EXPECT_EQ(in_child([] {
              if (vf::drop_effective_capability(CAP_SYS_PTRACE)) return 1;
              if (vf::capability_effective(CAP_SYS_PTRACE)) return 2;
              // Everything else stays: fabricd still needs CAP_MKNOD for device nodes.
              if (!vf::capability_effective(CAP_MKNOD)) return 3;
              return 0;
            }),
            0);
}

TEST(Privileges, BadCapabilityIsRefused) {
  EXPECT_EQ(vf::drop_effective_capability(-1), EINVAL);
  EXPECT_EQ(vf::drop_effective_capability(4096), EINVAL);
  EXPECT_FALSE(vf::capability_effective(4096));
}

}  // namespace
