// One unmodified perftest run between two vHCAs of a real fabricd: the
// server (`server` + `common` + -p PORT) in the background, the client
// (`client` + `common` + -p PORT + 127.0.0.1) retried until the server
// listens.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fabricd_fixture.hpp"

namespace vf::test {

struct PerftestPair {
  RunResult server, client;
  bool ok() const { return server.exit_code == 0 && client.exit_code == 0; }
  std::string describe() const { return "client: " + client.describe() + "\nserver: " + server.describe(); }
};

// `tool`: ib_write_bw, ib_send_lat, ...; `server_dev` / `client_dev`: the
// vHCAs; `common`: options both ends take (-x 1, -q 8, -n 300, ...);
// `client_only`: options only the client takes (-u 20).
PerftestPair perftest_pair(const Fabricd& d, const std::string& tool, const std::string& server_dev,
                           const std::string& client_dev, const std::vector<std::string>& common, int tcp_port,
                           const std::vector<std::string>& client_only = {},
                           std::chrono::seconds timeout = std::chrono::seconds(120));

}  // namespace vf::test
