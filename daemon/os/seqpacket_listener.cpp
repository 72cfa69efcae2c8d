#include "daemon/os/seqpacket_listener.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace vf {

int listen_seqpacket(const std::string& path, bool pass_credentials, mode_t mode, std::optional<gid_t> group) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) throw std::runtime_error("socket path too long: " + path);
  std::strcpy(addr.sun_path, path.c_str());
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  unlink(path.c_str());
  const int on = 1;
  if (pass_credentials && setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on))) {
    int err = errno;
    close(fd);
    throw std::runtime_error("SO_PASSCRED on " + path + ": " + std::strerror(err));
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) ||
      (group && chown(path.c_str(), uid_t(-1), *group) != 0) || chmod(path.c_str(), mode) != 0 || listen(fd, 64)) {
    int err = errno;
    close(fd);
    throw std::runtime_error("cannot listen on " + path + ": " + std::strerror(err));
  }
  return fd;
}

}  // namespace vf
