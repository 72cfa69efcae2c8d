// ProcessMem: both copy paths move the same bytes, and an address space that
// exec replaced or exit ended is never reached again, whatever its pid does.
#include "device/engine/dma.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace vf::engine {
namespace {

int self_mem() { return ::open("/proc/self/mem", O_RDWR | O_CLOEXEC); }

class DmaPaths : public ::testing::TestWithParam<bool> {};

// Pieces whose boundaries do not line up on the two sides, as a burst of
// packets over several SGEs produces; `calls_per_read`: the system calls a
// read of them should take.
void expect_scatter_gather(ProcessMem& mem, uint64_t calls_per_read) {
  std::vector<char> src(300), dst(300, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = char(i * 7 + 1);
  iovec remote[3] = {{src.data(), 100}, {src.data() + 150, 50}, {src.data() + 200, 100}};
  iovec local[2] = {{dst.data(), 120}, {dst.data() + 120, 130}};
  uint64_t calls = 0;
  EXPECT_EQ(mem.readv(local, 2, remote, 3, 0, calls), 250u);
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), 100), 0);
  EXPECT_EQ(std::memcmp(dst.data() + 100, src.data() + 150, 150), 0);
  EXPECT_EQ(calls, calls_per_read);
  std::vector<char> back(250, 'z');
  iovec from[1] = {{back.data(), 250}};
  EXPECT_EQ(mem.writev(from, 1, remote, 3, 0, calls), 250u);
  EXPECT_EQ(src[0], 'z');
  EXPECT_EQ(src[120], char(120 * 7 + 1));  // the gap between pieces is untouched
  EXPECT_EQ(src[299], 'z');
  iovec shorter[1] = {{back.data(), 40}};
  EXPECT_EQ(mem.readv(shorter, 1, remote, 3, 0, calls), 40u) << "the shorter side decides";
}

TEST_P(DmaPaths, ScatterGatherReadAndWrite) {
  ProcessMem mem;
  ASSERT_EQ(mem.open(getpid(), self_mem()), 0);
  if (GetParam()) mem.force_file_path();
  expect_scatter_gather(mem, GetParam() ? 3u : 1u);  // the file takes one remote offset a call
}

TEST_P(DmaPaths, StopsAtTheFirstUnreachableByte) {
  ProcessMem mem;
  ASSERT_EQ(mem.open(getpid(), self_mem()), 0);
  if (GetParam()) mem.force_file_path();
  std::vector<char> src(64, 'a'), dst(128);
  iovec remote[2] = {{src.data(), 64}, {reinterpret_cast<void*>(8), 64}};
  iovec local[1] = {{dst.data(), 128}};
  uint64_t calls = 0;
  EXPECT_EQ(mem.readv(local, 1, remote, 2, 0, calls), 64u);
  EXPECT_FALSE(mem.dead());
}

INSTANTIATE_TEST_SUITE_P(Direct, DmaPaths, ::testing::Values(false));
INSTANTIATE_TEST_SUITE_P(ThroughFile, DmaPaths, ::testing::Values(true));

// A child hands over its /proc/self/mem as the provider does, then execs
// (or exits): the same pid now runs another image, which must stay out of
// reach on both paths.
struct Child {
  pid_t pid = -1;
  int mem_fd = -1;
  int go = -1;          // write a byte: the child execs (or exits)
  int exec_seen = -1;   // EOF once the child's image is gone (CLOEXEC)
  uint64_t secret_addr = 0;
};

// One message of `len` bytes with room for one fd (SCM_RIGHTS).
struct FdMessage {
  FdMessage(void* data, size_t len) : iov{data, len} {
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof(control);
  }
  FdMessage(const FdMessage&) = delete;
  iovec iov;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
};

Child spawn(bool exit_instead) {
  int sp[2], go[2], seen[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
  EXPECT_EQ(pipe2(go, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(seen, O_CLOEXEC), 0);
  static char secret[64] = "secret-of-the-first-image";
  Child c;
  c.pid = fork();
  if (c.pid == 0) {
    int fd = self_mem();
    uint64_t addr = reinterpret_cast<uint64_t>(secret);
    FdMessage fm(&addr, sizeof(addr));
    msghdr& m = fm.m;
    cmsghdr* cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    if (sendmsg(sp[1], &m, 0) < 0) _exit(3);
    char b;
    if (read(go[0], &b, 1) != 1) _exit(4);
    if (exit_instead) _exit(0);
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(5);
  }
  close(sp[1]);
  close(go[0]);
  close(seen[1]);
  // The child's copy of seen[1] is CLOEXEC: EOF on seen[0] means exec/exit.
  uint64_t addr = 0;
  FdMessage fm(&addr, sizeof(addr));
  msghdr& m = fm.m;
  EXPECT_EQ(recvmsg(sp[0], &m, MSG_CMSG_CLOEXEC), ssize_t(sizeof(addr)));
  std::memcpy(&c.mem_fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
  close(sp[0]);
  c.go = go[1];
  c.exec_seen = seen[0];
  c.secret_addr = addr;
  return c;
}

// The virtual-time fabric's in-process apps: memcpy instead of a system
// call, the pieces lined up as process_vm_readv lines them up, one "call"
// per transfer. Only this very process may be copied that way.
TEST(DmaInProcess, CopiesTheSamePiecesWithoutASystemCall) {
  ProcessMem mem;
  ASSERT_EQ(mem.open(getpid(), self_mem()), 0);
  ASSERT_TRUE(mem.copy_in_process());
  expect_scatter_gather(mem, 1u);
}

TEST(DmaInProcess, AnotherProcessIsNeverCopiedInProcess) {
  Child c = spawn(true);
  ASSERT_GT(c.pid, 0);
  ProcessMem mem;
  ASSERT_EQ(mem.open(c.pid, c.mem_fd), 0);
  EXPECT_FALSE(mem.copy_in_process());
  EXPECT_FALSE(mem.in_process());
  char got[32] = {};
  iovec local{got, 25};
  iovec remote{reinterpret_cast<void*>(c.secret_addr), 25};
  uint64_t calls = 0;
  EXPECT_EQ(mem.readv(&local, 1, &remote, 1, 0, calls), 25u) << "still through the kernel, and still works";
  EXPECT_EQ(std::string(got, 25), "secret-of-the-first-image");
  ASSERT_EQ(write(c.go, "x", 1), 1);
  waitpid(c.pid, nullptr, 0);
  close(c.go);
  close(c.exec_seen);
}

class DmaAfterExec : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(DmaAfterExec, ReplacedOrEndedImageIsNeverReached) {
  const auto [file_path, exit_instead] = GetParam();
  Child c = spawn(exit_instead);
  ASSERT_GT(c.pid, 0);
  ProcessMem mem;
  ASSERT_EQ(mem.open(c.pid, c.mem_fd), 0);
  if (file_path) mem.force_file_path();
  char got[64] = {};
  iovec local{got, 25};
  iovec remote{reinterpret_cast<void*>(c.secret_addr), 25};
  uint64_t calls = 0;
  ASSERT_EQ(mem.readv(&local, 1, &remote, 1, 0, calls), 25u);
  EXPECT_EQ(std::string(got, 25), "secret-of-the-first-image");

  ASSERT_EQ(write(c.go, "x", 1), 1);
  char b;
  EXPECT_EQ(read(c.exec_seen, &b, 1), 0);  // the first image is gone
  std::memset(got, 0, sizeof(got));
  const Nanos later = ProcessMem::kAliveRecheck * 2;  // past the recheck window
  EXPECT_EQ(mem.readv(&local, 1, &remote, 1, later, calls), 0u);
  EXPECT_EQ(mem.writev(&local, 1, &remote, 1, later, calls), 0u);
  EXPECT_TRUE(mem.dead());
  EXPECT_FALSE(mem.range_mapped(c.secret_addr, 25, false));
  EXPECT_EQ(std::string(got), "");
  kill(c.pid, SIGKILL);
  waitpid(c.pid, nullptr, 0);
  close(c.go);
  close(c.exec_seen);
}

INSTANTIATE_TEST_SUITE_P(Paths, DmaAfterExec,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()),
                         [](const auto& p) {
                           return std::string(std::get<0>(p.param) ? "File" : "Direct") +
                                  (std::get<1>(p.param) ? "Exit" : "Exec");
                         });

}  // namespace
}  // namespace vf::engine
