#include "daemon/vhca/engine_backend.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

namespace vf {

EngineBackend::EngineBackend(Lcore& lcore, Topology& topo, size_t index, AppEventSink& events)
    : lcore_(lcore), hca_(topo.engine(index)), events_(events) {}

void EngineBackend::opened(uint32_t client, const DevicePeer& peer) {
  peers_[client] = peer;
  spdlog::debug("{}: client {} connected (pid {}, uid {}{})", hca_.config().name, client, peer.pid, peer.uid,
                peer.cap_net_raw ? ", CAP_NET_RAW" : "");
}

namespace {

// The address vector a command sets, if any: modify_qp with IBV_QP_AV, or
// create_ah. Framing has checked the message is the command's size.
std::optional<ibv_ah_attr> av_set_by(const std::vector<uint8_t>& msg) {
  vhca_req_hdr h;
  std::memcpy(&h, msg.data(), sizeof(h));
  if (h.cmd == VHCA_CMD_MODIFY_QP && msg.size() >= sizeof(vhca_modify_qp_req)) {
    vhca_modify_qp_req r;
    std::memcpy(&r, msg.data(), sizeof(r));
    if (r.attr_mask & IBV_QP_AV) return r.attr.ah_attr;
  } else if (h.cmd == VHCA_CMD_CREATE_AH && msg.size() >= sizeof(vhca_create_ah_req)) {
    vhca_create_ah_req r;
    std::memcpy(&r, msg.data(), sizeof(r));
    return r.attr;
  }
  return std::nullopt;
}

}  // namespace

void EngineBackend::request(uint32_t client, std::vector<uint8_t> msg, std::vector<int> req_fds,
                            std::function<void(DeviceReply)> done) {
  const auto known = peers_.find(client);
  const DevicePeer peer = known != peers_.end() ? known->second : DevicePeer{};
  ContextFds fds{lcore_.doorbell_fd(), lcore_.status_fd_readonly()};
  auto* hca = &hca_;
  auto* events = &events_;
  auto shared_msg = std::make_shared<std::vector<uint8_t>>(std::move(msg));
  auto shared_fds = std::make_shared<std::vector<int>>(std::move(req_fds));
  bool queued = lcore_.post([hca, events, client, peer, shared_msg, shared_fds, fds, done] {
    auto execute = [=] {
      done(execute_device_command(*hca, *events, client, peer, *shared_msg, std::move(*shared_fds), fds));
    };
    const std::optional<ibv_ah_attr> av = av_set_by(*shared_msg);
    if (!av) return execute();
    // As the kernel does for rxe and mlx5, the command that sets a RoCE
    // address vector waits for the next hop's MAC, so the first burst on it
    // never queues behind ARP; no answer within a second fails it.
    hca->resolve_route(*av, [=](int err) {
      if (!err) return execute();
      for (int fd : *shared_fds) close(fd);
      shared_fds->clear();
      done(status_reply(shared_msg->data(), shared_msg->size(), err));
    });
  });
  if (!queued) {
    for (int fd : *shared_fds) close(fd);
    done(status_reply(shared_msg->data(), shared_msg->size(), EAGAIN));
  }
}

void EngineBackend::closed(uint32_t client) {
  peers_.erase(client);
  auto* hca = &hca_;
  auto* events = &events_;
  // Teardown must happen even when the queue is momentarily full: retry.
  // The engine first (its teardown may still raise events), then the pipes.
  while (!lcore_.post([hca, events, client] {
    hca->close_client(client);
    events->close_client(client);
  })) {
    std::this_thread::yield();
  }
  spdlog::debug("{}: client {} closed", hca_.config().name, client);
}

}  // namespace vf
