// The control server on a real socket in a temp dir, driven by raw clients
// that misbehave in every way the header promises to survive.
#include <utility>

#include <gtest/gtest.h>
#include <grp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <algorithm>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <future>
#include <mutex>
#include <thread>

#include "daemon/control/control_server.hpp"
#include "test_util.hpp"

namespace vf::control {
namespace {
using namespace std::chrono_literals;

// A blocking test client with timeouts, speaking raw bytes.
class RawClient {
 public:
  // connect_now = false: only the socket exists, for when fds run out later.
  explicit RawClient(const std::string& path, bool connect_now = true) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect_now) connect();
  }
  ~RawClient() { close(fd_); }
  bool connect() {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path_.c_str());
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
    return connected_;
  }
  bool connected() const { return connected_; }
  void send(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::send(fd_, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }
  // A line without its newline; nullopt on EOF or timeout.
  std::optional<std::string> line(std::chrono::milliseconds timeout = 3000ms) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return l;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char b[4096];
      ssize_t n = recv(fd_, b, sizeof b, 0);
      if (n <= 0) {
        eof_ = true;
        return std::nullopt;
      }
      buf_.append(b, static_cast<std::size_t>(n));
    }
  }
  json reply(std::chrono::milliseconds timeout = 3000ms) {
    auto l = line(timeout);
    if (!l) return json();
    return json::parse(*l);
  }
  json call(const std::string& request) {
    send(request + "\n");
    return reply();
  }
  // True once the server closed the connection (within the timeout).
  bool closed(std::chrono::milliseconds timeout = 3000ms) {
    while (!eof_) {
      if (!line(timeout) && !eof_) return false;
    }
    return true;
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buf_;
};

// Polls `cond` for up to 3 s.
template <class F>
bool eventually(F cond) {
  for (int i = 0; i < 300; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Sets RLIMIT_NOFILE's soft limit for a scope.
class FdLimit {
 public:
  explicit FdLimit(rlim_t soft) {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit r = saved_;
    r.rlim_cur = std::min(soft, saved_.rlim_max);
    ok_ = setrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur == soft;
  }
  ~FdLimit() { setrlimit(RLIMIT_NOFILE, &saved_); }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

// The lowest fd number not in use: a soft limit of it leaves none to open.
int lowest_free_fd() {
  int fd = dup(0);
  close(fd);
  return fd;
}

class ControlServerTest : public ::testing::Test {
 protected:
  ControlServerTest() {
    opts_.socket_path = tmp_.path() / "control.sock";
    opts_.max_line = 1024;
    opts_.max_clients = 4;
    opts_.request_timeout = 400ms;
    opts_.write_timeout = 400ms;
    opts_.reply_timeout = 300ms;
    opts_.accept_backoff = 50ms;
  }
  void SetUp() override {
    server_ = std::make_unique<ControlServer>(io_, opts_);
    const auto ro = Access::ReadOnly;
    server_->add_command("echo", [](const json& args) { return args; }, "returns its arguments", ro);
    server_->add_command("fail", [](const json&) -> json { throw ControlError("nope", "try again"); }, "", ro);
    server_->add_command("boom", [](const json&) -> json { throw std::runtime_error("kaput"); }, "", ro);
    server_->add_command("need_x", [](const json& args) -> json { return args.at("x").get<int>() + 1; }, "", ro);
    server_->add_command("utf8", [](const json&) -> json { return std::string("bad \xff byte"); }, "", ro);
    server_->add_async_command(
        "later",
        [](const json& args, Reply r) {
          // Answer from another thread, as the lcore does.
          std::thread([r, args] {
            std::this_thread::sleep_for(50ms);
            r.ok({{"late", args}});
            r.ok("second answer is ignored");
          }).detach();
        },
        "", ro);
    server_->add_async_command("later_error", [](const json&, Reply r) { r.error("lcore says no", "hint!"); }, "", ro);
    server_->add_async_command("never", [this](const json&, Reply r) { kept_.push_back(r); }, "", ro);
    server_->add_async_command("drop", [](const json&, Reply) {}, "", ro);
    // Mutating by default: registered without an Access.
    server_->add_command("poke", [this](const json&) { return ++pokes_; }, "changes things");
    server_->add_async_command("poke_later", [this](const json&, Reply r) { r.ok(++pokes_); }, "changes things later");
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) {
      std::promise<void> done;
      boost::asio::post(io_, [&] {
        server_->stop();
        kept_.clear();
        done.set_value();
      });
      done.get_future().wait();
    }
    io_.stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
  }
  std::string path() const { return (tmp_.path() / "control.sock").string(); }
  // Runs `f` on the io thread, where the server's state lives.
  template <class F>
  auto on_io(F f) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    boost::asio::post(io_, [&task] { task(); });
    return result.get();
  }
  std::size_t clients() { return on_io([this] { return server_->client_count(); }); }
  std::size_t kept() { return on_io([this] { return kept_.size(); }); }

  test::TempDir tmp_;
  ServerOptions opts_;
  boost::asio::io_context io_;
  std::unique_ptr<ControlServer> server_;
  std::vector<Reply> kept_;
  std::atomic<int> pokes_{0};
  // Keeps run() going while the server has nothing outstanding (after stop()).
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{io_.get_executor()};
  std::thread thread_;
};

TEST_F(ControlServerTest, GoodRequest) {
  RawClient c(path());
  ASSERT_TRUE(c.connected());
  EXPECT_EQ(c.call(R"({"cmd":"echo","args":{"a":1},"id":7})"), json::parse(R"({"ok":true,"result":{"a":1},"id":7})"));
  EXPECT_EQ(c.call(R"({"cmd":"echo"})"), json::parse(R"({"ok":true,"result":{}})"));
  EXPECT_EQ(c.call("{\"cmd\":\"echo\",\"args\":null}\r"), json::parse(R"({"ok":true,"result":{}})"));
}

TEST_F(ControlServerTest, SocketIsPrivateAndGoesAwayOnStop) {
  struct stat st {};
  ASSERT_EQ(stat(path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  for (const auto& e : std::filesystem::directory_iterator(tmp_.path()))
    EXPECT_EQ(e.path().filename(), "control.sock") << "temporary left: " << e.path();
  std::promise<void> done;
  boost::asio::post(io_, [&] {
    server_->stop();
    done.set_value();
  });
  done.get_future().wait();
  EXPECT_FALSE(std::filesystem::exists(path()));
}

TEST_F(ControlServerTest, MalformedJsonKeepsTheConnection) {
  RawClient c(path());
  json r = c.call("{not json");
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["error"], "request is not valid JSON");
  EXPECT_TRUE(r.contains("hint"));
  r = c.call("[1,2]");
  EXPECT_EQ(r["error"], "request is not a JSON object");
  r = c.call(R"({"cmd":"echo","args":[1]})");
  EXPECT_EQ(r["error"], "\"args\" must be a JSON object");
  r = c.call(R"({"cmd":42})");
  EXPECT_EQ(r["error"], "request has no \"cmd\" string");
  r = c.call(R"({"cmd":"echo","extra":1,"id":"x"})");
  EXPECT_EQ(r["error"], "unknown request field \"extra\"");
  EXPECT_EQ(r["id"], "x");
  r = c.call(std::string(100, '[') + std::string(100, ']'));
  EXPECT_EQ(r["error"], "request nests deeper than 32 levels");
  r = c.call("{\"cmd\":\"echo\",\"args\":{\"s\":\"\xff\"}}");  // invalid UTF-8
  EXPECT_EQ(r["error"], "request is not valid JSON");
  c.send("\n   \n");  // blank lines are ignored
  EXPECT_EQ(c.call(R"({"cmd":"echo","args":{"still":"here"}})")["result"]["still"], "here");
}

TEST_F(ControlServerTest, OversizedLineGetsAnErrorAndIsClosed) {
  RawClient c(path());
  c.send(std::string(5000, 'x'));
  json r = c.reply();
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["error"], "request line longer than 1024 bytes");
  EXPECT_TRUE(c.closed());
  // A line of exactly the limit is fine.
  RawClient d(path());
  std::string pad(1024 - std::string(R"({"cmd":"echo","args":{"p":""}})").size(), 'p');
  EXPECT_EQ(d.call(R"({"cmd":"echo","args":{"p":")" + pad + R"("}})")["ok"], true);
}

TEST_F(ControlServerTest, UnknownCommandListsTheOthers) {
  RawClient c(path());
  json r = c.call(R"({"cmd":"ecoh","id":1})");
  EXPECT_EQ(r["ok"], false);
  EXPECT_EQ(r["error"], "unknown command \"ecoh\"");
  std::string hint = r["hint"];
  EXPECT_NE(hint.find("did you mean \"echo\"?"), std::string::npos) << hint;
  EXPECT_NE(hint.find("available commands: boom, drop, echo, fail, help"), std::string::npos) << hint;
  EXPECT_EQ(r["id"], 1);
}

TEST_F(ControlServerTest, HandlerErrorsBecomeReplies) {
  RawClient c(path());
  EXPECT_EQ(c.call(R"({"cmd":"fail"})"), json::parse(R"({"ok":false,"error":"nope","hint":"try again"})"));
  json r = c.call(R"({"cmd":"boom"})");
  EXPECT_EQ(r["error"], "\"boom\" failed: kaput");
  r = c.call(R"({"cmd":"need_x","args":{"x":"one"}})");
  EXPECT_NE(r["error"].get<std::string>().find("bad arguments for \"need_x\""), std::string::npos) << r;
  EXPECT_EQ(c.call(R"({"cmd":"need_x","args":{"x":41}})")["result"], 42);
  r = c.call(R"({"cmd":"utf8"})");  // a handler's invalid UTF-8 is replaced, not fatal
  EXPECT_EQ(r["ok"], true);
}

TEST_F(ControlServerTest, HelpListsCommands) {
  RawClient c(path());
  json r = c.call(R"({"cmd":"help"})");
  ASSERT_EQ(r["ok"], true);
  bool saw_echo = false, saw_later = false;
  for (const auto& e : r["result"]["commands"]) {
    if (e["name"] == "echo") saw_echo = e["help"] == "returns its arguments" && e["async"] == false;
    if (e["name"] == "later") saw_later = e["async"] == true;
  }
  EXPECT_TRUE(saw_echo);
  EXPECT_TRUE(saw_later);
}

TEST_F(ControlServerTest, AsyncCommands) {
  RawClient c(path());
  EXPECT_EQ(c.call(R"({"cmd":"later","args":{"n":1},"id":"a"})"),
            json::parse(R"({"ok":true,"result":{"late":{"n":1}},"id":"a"})"));
  EXPECT_EQ(c.call(R"({"cmd":"later_error"})"), json::parse(R"({"ok":false,"error":"lcore says no","hint":"hint!"})"));
  json r = c.call(R"({"cmd":"drop","id":3})");
  EXPECT_EQ(r["error"], "the command finished without a reply");
  EXPECT_EQ(r["id"], 3);
  auto t0 = std::chrono::steady_clock::now();
  r = c.call(R"({"cmd":"never","id":4})");
  EXPECT_EQ(r["error"], "the command timed out");
  EXPECT_EQ(r["id"], 4);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 250ms);
  // The late answer to the timed-out request never reaches the client.
  boost::asio::post(io_, [this] {
    for (auto& k : kept_) k.ok("too late");
  });
  EXPECT_EQ(c.call(R"({"cmd":"echo","args":{"after":true}})")["result"]["after"], true);
}

TEST_F(ControlServerTest, PipelinedRequestsAnswerInOrder) {
  RawClient c(path());
  c.send("{\"cmd\":\"later\",\"id\":1}\n{\"cmd\":\"echo\",\"id\":2}\n{\"cmd\":\"fail\",\"id\":3}\n");
  EXPECT_EQ(c.reply()["id"], 1);
  EXPECT_EQ(c.reply()["id"], 2);
  EXPECT_EQ(c.reply()["id"], 3);
}

TEST_F(ControlServerTest, TwoClientsConcurrently) {
  RawClient slow(path()), fast(path());
  slow.send(R"({"cmd":"echo","args":{"who":"sl)");  // half a request
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(fast.call(R"({"cmd":"echo","args":{"who":"fast"}})")["result"]["who"], "fast");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 200ms);  // not held up by the slow one
  slow.send("ow\"}}\n");
  EXPECT_EQ(slow.reply()["result"]["who"], "slow");
  // A client waiting on an async command does not block the others either.
  RawClient waiting(path());
  waiting.send("{\"cmd\":\"never\"}\n");
  EXPECT_EQ(fast.call(R"({"cmd":"echo","args":{"n":2}})")["result"]["n"], 2);
  EXPECT_EQ(waiting.reply()["error"], "the command timed out");
}

TEST_F(ControlServerTest, IdleAndSlowlorisClientsAreDropped) {
  RawClient idle(path());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(idle.closed(2000ms));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);

  RawClient loris(path());
  t0 = std::chrono::steady_clock::now();
  bool dropped = false;
  for (int i = 0; i < 40 && !dropped; ++i) {  // one byte every 50 ms never finishes a line
    loris.send("{");
    dropped = loris.closed(50ms);
  }
  EXPECT_TRUE(dropped);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1500ms);

  RawClient ok(path());
  EXPECT_EQ(ok.call(R"({"cmd":"echo"})")["ok"], true);
}

TEST_F(ControlServerTest, FullTableEvictsTheLongestIdle) {
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawClient>(path()));
    EXPECT_EQ(held.back()->call(R"({"cmd":"echo"})")["ok"], true);
  }
  held[1]->call(R"({"cmd":"echo"})");  // now held[0] has been idle the longest
  RawClient extra(path());
  EXPECT_EQ(extra.call(R"({"cmd":"echo","args":{"n":5}})")["result"]["n"], 5);
  json r = held[0]->reply();
  EXPECT_EQ(r["error"], "closed to make room for another control client");
  EXPECT_TRUE(held[0]->closed());
  for (int i = 1; i < 4; ++i) EXPECT_EQ(held[i]->call(R"({"cmd":"echo"})")["ok"], true) << i;
  EXPECT_EQ(clients(), 4u);
}

TEST_F(ControlServerTest, BlankLinesDoNotKeepAConnectionFresh) {
  RawClient a(path()), b(path());
  ASSERT_TRUE(eventually([&] { return clients() == 2; }));
  a.send("\n\n");  // not a request: a stays the longest idle
  EXPECT_EQ(b.call(R"({"cmd":"echo"})")["ok"], true);
  RawClient c(path()), d(path()), e(path());
  EXPECT_EQ(e.call(R"({"cmd":"echo"})")["ok"], true);
  EXPECT_TRUE(a.closed());
  EXPECT_EQ(b.call(R"({"cmd":"echo"})")["ok"], true);
}

// Each connection is seen with the credentials the test says.
class FakePeerTest : public ControlServerTest {
 protected:
  FakePeerTest() {
    opts_.peer_of = [this](int fd) {
      Peer p = peer_credentials(fd);
      std::lock_guard lock(mu_);
      if (!peers_.empty()) {
        p = peers_.front();  // accept order is connect order
        peers_.pop_front();
      }
      return p;
    };
  }
  std::unique_ptr<RawClient> connect_as(Peer p) {
    {
      std::lock_guard lock(mu_);
      peers_.push_back(std::move(p));
    }
    return std::make_unique<RawClient>(path());
  }
  std::unique_ptr<RawClient> connect_as(uid_t uid) { return connect_as(Peer{uid, 100, 1, {}}); }
  std::mutex mu_;
  std::deque<Peer> peers_;
};

// Handlers that hold their Reply until the test answers, so "busy" lasts.
class BusyControlServerTest : public FakePeerTest {
 protected:
  BusyControlServerTest() { opts_.reply_timeout = 10s; }
  void answer_kept(std::size_t i) {
    on_io([this, i] {
      kept_.at(i).ok("answered");
      return 0;
    });
  }
};

class PerUidControlServerTest : public BusyControlServerTest {
 protected:
  PerUidControlServerTest() { opts_.max_clients_per_uid = 2; }
};

TEST_F(BusyControlServerTest, BusyConnectionsAreNotEvicted) {
  std::vector<std::unique_ptr<RawClient>> busy;
  for (int i = 0; i < 4; ++i) {
    busy.push_back(std::make_unique<RawClient>(path()));
    busy.back()->send("{\"cmd\":\"never\"}\n");
    ASSERT_TRUE(eventually([&] { return kept() == busy.size(); }));
  }
  RawClient extra(path());
  json r = extra.reply();
  EXPECT_EQ(r["error"], "too many control clients");
  EXPECT_NE(r["hint"].get<std::string>().find("busy"), std::string::npos) << r;
  EXPECT_TRUE(extra.closed());
  // Once one is answered it is idle again, and the next newcomer gets its slot.
  answer_kept(2);
  EXPECT_EQ(busy[2]->reply()["result"], "answered");
  RawClient next(path());
  EXPECT_EQ(next.call(R"({"cmd":"echo"})")["ok"], true);
  EXPECT_TRUE(busy[2]->closed());
}

TEST_F(PerUidControlServerTest, OneUidCannotTakeEverySlot) {
  auto a1 = connect_as(1000), a2 = connect_as(1000);
  a1->send("{\"cmd\":\"never\"}\n");
  a2->send("{\"cmd\":\"never\"}\n");
  ASSERT_TRUE(eventually([&] { return kept() == 2; }));
  auto a3 = connect_as(1000);  // uid 1000 holds its 2, both busy
  json r = a3->reply();
  EXPECT_EQ(r["error"], "too many control connections from uid 1000");
  EXPECT_TRUE(a3->closed());

  auto b1 = connect_as(2000);
  EXPECT_EQ(b1->call(R"({"cmd":"echo"})")["ok"], true);
  auto b2 = connect_as(2000);
  ASSERT_TRUE(eventually([&] { return clients() == 4; }));
  auto c1 = connect_as(3000);  // full: b1 has been idle the longest
  EXPECT_EQ(c1->call(R"({"cmd":"echo"})")["ok"], true);
  EXPECT_EQ(b1->reply()["error"], "closed to make room for another control client");

  // A uid at its cap makes room from its own idle connections only.
  answer_kept(0);
  EXPECT_EQ(a1->reply()["result"], "answered");
  auto a4 = connect_as(1000);
  EXPECT_EQ(a4->call(R"({"cmd":"echo"})")["ok"], true);
  EXPECT_TRUE(a1->closed());
  EXPECT_EQ(b2->call(R"({"cmd":"echo"})")["ok"], true);
  EXPECT_EQ(c1->call(R"({"cmd":"echo"})")["ok"], true);
}

TEST_F(ControlServerTest, FdExhaustionBacksOffAndFreesAnIdleClientsFd) {
  auto cpu = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return std::chrono::seconds(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           std::chrono::microseconds(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  RawClient first(path(), false);
  {
    FdLimit none(static_cast<rlim_t>(lowest_free_fd()));
    ASSERT_TRUE(none.ok());
    ASSERT_TRUE(first.connect());  // queued: the server's accept gets EMFILE
    // Nothing to evict: the listener must wait, not spin on the failing accept.
    auto before = cpu();
    std::this_thread::sleep_for(300ms);
    EXPECT_LT(cpu() - before, 100ms);
    EXPECT_EQ(clients(), 0u);
  }
  // Fds are back: the queued client is served on the next attempt.
  EXPECT_EQ(first.call(R"({"cmd":"echo"})")["ok"], true);

  RawClient late(path(), false);
  FdLimit none(static_cast<rlim_t>(lowest_free_fd()));
  ASSERT_TRUE(none.ok());
  ASSERT_TRUE(late.connect());
  // The idle client's fd is the one freed for the newcomer.
  EXPECT_EQ(late.call(R"({"cmd":"echo","args":{"late":1}})")["result"]["late"], 1);
  EXPECT_EQ(first.reply()["error"], "closed to make room for another control client");
  // Still no fds, but nobody waiting: the idle newcomer is left alone.
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(late.call(R"({"cmd":"echo","args":{"late":2}})")["result"]["late"], 2);
}

TEST(ControlPermissions, WhoMayMutate) {
  const uid_t daemon = 999;
  const gid_t admins = 4242;
  EXPECT_TRUE(may_mutate(Peer{0, 0, 1, {}}, daemon, std::nullopt));
  EXPECT_TRUE(may_mutate(Peer{daemon, 100, 1, {}}, daemon, std::nullopt));
  EXPECT_FALSE(may_mutate(Peer{1000, 100, 1, {}}, daemon, std::nullopt));
  EXPECT_FALSE(may_mutate(Peer{1000, 100, 1, {10, 20}}, daemon, admins));
  EXPECT_TRUE(may_mutate(Peer{1000, 100, 1, {10, admins}}, daemon, admins));
  EXPECT_TRUE(may_mutate(Peer{1000, admins, 1, {}}, daemon, admins));  // primary group counts
  EXPECT_FALSE(may_mutate(Peer{}, daemon, admins));                     // credentials unknown
  EXPECT_FALSE(may_mutate(Peer{static_cast<uid_t>(-1), admins, 1, {admins}}, daemon, admins));
}

class PermissionTest : public FakePeerTest {
 protected:
  PermissionTest() {
    opts_.daemon_uid = 999;
    opts_.admin_gid = 4242;
  }
};

TEST_F(PermissionTest, MutatingCommandsAreRefusedToOthersAndTheConnectionStays) {
  auto user = connect_as(1000);
  EXPECT_EQ(user->call(R"({"cmd":"echo","args":{"a":1}})")["result"]["a"], 1);  // read-only: fine
  for (const char* cmd : {"poke", "poke_later"}) {
    json r = user->call(fmt::format(R"({{"cmd":"{}","id":9}})", cmd));
    EXPECT_EQ(r["ok"], false) << r;
    EXPECT_NE(r["error"].get<std::string>().find("permission denied"), std::string::npos) << r;
    EXPECT_NE(r["error"].get<std::string>().find(cmd), std::string::npos) << r;
    EXPECT_NE(r["hint"].get<std::string>().find("daemon.admin_group"), std::string::npos) << r;
    EXPECT_EQ(r["id"], 9);
  }
  EXPECT_EQ(pokes_, 0);
  EXPECT_EQ(user->call(R"({"cmd":"echo","args":{"b":2}})")["result"]["b"], 2);  // still usable

  // The same commands for the admin group, fabricd's user and root.
  auto admin = connect_as(Peer{1001, 100, 1, {27, 4242}});
  EXPECT_EQ(admin->call(R"({"cmd":"poke"})")["result"], 1);
  EXPECT_EQ(admin->call(R"({"cmd":"poke_later"})")["result"], 2);
  EXPECT_EQ(connect_as(999)->call(R"({"cmd":"poke"})")["result"], 3);
  EXPECT_EQ(connect_as(0)->call(R"({"cmd":"poke"})")["result"], 4);
}

TEST_F(PermissionTest, HelpSaysWhichCommandsMutate) {
  json r = connect_as(1000)->call(R"({"cmd":"help"})");  // help itself is read-only
  ASSERT_EQ(r["ok"], true) << r;
  std::map<std::string, bool> mutates;
  for (const auto& e : r["result"]["commands"]) mutates[e["name"]] = e["mutates"];
  EXPECT_EQ(mutates.at("poke"), true);
  EXPECT_EQ(mutates.at("echo"), false);
  EXPECT_EQ(mutates.at("help"), false);
}

// No injection: the kernel's credentials of a process that dropped to
// nobody (65534) are refused; root's are accepted.
TEST_F(ControlServerTest, RealCredentialsOfNobodyAreRefused) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root (scripts/test.sh): dropping to nobody needs it";
  ASSERT_EQ(chmod(tmp_.path().c_str(), 0711), 0);
  ASSERT_EQ(chmod(path().c_str(), 0666), 0);
  EXPECT_EQ(RawClient(path()).call(R"({"cmd":"poke"})")["result"], 1);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path().c_str());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only syscalls and plain string searches from here: fork() copied one
    // thread of a threaded process.
    if (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) _exit(11);
    const char req[] = "{\"cmd\":\"poke\"}\n{\"cmd\":\"echo\",\"args\":{\"after\":1}}\n";
    if (write(fd, req, sizeof req - 1) != static_cast<ssize_t>(sizeof req - 1)) _exit(12);
    char buf[4096] = {};
    std::size_t got = 0;
    while (got < sizeof buf - 1 && std::count(buf, buf + got, '\n') < 2) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 3000) != 1) _exit(13);
      ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
      if (n <= 0) _exit(14);
      got += static_cast<std::size_t>(n);
    }
    const char* second = std::strchr(buf, '\n') + 1;
    if (!std::strstr(buf, "permission denied") || std::strstr(buf, "permission denied") > second) _exit(15);
    if (!std::strstr(second, "\"after\":1")) _exit(16);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_EQ(pokes_, 1);
}

// The acceptance test of the lock-out fix, with the shipped limits: a flood
// of connections that send nothing or trickle bytes cannot keep a real
// request out.
TEST(ControlServerFlood, ThousandIdleConnectionsDoNotLockOut) {
  FdLimit room(4096);  // 1000 client ends + the server's, in this one process
  ASSERT_TRUE(room.ok());
  test::TempDir tmp;
  boost::asio::io_context io;
  ServerOptions o;
  o.socket_path = tmp.path() / "control.sock";
  ControlServer server(io, o);
  server.add_command("status", [](const json&) { return json{{"up", true}}; });
  server.start();
  std::thread t([&] { io.run(); });

  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 1000; ++i) {
    flood.push_back(std::make_unique<RawClient>(o.socket_path.string()));
    ASSERT_TRUE(flood.back()->connected()) << i;
    if (i % 3 == 0) flood.back()->send("{\"cmd\":");  // a request trickling in
  }
  for (int round = 0; round < 3; ++round) {
    RawClient ctl(o.socket_path.string());
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ctl.call(R"({"cmd":"status"})")["result"]["up"], true) << round;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
    for (int i = 0; i < 50; ++i) flood[static_cast<std::size_t>(i)]->send("\"x");  // keep trickling
  }
  std::promise<std::size_t> n;
  boost::asio::post(io, [&] {
    n.set_value(server.client_count());
    server.stop();
  });
  EXPECT_LE(n.get_future().get(), o.max_clients);
  t.join();
}

TEST(ControlServerStart, SocketGroup) {
  ASSERT_EQ(geteuid(), 0u) << "the suite runs as root (scripts/test.sh): chgrp to another group needs it";
  group* adm = getgrnam("adm");
  ASSERT_NE(adm, nullptr) << "Debian always has group adm";
  const gid_t gid = adm->gr_gid;
  test::TempDir tmp;
  boost::asio::io_context io;
  ServerOptions o;
  o.socket_path = tmp.path() / "control.sock";
  o.group = "adm";
  ControlServer s(io, o);
  s.start();
  struct stat st {};
  ASSERT_EQ(stat(o.socket_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, gid);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  s.stop();
  o.group = "no_such_group_vfabric";  // missing group: served, root-only
  ControlServer t(io, o);
  EXPECT_NO_THROW(t.start());
}

TEST(ControlServerStart, RefusesALiveSocketAndReplacesAStaleOne) {
  test::TempDir tmp;
  boost::asio::io_context io;
  ServerOptions o;
  o.socket_path = tmp.path() / "control.sock";
  ControlServer first(io, o);
  first.start();
  ControlServer second(io, o);
  try {
    second.start();
    FAIL();
  } catch (const ControlServerError& e) {
    EXPECT_NE(std::string(e.what()).find("another fabricd is already serving"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(o.socket_path));  // the live one is untouched
  first.stop();

  // A socket file nobody listens on is stale and replaced.
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", o.socket_path.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  close(fd);
  ControlServer third(io, o);
  EXPECT_NO_THROW(third.start());
  third.stop();

  // A regular file is not ours to replace.
  test::write_file(o.socket_path, "precious");
  ControlServer fourth(io, o);
  EXPECT_THROW(fourth.start(), ControlServerError);
  EXPECT_EQ(test::read_file(o.socket_path), "precious");

  ServerOptions longpath;
  longpath.socket_path = tmp.path() / std::string(120, 'x');
  ControlServer fifth(io, longpath);
  EXPECT_THROW(fifth.start(), ControlServerError);
}

}  // namespace
}  // namespace vf::control
