#include "perftest_pair.hpp"

#include <thread>

namespace vf::test {

PerftestPair perftest_pair(const Fabricd& d, const std::string& tool, const std::string& server_dev,
                           const std::string& client_dev, const std::vector<std::string>& common, int tcp_port,
                           const std::vector<std::string>& client_only, std::chrono::seconds timeout) {
  std::vector<std::string> srv{tool, "-d", server_dev, "-p", std::to_string(tcp_port)};
  srv.insert(srv.end(), common.begin(), common.end());
  std::vector<std::string> cli{tool, "-d", client_dev, "-p", std::to_string(tcp_port)};
  cli.insert(cli.end(), common.begin(), common.end());
  cli.insert(cli.end(), client_only.begin(), client_only.end());
  cli.push_back("127.0.0.1");
  Process server(srv, d.app_env());
  PerftestPair r;
  for (int attempt = 0; attempt < 50; ++attempt) {
    r.client = run(cli, d.app_env(), timeout);
    if (r.client.err.find("Couldn't connect") == std::string::npos &&
        r.client.out.find("Couldn't connect") == std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  r.server = server.wait(timeout);
  return r;
}

}  // namespace vf::test
