// A listening SOCK_SEQPACKET socket at a path: how apps reach fabricd's
// per-vHCA sockets. Whatever was at the path is replaced. The socket gets
// `mode` (and `group`) before it listens, so nobody connects in between.
// Throws std::runtime_error saying what failed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace vf {

// `pass_credentials`: accepted sockets carry SCM_CREDENTIALS with every message.
int listen_seqpacket(const std::string& path, bool pass_credentials, mode_t mode = 0666,
                     std::optional<gid_t> group = std::nullopt);

}  // namespace vf
