// A listening SOCK_SEQPACKET socket at a path, open to every local user
// (0666): how apps reach fabricd's per-vHCA sockets. Whatever was at the
// path is replaced. Throws std::runtime_error saying what failed.
#pragma once

#include <string>

namespace vf {

// `pass_credentials`: accepted sockets carry SCM_CREDENTIALS with every message.
int listen_seqpacket(const std::string& path, bool pass_credentials);

}  // namespace vf
