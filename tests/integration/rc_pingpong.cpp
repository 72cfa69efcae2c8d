#include "rc_pingpong.hpp"

#include <thread>

namespace vf::test {

namespace {

struct Both {
  RunResult server, client;
};

Both run_both(const Fabricd& d, const std::string& server, const std::string& client,
              const std::vector<std::string>& extra, int tcp_port) {
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
  return {srv.wait(std::chrono::seconds(60)), c};
}

}  // namespace

RunResult rc_pingpong(const Fabricd& d, const std::string& server, const std::string& client,
                      std::vector<std::string> extra, int tcp_port) {
  const Both b = run_both(d, server, client, extra, tcp_port);
  return b.client.exit_code == 0 && b.server.exit_code != 0 ? b.server : b.client;
}

RunResult rc_pingpong_lossy(const Fabricd& d, const std::string& server, const std::string& client,
                            std::vector<std::string> extra, int tcp_port) {
  const Both b = run_both(d, server, client, extra, tcp_port);
  // ibv_rc_pingpong's words for a SEND whose ACK never came (PINGPONG_SEND_WRID).
  const auto lost_last_ack = [](const RunResult& r) {
    return r.exit_code != 0 && r.err.find("transport retry counter exceeded (12) for wr_id 2") != std::string::npos;
  };
  if (b.client.exit_code == 0 && (b.server.exit_code == 0 || lost_last_ack(b.server))) return b.client;
  if (b.server.exit_code == 0 && lost_last_ack(b.client)) return b.server;
  return b.client.exit_code != 0 ? b.client : b.server;
}

}  // namespace vf::test
