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

// The same over a link that loses frames. Each end leaves once it has all
// the other's messages and the ACKs of its own; nothing waits for the other
// end to leave. So if the ACK of one end's last message is lost, the other
// end may already have destroyed its QP: the retransmissions find no QP and
// the first end ends with "transport retry counter exceeded" for its last
// SEND (wr_id 2) -- as it would on hardware. That end did deliver all it
// sent: the other one could only exit 0 having received (and, with -c,
// checked) every message. Such a run counts as passed; the result is the
// end that succeeded.
RunResult rc_pingpong_lossy(const Fabricd& d, const std::string& server, const std::string& client,
                            std::vector<std::string> extra, int tcp_port);

}  // namespace vf::test
