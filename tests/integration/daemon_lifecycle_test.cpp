// fabricd as an operator meets it: bad configs, clean exits, a missing
// daemon, hostile device-socket messages and apps killed mid-transfer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/abi/vhca_abi.h"
#include "fabricd_fixture.hpp"

namespace vf::test {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/vf-bad-XXXXXX.yaml";
  int fd = mkstemps(path, 5);
  if (write(fd, text.data(), text.size()) != ssize_t(text.size())) std::abort();
  close(fd);
  return path;
}

// A config error has its own exit status, and the shipped unit does not
// restart fabricd after it (a restart every RestartSec cannot fix a config).
constexpr int kExitConfig = 78;  // EX_CONFIG

TEST(DaemonConfig, ShippedUnitDoesNotRestartAfterAConfigError) {
  const std::string unit = read_file(Paths::source_dir() + "/systemd/fabricd.service");
  EXPECT_NE(unit.find("\nRestartPreventExitStatus=" + std::to_string(kExitConfig) + "\n"), std::string::npos);
  // A reload checks the file first and only then signals (a bad file fails the reload).
  const size_t check = unit.find("\nExecReload=/usr/local/sbin/fabricd --config /etc/vfabric/fabricd.yaml --check\n");
  const size_t hup = unit.find("\nExecReload=/bin/kill -HUP $MAINPID\n");
  ASSERT_NE(check, std::string::npos);
  ASSERT_NE(hup, std::string::npos);
  EXPECT_LT(check, hup);
  EXPECT_EQ(run({Paths::fabricd(), "--check", "--config", "/nonexistent/fabricd.yaml"}).exit_code,
            kExitConfig);
}

// --check also says when a valid config's routing can deadlock (and stays
// quiet when it cannot).
TEST(DaemonConfig, CheckWarnsAboutACreditLoop) {
  const std::string ring = Paths::source_dir() + "/configs/ring.yaml";
  RunResult r = run({Paths::fabricd(), "--check", "--config", ring});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("warning: fabric ib: minhop routing has a credit loop: sw0/2->sw1/3 -> "), std::string::npos)
      << r.describe();
  for (const char* quiet : {"/configs/fat-tree.yaml", "/configs/default.yaml"}) {
    r = run({Paths::fabricd(), "--check", "--config", Paths::source_dir() + quiet});
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.describe();
  }
}

TEST(DaemonConfig, SyntaxErrorNamesFileAndLine) {
  std::string path = write_temp("daemon:\n  runtime_dir: /tmp/x\nfabrics: [\n  - name: a\n");
  auto r = run({Paths::fabricd(), "--config", path});
  EXPECT_EQ(r.exit_code, kExitConfig) << r.describe();
  EXPECT_NE(r.err.find(path + ":"), std::string::npos) << r.describe();
  EXPECT_EQ(run({Paths::fabricd(), "--check", "--config", path}).exit_code, kExitConfig);
  unlink(path.c_str());
}

TEST(DaemonConfig, SemanticErrorNamesFileLineAndProblem) {
  std::string cfg = default_config();
  // A link to a switch port that does not exist (ibsw0 has 8 ports).
  auto pos = cfg.find("b: ibsw0/2");
  ASSERT_NE(pos, std::string::npos);
  cfg.replace(pos, 10, "b: ibsw0/99");
  int line = 1 + int(std::count(cfg.begin(), cfg.begin() + long(pos), '\n'));
  std::string path = write_temp(cfg);
  auto r = run({Paths::fabricd(), "--config", path});
  EXPECT_EQ(r.exit_code, kExitConfig) << r.describe();
  EXPECT_NE(r.err.find(path + ":" + std::to_string(line) + ":"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("99"), std::string::npos) << r.describe();
  unlink(path.c_str());
}

// SIGHUP (`systemctl reload`) re-reads the file: a link's rate and delay
// change under running programs; what shapes the fabric is named as needing
// a restart and left alone; a file that no longer parses changes nothing.
TEST(DaemonLifecycle, SighupAppliesLinkTimingAndNamesWhatNeedsARestart) {
  Fabricd d(default_config());
  std::string y = read_file(d.config_path());
  const auto replace = [&](const std::string& a, const std::string& b) {
    const size_t at = y.find(a);
    ASSERT_NE(at, std::string::npos) << a;
    y.replace(at, a.size(), b);
  };
  replace("{a: vib0, b: ibsw0/1, width: 4x, speed: EDR, delay: 100ns, mtu: 4096}",
          "{a: vib0, b: ibsw0/1, width: 4x, speed: EDR, rate: 10G, delay: 5us, mtu: 4096}");
  replace("      - name: ibsw0\n        ports: 8", "      - name: ibsw0\n        ports: 9");
  std::ofstream(d.config_path()) << y;
  d.process().signal(SIGHUP);
  nlohmann::json link;
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto t = nlohmann::json::parse(d.ctl({"--json", "topology", "show"}).out);
    link = t["fabrics"][0]["links"][0];
    if (link["delay_ns"] == 5000) break;
  }
  EXPECT_EQ(link["rate_bps"], 10'000'000'000ULL) << link.dump();
  EXPECT_EQ(link["delay_ns"], 5000) << link.dump();
  EXPECT_EQ(nlohmann::json::parse(d.ctl({"--json", "topology", "show"}).out)["fabrics"][0]["switches"][0]["ports"], 8)
      << "the switch is as built";
  // A broken file: fabricd keeps serving what runs.
  std::ofstream(d.config_path()) << "fabrics: [";
  d.process().signal(SIGHUP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(d.process().running());
  const RunResult ev = d.ctl({"events", "--history", "--count", "4"});  // ready, link, reload, refused
  EXPECT_NE(ev.out.find("fabric ib: link vib0 - ibsw0/1: rate 100 Gb/s -> 10 Gb/s delay 100ns -> 5us"),
            std::string::npos)
      << ev.out;
  EXPECT_NE(ev.out.find(": 1 link change applied; needs a restart: fabric ib: switches"), std::string::npos) << ev.out;
  EXPECT_NE(ev.out.find("reload refused, nothing changed: "), std::string::npos) << ev.out;
  EXPECT_EQ(d.ctl({"status"}).exit_code, 0);
  const RunResult r = d.stop(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("applied only by a restart, which ends every program's contexts: fabric ib: switches"),
            std::string::npos)
      << r.describe();
}

TEST(DaemonLifecycle, SigtermRemovesRuntimeTreeAndDeviceNodes) {
  std::string runtime;
  {
    Fabricd d(default_config());
    runtime = d.runtime_dir();
    EXPECT_TRUE(exists(runtime + "/sys/class/infiniband/vib0"));
    auto r = d.stop(SIGTERM);
    EXPECT_EQ(r.exit_code, 0) << r.describe();
  }
  EXPECT_FALSE(exists(runtime + "/sys")) << runtime;
  EXPECT_FALSE(exists(runtime + "/hca")) << runtime;
}

TEST(DaemonLifecycle, ForeignHcaDirectoryIsLeftInPlaceWithAClearError) {
  char dir[] = "/tmp/vf-run-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string run_dir = dir, hca = run_dir + "/hca";
  ASSERT_EQ(mkdir(hca.c_str(), 0755), 0);
  { std::ofstream(hca + "/theirs") << "keep"; }
  std::string cfg = default_config();
  auto pos = cfg.find("runtime_dir: /run/vfabric");
  ASSERT_NE(pos, std::string::npos);
  cfg.replace(pos, 25, "runtime_dir: " + run_dir);
  std::string path = write_temp(cfg);
  auto r = run({Paths::fabricd(), "--config", path});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find(hca + " exists and was not made by fabricd"), std::string::npos) << r.describe();
  EXPECT_TRUE(exists(hca + "/theirs"));
  unlink((hca + "/theirs").c_str());
  rmdir(hca.c_str());
  rmdir(dir);
  unlink(path.c_str());
}

TEST(DaemonLifecycle, NoDaemonGivesClearMessage) {
  // The tree outlives a daemon killed with SIGKILL: the provider must say
  // that fabricd is not reachable instead of failing obscurely.
  Fabricd d(default_config());
  Env env = d.app_env();
  d.stop(SIGKILL);
  auto r = run({"ibv_devinfo", "-d", "vib0"}, env);
  EXPECT_NE(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("fabricd is not reachable"), std::string::npos) << r.describe();

  auto ctl = run({Paths::fabricctl(), "--runtime-dir", "/nonexistent/vfabric", "status"});
  EXPECT_EQ(ctl.exit_code, 1) << ctl.describe();
  EXPECT_NE(ctl.err.find("fabricd is not running"), std::string::npos) << ctl.describe();
}

int connect_seqpacket(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a))) return -1;
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  return fd;
}

int open_mem(const std::string& pid) {
  return ::open(("/proc/" + pid + "/mem").c_str(), O_RDWR | O_CLOEXEC);
}

// A read end of the pipe that is a file description of its own, as the
// provider hands the daemon.
int reopen_read_end(int read_fd) {
  return ::open(("/proc/self/fd/" + std::to_string(read_fd)).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

// Sends `bytes` and returns the status of the reply (-1 if none).
int exchange(int fd, const void* bytes, size_t len) {
  if (send(fd, bytes, len, 0) != ssize_t(len)) return -1;
  vhca_rsp_hdr h{};
  char buf[VHCA_MAX_MSG];
  ssize_t n = recv(fd, buf, sizeof(buf), 0);
  if (n < ssize_t(sizeof(h))) return -1;
  std::memcpy(&h, buf, sizeof(h));
  return h.status;
}

// The same, passing `send_fds` with the request (SCM_RIGHTS).
int exchange_with_fds(int fd, const void* bytes, size_t len, std::vector<int> send_fds) {
  iovec iov{const_cast<void*>(bytes), len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * send_fds.size());
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * send_fds.size());
  std::memcpy(CMSG_DATA(c), send_fds.data(), sizeof(int) * send_fds.size());
  if (sendmsg(fd, &msg, 0) != ssize_t(len)) return -1;
  vhca_rsp_hdr h{};
  char buf[VHCA_MAX_MSG];
  ssize_t n = recv(fd, buf, sizeof(buf), 0);
  if (n < ssize_t(sizeof(h))) return -1;
  std::memcpy(&h, buf, sizeof(h));
  return h.status;
}

// A raw connection to `hca`'s device socket, as a provider makes it; -1 on failure.
int connect_device(const Fabricd& d, const std::string& hca) {
  std::string sock =
      read_file(d.runtime_dir() + "/sys/class/infiniband/" + hca + "/" VHCA_SYSFS_SOCKET_ATTR);
  while (!sock.empty() && sock.back() == '\n') sock.pop_back();
  return connect_seqpacket(sock);
}

TEST(DaemonHostileInput, MalformedDeviceMessagesAreRejectedAndServiceContinues) {
  Fabricd d(default_config());
  const int fd = connect_device(d, "vib0");
  ASSERT_GE(fd, 0);

  const char garbage[3] = {1, 2, 3};
  EXPECT_EQ(exchange(fd, garbage, sizeof(garbage)), EPROTO);
  vhca_req_hdr h{VHCA_CMD_QUERY_DEVICE, 1, sizeof(h), VHCA_ABI_VERSION + 7};
  EXPECT_EQ(exchange(fd, &h, sizeof(h)), EPROTONOSUPPORT);
  h = {9999, 2, sizeof(h), VHCA_ABI_VERSION};
  EXPECT_EQ(exchange(fd, &h, sizeof(h)), EOPNOTSUPP);
  h = {VHCA_CMD_QUERY_DEVICE, 3, 1234, VHCA_ABI_VERSION};  // length lies
  EXPECT_EQ(exchange(fd, &h, sizeof(h)), EINVAL);
  // A verb before OPEN_CONTEXT, and forged handles afterwards.
  vhca_handle_req dq{{VHCA_CMD_DESTROY_QP, 4, sizeof(dq), VHCA_ABI_VERSION}, 0xdeadbeef, 0};
  EXPECT_NE(exchange(fd, &dq, sizeof(dq)), 0);
  // ABI v9: OPEN_CONTEXT carries the write end of the async-event pipe, the
  // app's own /proc/self/mem and a read end of the pipe for the daemon alone;
  // nothing else is accepted there.
  vhca_open_context_req open{{VHCA_CMD_OPEN_CONTEXT, 5, sizeof(open), VHCA_ABI_VERSION}};
  EXPECT_EQ(exchange(fd, &open, sizeof(open)), EINVAL);
  int events[2], other[2];
  ASSERT_EQ(pipe2(events, O_CLOEXEC), 0);
  ASSERT_EQ(pipe2(other, O_CLOEXEC), 0);
  const int rd = reopen_read_end(events[0]);
  const int other_rd = reopen_read_end(other[0]);
  const int mem = open_mem("self");
  const int parent_mem = open_mem(std::to_string(getppid()));
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  EXPECT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[1], mem}), EINVAL);  // no read end
  EXPECT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[0], mem, rd}), EINVAL);  // a read end
  EXPECT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[1], mem, other_rd}), EINVAL);  // another pipe
  EXPECT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[1], mem, events[1]}), EINVAL);  // a write end
  EXPECT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[1], null_fd, rd}), EACCES);
  EXPECT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[1], parent_mem, rd}), EACCES);
  EXPECT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[1], mem, rd}), 0);
  for (int f : {other[0], other[1], rd, other_rd}) close(f);
  for (int f : {events[0], events[1], mem, parent_mem, null_fd}) close(f);
  dq.hdr.seq = 6;
  EXPECT_EQ(exchange(fd, &dq, sizeof(dq)), ENOENT);  // no such QP, as uverbs
  std::vector<char> huge(VHCA_MAX_MSG * 2, 'x');
  EXPECT_EQ(exchange(fd, huge.data(), huge.size()), EMSGSIZE);
  close(fd);

  // The daemon still serves everyone else.
  auto r = run({"ibv_devinfo", "-d", "vib1"}, d.app_env());
  EXPECT_EQ(r.exit_code, 0) << r.describe();
}

// A forked child that inherited an opened context's socket may not use it
// (uverbs refuses it EACCES too): the context belongs to the opener.
TEST(DaemonHostileInput, InheritedDeviceSocketIsRefusedToAForkedChild) {
  Fabricd d(default_config());
  const int fd = connect_device(d, "vib0");
  ASSERT_GE(fd, 0);
  int events[2];
  ASSERT_EQ(pipe2(events, O_CLOEXEC), 0);
  const int mem = open_mem("self");
  const int rd = reopen_read_end(events[0]);
  vhca_open_context_req open{{VHCA_CMD_OPEN_CONTEXT, 1, sizeof(open), VHCA_ABI_VERSION}};
  ASSERT_EQ(exchange_with_fds(fd, &open, sizeof(open), {events[1], mem, rd}), 0);
  close(mem);
  close(rd);
  vhca_req_hdr pd{VHCA_CMD_ALLOC_PD, 2, sizeof(pd), VHCA_ABI_VERSION};
  pid_t child = fork();
  if (child == 0) _exit(exchange(fd, &pd, sizeof(pd)) == EACCES ? 0 : 1);
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "the child's ALLOC_PD was not refused EACCES";
  pd.seq = 3;
  EXPECT_EQ(exchange(fd, &pd, sizeof(pd)), 0);  // the opener still may
  close(fd);
  close(events[0]);
  close(events[1]);
}

// Objects the daemon holds for one vHCA, from `fabricctl --json hca list`.
nlohmann::json objects_of(const Fabricd& d, const std::string& hca) {
  auto r = d.ctl({"--json", "hca", "list"});
  if (r.exit_code != 0) return {};
  for (const auto& h : nlohmann::json::parse(r.out))
    if (h["name"] == hca) return h["objects"];
  return {};
}

bool wait_for(const std::function<bool()>& cond, std::chrono::seconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return cond();
}

uint64_t lcore_loops(const Fabricd& d) {
  auto r = d.ctl({"--json", "status"});
  return r.exit_code == 0 ? nlohmann::json::parse(r.out)["lcore"]["loops"].get<uint64_t>() : 0;
}

// With no app and no timer armed the dataplane must block, not poll: a
// spinning lcore would run millions of loops in this window.
TEST(DaemonLifecycle, IdleDaemonSleepsInsteadOfSpinning) {
  Fabricd d(default_config());
  const uint64_t before = lcore_loops(d);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const uint64_t after = lcore_loops(d);
  ASSERT_GT(before, 0u);
  EXPECT_LT(after - before, 100u) << "lcore loops while idle: " << before << " -> " << after;
}

TEST(DaemonLifecycle, AppKilledMidTransferHasEverythingReleased) {
  Fabricd d(default_config());
  const Env env = d.app_env();
  const std::vector<std::string> common{"ibv_rc_pingpong", "-i", "1", "-p", "19411", "-s", "65536",
                                        "-n", "100000000"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = common;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Process server(with({"-d", "vib1"}), env);
  std::unique_ptr<Process> client;
  // Connect (retrying until the server listens), then let data flow.
  ASSERT_TRUE(wait_for(
      [&] {
        if (client && client->running()) return objects_of(d, "vib0").value("qps", 0) == 1;
        client = std::make_unique<Process>(with({"-d", "vib0", "127.0.0.1"}), env);
        return false;
      },
      std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // mid-transfer
  client->signal(SIGKILL);
  client->wait(std::chrono::seconds(10));

  ASSERT_TRUE(wait_for([&] { return objects_of(d, "vib0") == nlohmann::json{{"clients", 0}, {"pds", 0}, {"mrs", 0}, {"cqs", 0}, {"qps", 0}, {"srqs", 0}, {"ahs", 0}, {"mws", 0}}; },
                       std::chrono::seconds(10)))
      << objects_of(d, "vib0").dump();
  server.signal(SIGKILL);
  server.wait(std::chrono::seconds(10));
  EXPECT_TRUE(wait_for([&] { return objects_of(d, "vib1").value("qps", -1) == 0; }, std::chrono::seconds(10)));

  // And the daemon keeps working for the next application.
  Process s2({"ibv_rc_pingpong", "-d", "vib1", "-i", "1", "-p", "19412", "-n", "100"}, env);
  RunResult c2;
  for (int i = 0; i < 50; ++i) {
    c2 = run({"ibv_rc_pingpong", "-d", "vib0", "-i", "1", "-p", "19412", "-n", "100", "127.0.0.1"}, env);
    if (c2.exit_code == 0 || c2.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(c2.exit_code, 0) << c2.describe();
  EXPECT_EQ(s2.wait(std::chrono::seconds(30)).exit_code, 0);
}

}  // namespace
}  // namespace vf::test
