#include "daemon/vhca/device_commands.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace vf {
namespace {

template <typename Req>
Req copy_request(const std::vector<uint8_t>& msg) {
  Req r;
  std::memcpy(&r, msg.data(), sizeof(r));  // framing guaranteed the size
  return r;
}

template <typename Rsp>
DeviceReply reply(const vhca_req_hdr& h, int status, Rsp& rsp, std::vector<int> fds = {}) {
  if (status) {
    for (int fd : fds)
      if (fd >= 0) close(fd);
    DeviceReply out;
    vhca_rsp_hdr r{h.cmd, h.seq, sizeof(vhca_rsp_hdr), status};
    out.bytes.resize(sizeof(r));
    std::memcpy(out.bytes.data(), &r, sizeof(r));
    return out;
  }
  rsp.hdr = vhca_rsp_hdr{h.cmd, h.seq, sizeof(Rsp), 0};
  DeviceReply out;
  out.bytes.resize(sizeof(Rsp));
  std::memcpy(out.bytes.data(), &rsp, sizeof(Rsp));
  out.fds = std::move(fds);
  return out;
}

int dup_fd(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

// The request fds, owned here: take_*() hand theirs on, the rest are closed.
class RequestFds {
 public:
  explicit RequestFds(std::vector<int> fds) : fds_(std::move(fds)) {}
  ~RequestFds() {
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  RequestFds(const RequestFds&) = delete;
  RequestFds& operator=(const RequestFds&) = delete;
  // CREATE_CQ's completion channel: its write end and our own read end, or
  // false if the request does not carry exactly those.
  bool take_channel(AppEventSink::PipeEnds& ch) {
    if (fds_.size() != 2 || !AppEventSink::usable_pipe(fds_[0]) ||
        !AppEventSink::usable_read_end(fds_[1], fds_[0]))
      return false;
    ch = {std::exchange(fds_[0], -1), std::exchange(fds_[1], -1)};
    return true;
  }
  // OPEN_CONTEXT's three: the async pipe's write end, the app's own
  // /proc/self/mem (the engine checks which file it is) and our read end of
  // the async pipe. False unless all three.
  bool take_open_context(AppEventSink::PipeEnds& async, int& mem_fd) {
    if (fds_.size() != 3 || !AppEventSink::usable_pipe(fds_[0]) ||
        !AppEventSink::usable_read_end(fds_[2], fds_[0]))
      return false;
    async = {std::exchange(fds_[0], -1), std::exchange(fds_[2], -1)};
    mem_fd = std::exchange(fds_[1], -1);
    return true;
  }

 private:
  std::vector<int> fds_;
};

}  // namespace

DeviceReply execute_device_command(engine::Hca& hca, AppEventSink& events, engine::ClientId client,
                                   const DevicePeer& peer, const std::vector<uint8_t>& msg,
                                   std::vector<int> req_fds_in, const ContextFds& fds) {
  const auto h = copy_request<vhca_req_hdr>(msg);
  RequestFds req_fds(std::move(req_fds_in));
  // Only OPEN_CONTEXT (three) and CREATE_CQ (two) take fds; anything else sent is closed.
  switch (h.cmd) {
    case VHCA_CMD_OPEN_CONTEXT: {
      vhca_open_context_rsp rsp{};
      // ABI v9: the async-event pipe's two ends and the app's address space.
      AppEventSink::PipeEnds async;
      int mem_fd = -1;
      if (!req_fds.take_open_context(async, mem_fd)) return reply(h, EINVAL, rsp);
      int st = hca.open_client(client, peer.pid, mem_fd, rsp);
      if (!st && peer.cap_net_raw) hca.allow_controlled_qkeys(client);
      std::vector<int> out;
      if (!st) {
        out = {dup_fd(fds.doorbell), dup_fd(fds.status_ro)};
        if (out[0] < 0 || out[1] < 0) st = EMFILE;
      }
      if (!st) {
        events.open_client(client, async);
      } else {
        close(async.write);
        close(async.read);
      }
      return reply(h, st, rsp, out);
    }
    case VHCA_CMD_QUERY_DEVICE: {
      vhca_query_device_rsp rsp{};
      return reply(h, hca.query_device(client, rsp), rsp);
    }
    case VHCA_CMD_QUERY_PORT: {
      vhca_query_port_rsp rsp{};
      // State and the rest come from the port's PortInfo, which an
      // operator's `port set state down` changes (as sysfs shows it).
      int st = hca.query_port(client, copy_request<vhca_query_port_req>(msg), rsp);
      return reply(h, st, rsp);
    }
    case VHCA_CMD_QUERY_CLOCK: {
      vhca_query_clock_rsp rsp{};
      return reply(h, hca.query_clock(client, rsp), rsp);
    }
    case VHCA_CMD_ALLOC_PD: {
      vhca_alloc_pd_rsp rsp{};
      return reply(h, hca.alloc_pd(client, rsp), rsp);
    }
    case VHCA_CMD_DEALLOC_PD: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.dealloc_pd(client, copy_request<vhca_handle_req>(msg)), rsp);
    }
    case VHCA_CMD_REG_MR: {
      vhca_reg_mr_rsp rsp{};
      return reply(h, hca.reg_mr(client, copy_request<vhca_reg_mr_req>(msg), rsp), rsp);
    }
    case VHCA_CMD_REREG_MR: {
      vhca_rereg_mr_rsp rsp{};
      return reply(h, hca.rereg_mr(client, copy_request<vhca_rereg_mr_req>(msg), rsp), rsp);
    }
    case VHCA_CMD_ALLOC_MW: {
      vhca_alloc_mw_rsp rsp{};
      return reply(h, hca.alloc_mw(client, copy_request<vhca_alloc_mw_req>(msg), rsp), rsp);
    }
    case VHCA_CMD_DEALLOC_MW: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.dealloc_mw(client, copy_request<vhca_handle_req>(msg)), rsp);
    }
    case VHCA_CMD_ATTACH_MCAST: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.attach_mcast(client, copy_request<vhca_mcast_req>(msg)), rsp);
    }
    case VHCA_CMD_DETACH_MCAST: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.detach_mcast(client, copy_request<vhca_mcast_req>(msg)), rsp);
    }
    case VHCA_CMD_DEREG_MR: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.dereg_mr(client, copy_request<vhca_handle_req>(msg)), rsp);
    }
    case VHCA_CMD_CREATE_CQ: {
      vhca_create_cq_rsp rsp{};
      const auto req = copy_request<vhca_create_cq_req>(msg);
      AppEventSink::PipeEnds channel;
      if (req.has_channel > 1) return reply(h, EINVAL, rsp);
      if (req.has_channel && !req_fds.take_channel(channel)) return reply(h, EINVAL, rsp);
      engine::Fd ring;
      int st = hca.create_cq(client, req, rsp, ring);
      if (!st) {
        events.add_cq(client, rsp.cq_handle, req.user_handle, channel);
      } else {
        if (channel.write >= 0) close(channel.write);
        if (channel.read >= 0) close(channel.read);
      }
      return reply(h, st, rsp, {ring.fd});
    }
    case VHCA_CMD_DESTROY_CQ: {
      vhca_destroy_cq_rsp rsp{};
      const auto req = copy_request<vhca_handle_req>(msg);
      int st = hca.destroy_cq(client, req);
      if (!st) {
        const auto n = events.forget_cq(client, req.handle);
        rsp.comp_events_reported = n.comp;
        rsp.async_events_reported = n.async;
      }
      return reply(h, st, rsp);
    }
    case VHCA_CMD_RESIZE_CQ: {
      vhca_resize_cq_rsp rsp{};
      engine::Fd ring;
      int st = hca.resize_cq(client, copy_request<vhca_resize_cq_req>(msg), rsp, ring);
      return reply(h, st, rsp, {ring.fd});
    }
    case VHCA_CMD_CREATE_QP: {
      vhca_create_qp_rsp rsp{};
      const auto req = copy_request<vhca_create_qp_req>(msg);
      engine::Fd sq, rq;
      int st = hca.create_qp(client, req, rsp, sq, rq);
      if (!st) events.add_qp(client, rsp.qp_handle, req.user_handle);
      return reply(h, st, rsp, {sq.fd, rq.fd});
    }
    case VHCA_CMD_MODIFY_QP: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.modify_qp(client, copy_request<vhca_modify_qp_req>(msg)), rsp);
    }
    case VHCA_CMD_QUERY_QP: {
      vhca_query_qp_rsp rsp{};
      return reply(h, hca.query_qp(client, copy_request<vhca_query_qp_req>(msg), rsp), rsp);
    }
    case VHCA_CMD_DESTROY_QP: {
      vhca_destroy_qp_rsp rsp{};
      const auto req = copy_request<vhca_handle_req>(msg);
      int st = hca.destroy_qp(client, req, rsp);
      // What the app can acknowledge is what reached its pipe (a full pipe
      // drops events), so the sink's count replaces the engine's.
      if (!st) rsp.events_reported = events.forget_qp(client, req.handle);
      return reply(h, st, rsp);
    }
    case VHCA_CMD_CREATE_SRQ: {
      vhca_create_srq_rsp rsp{};
      const auto req = copy_request<vhca_create_srq_req>(msg);
      engine::Fd ring;
      int st = hca.create_srq(client, req, rsp, ring);
      if (!st) events.add_srq(client, rsp.srq_handle, req.user_handle);
      return reply(h, st, rsp, {ring.fd});
    }
    case VHCA_CMD_MODIFY_SRQ: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.modify_srq(client, copy_request<vhca_modify_srq_req>(msg)), rsp);
    }
    case VHCA_CMD_QUERY_SRQ: {
      vhca_query_srq_rsp rsp{};
      return reply(h, hca.query_srq(client, copy_request<vhca_handle_req>(msg), rsp), rsp);
    }
    case VHCA_CMD_DESTROY_SRQ: {
      vhca_destroy_qp_rsp rsp{};
      const auto req = copy_request<vhca_handle_req>(msg);
      int st = hca.destroy_srq(client, req);
      if (!st) rsp.events_reported = events.forget_srq(client, req.handle);
      return reply(h, st, rsp);
    }
    case VHCA_CMD_CREATE_AH: {
      vhca_create_ah_rsp rsp{};
      return reply(h, hca.create_ah(client, copy_request<vhca_create_ah_req>(msg), rsp), rsp);
    }
    case VHCA_CMD_DESTROY_AH: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.destroy_ah(client, copy_request<vhca_handle_req>(msg)), rsp);
    }
    default: {
      vhca_empty_rsp rsp{};
      return reply(h, EOPNOTSUPP, rsp);
    }
  }
}

}  // namespace vf
