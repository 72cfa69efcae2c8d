#include "daemon/engine_backend.hpp"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <memory>
#include <thread>

namespace vf {

void EngineBackend::opened(uint32_t client, pid_t pid, uid_t uid) {
  peers_[client] = pid;
  spdlog::debug("{}: client {} connected (pid {}, uid {})", hca_.config().name, client, pid, uid);
}

void EngineBackend::request(uint32_t client, std::vector<uint8_t> msg,
                            std::function<void(DeviceReply)> done) {
  const pid_t pid = peers_.count(client) ? peers_[client] : 0;
  ContextFds fds{lcore_.doorbell_fd(), lcore_.status_fd_readonly()};
  auto* hca = &hca_;
  auto shared_msg = std::make_shared<std::vector<uint8_t>>(std::move(msg));
  bool queued = lcore_.post([hca, client, pid, shared_msg, fds, done] {
    done(execute_device_command(*hca, client, pid, *shared_msg, fds));
  });
  if (!queued) done(status_reply(shared_msg->data(), shared_msg->size(), EAGAIN));
}

void EngineBackend::closed(uint32_t client) {
  peers_.erase(client);
  auto* hca = &hca_;
  // Teardown must happen even when the queue is momentarily full: retry.
  while (!lcore_.post([hca, client] { hca->close_client(client); })) {
    std::this_thread::yield();
  }
  spdlog::debug("{}: client {} closed", hca_.config().name, client);
}

}  // namespace vf
