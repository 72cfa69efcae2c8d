// The control server on a real socket in a temp dir, driven by raw clients
// that misbehave in every way the header promises to survive.
#include <utility>

#include <gtest/gtest.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <thread>

#include "daemon/control_server.hpp"
#include "test_util.hpp"

namespace vf::control {
namespace {
using namespace std::chrono_literals;

// A blocking test client with timeouts, speaking raw bytes.
class RawClient {
 public:
  explicit RawClient(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path.c_str());
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  }
  ~RawClient() { close(fd_); }
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
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buf_;
};

class ControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.socket_path = tmp_.path() / "control.sock";
    o.max_line = 1024;
    o.max_clients = 4;
    o.idle_timeout = 400ms;
    o.reply_timeout = 300ms;
    server_ = std::make_unique<ControlServer>(io_, o);
    server_->add_command("echo", [](const json& args) { return args; }, "returns its arguments");
    server_->add_command("fail", [](const json&) -> json { throw ControlError("nope", "try again"); });
    server_->add_command("boom", [](const json&) -> json { throw std::runtime_error("kaput"); });
    server_->add_command("need_x", [](const json& args) -> json { return args.at("x").get<int>() + 1; });
    server_->add_command("utf8", [](const json&) -> json { return std::string("bad \xff byte"); });
    server_->add_async_command("later", [](const json& args, Reply r) {
      // Answer from another thread, as the lcore does.
      std::thread([r, args] {
        std::this_thread::sleep_for(50ms);
        r.ok({{"late", args}});
        r.ok("second answer is ignored");
      }).detach();
    });
    server_->add_async_command("later_error", [](const json&, Reply r) { r.error("lcore says no", "hint!"); });
    server_->add_async_command("never", [this](const json&, Reply r) { kept_.push_back(r); });
    server_->add_async_command("drop", [](const json&, Reply) {});
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

  test::TempDir tmp_;
  boost::asio::io_context io_;
  std::unique_ptr<ControlServer> server_;
  std::vector<Reply> kept_;
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

TEST_F(ControlServerTest, ClientCapRejectsExtraClients) {
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawClient>(path()));
    EXPECT_EQ(held.back()->call(R"({"cmd":"echo"})")["ok"], true);
  }
  RawClient extra(path());
  json r = extra.reply();
  EXPECT_EQ(r["error"], "too many control clients");
  EXPECT_TRUE(extra.closed());
  held.pop_back();
  // A slot frees when a client leaves.
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    RawClient again(path());
    served = again.call(R"({"cmd":"echo"})")["ok"] == true;
    if (!served) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(served);
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
