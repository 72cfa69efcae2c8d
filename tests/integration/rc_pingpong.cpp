#include "rc_pingpong.hpp"

#include <thread>

namespace vf::test {

RunResult rc_pingpong(const Fabricd& d, const std::string& server, const std::string& client,
                      std::vector<std::string> extra, int tcp_port) {
  auto args = [&](const std::string& dev) {
    std::vector<std::string> a{"ibv_rc_pingpong", "-d", dev, "-i", "1", "-p", std::to_string(tcp_port), "-c"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  Process srv(args(server), d.app_env());
  RunResult c;
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto a = args(client);
    a.push_back("127.0.0.1");
    c = run(a, d.app_env(), std::chrono::seconds(60));
    if (c.exit_code == 0 || c.err.find("Couldn't connect") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const RunResult s = srv.wait(std::chrono::seconds(60));
  return c.exit_code == 0 && s.exit_code != 0 ? s : c;
}

}  // namespace vf::test
