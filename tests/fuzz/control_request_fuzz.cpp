// The control protocol as any local user who can connect may speak it: the
// input is written to a real ControlServer (its own io_context thread, a temp
// socket), followed by a newline and a marker request. Every line the server
// answers must be a JSON object with a boolean "ok", and unless the server
// closed the connection (which it does for an oversize line) the marker must
// be answered: one bad request never takes the connection's later ones.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "daemon/control/control_server.hpp"

namespace {

using vf::control::json;
using namespace std::chrono_literals;

class Server {
 public:
  Server() {
    char tmpl[] = "/tmp/vf-fuzz-ctl-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    dir_ = tmpl;
    vf::control::ServerOptions o;
    o.socket_path = dir_ / "control.sock";
    o.group.clear();
    o.max_line = 4096;
    o.request_timeout = 2s;
    o.reply_timeout = 20ms;   // "drop" never answers; the marker waits behind it
    // Half the inputs come from a uid that may not change the fabric.
    o.peer_of = [this](int) {
      return vf::control::Peer{next_uid_, 100, 1, {}};
    };
    server_ = std::make_unique<vf::control::ControlServer>(io_, o);
    const auto ro = vf::control::Access::ReadOnly;
    server_->add_command("echo", [](const json& a) { return a; }, "returns its arguments", ro);
    server_->add_command("need_x", [](const json& a) -> json { return a.at("x").get<int>() + 1; }, "", ro);
    server_->add_command("poke", [](const json&) { return 1; }, "changes things");
    server_->add_async_command("later", [](const json& a, vf::control::Reply r) { r.ok(a); }, "", ro);
    server_->add_async_command("drop", [](const json&, vf::control::Reply) {}, "", ro);
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  const std::filesystem::path& path() const { return server_->socket_path(); }
  uid_t next_uid_ = 0;

 private:
  std::filesystem::path dir_;
  boost::asio::io_context io_;
  std::unique_ptr<vf::control::ControlServer> server_;
  std::thread thread_;  // runs for the fuzzer's lifetime
};

Server& server() {
  static Server* s = new Server;  // never destroyed: libFuzzer exits with the thread running
  return *s;
}

void check_reply_line(const std::string& line) {
  json r = json::parse(line, nullptr, false);
  if (r.is_discarded() || !r.is_object() || !r.contains("ok") || !r["ok"].is_boolean()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Server& s = server();
  s.next_uid_ = (size && (data[0] & 1)) ? 1000 : 0;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, s.path().c_str(), sizeof(a.sun_path) - 1);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) std::abort();
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string out(reinterpret_cast<const char*>(data), size);
  out += "\n{\"cmd\":\"echo\",\"id\":\"fuzz-end\"}\n";
  bool closed = false;
  for (size_t off = 0; off < out.size();) {
    ssize_t n = send(fd, out.data() + off, out.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;  // libFuzzer's SIGALRM (its -timeout watchdog)
    if (n <= 0) { closed = true; break; }  // the server hung up (oversize line)
    off += size_t(n);
  }
  std::string in, line;
  bool marker = false;
  char buf[4096];
  while (!marker) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) { closed = true; break; }
    if (n < 0) std::abort();  // no answer within 5 s: the server hangs
    in.append(buf, size_t(n));
    for (size_t nl; (nl = in.find('\n')) != std::string::npos; in.erase(0, nl + 1)) {
      line = in.substr(0, nl);
      check_reply_line(line);
      if (line.find("\"fuzz-end\"") != std::string::npos) marker = true;
    }
  }
  // Only a line longer than max_line (4096) may cost the connection; allow
  // for where exactly the buffer's limit falls.
  size_t longest = 0, run = 0;
  for (char c : out) run = c == '\n' ? (longest = std::max(longest, run), 0) : run + 1;
  if (closed && !marker && longest < 4000) std::abort();
  close(fd);
  return 0;
}
