// One unmodified ibv_rc_pingpong run (with -c: it checks the data) between
// two vHCAs of a real fabricd: the server in the background, the client
// retried until the server listens.
#pragma once

#include <string>
#include <vector>

#include "fabricd_fixture.hpp"

namespace vf::test {

// `extra` goes to both ends (-n 10, -s 4096, -g 1, ...). The client's result,
// or the server's when only the server failed.
RunResult rc_pingpong(const Fabricd& d, const std::string& server, const std::string& client,
                      std::vector<std::string> extra, int tcp_port);

// The same over a link that loses frames, where only the client's result
// means anything: the client exits once the server's last message arrived,
// and if the ACK of that message is lost, the server's retransmissions find
// no QP and it ends with "transport retry counter exceeded" -- as it would
// on hardware. Everything the server sent did arrive (-c checks the data).
RunResult rc_pingpong_lossy(const Fabricd& d, const std::string& server, const std::string& client,
                            std::vector<std::string> extra, int tcp_port);

}  // namespace vf::test
