#include "daemon/device_commands.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

}  // namespace

DeviceReply execute_device_command(engine::Hca& hca, engine::ClientId client, pid_t pid,
                                   const std::vector<uint8_t>& msg, const ContextFds& fds) {
  const auto h = copy_request<vhca_req_hdr>(msg);
  switch (h.cmd) {
    case VHCA_CMD_OPEN_CONTEXT: {
      vhca_open_context_rsp rsp{};
      int st = hca.open_client(client, pid, rsp);
      std::vector<int> out;
      if (!st) {
        out = {dup_fd(fds.doorbell), dup_fd(fds.status_ro)};
        if (out[0] < 0 || out[1] < 0) st = EMFILE;
      }
      return reply(h, st, rsp, out);
    }
    case VHCA_CMD_QUERY_DEVICE: {
      vhca_query_device_rsp rsp{};
      return reply(h, hca.query_device(client, rsp), rsp);
    }
    case VHCA_CMD_QUERY_PORT: {
      vhca_query_port_rsp rsp{};
      return reply(h, hca.query_port(client, copy_request<vhca_query_port_req>(msg), rsp), rsp);
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
    case VHCA_CMD_DEREG_MR: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.dereg_mr(client, copy_request<vhca_handle_req>(msg)), rsp);
    }
    case VHCA_CMD_CREATE_CQ: {
      vhca_create_cq_rsp rsp{};
      engine::Fd ring;
      int st = hca.create_cq(client, copy_request<vhca_create_cq_req>(msg), rsp, ring);
      return reply(h, st, rsp, {ring.fd});
    }
    case VHCA_CMD_DESTROY_CQ: {
      vhca_empty_rsp rsp{};
      return reply(h, hca.destroy_cq(client, copy_request<vhca_handle_req>(msg)), rsp);
    }
    case VHCA_CMD_CREATE_QP: {
      vhca_create_qp_rsp rsp{};
      engine::Fd sq, rq;
      int st = hca.create_qp(client, copy_request<vhca_create_qp_req>(msg), rsp, sq, rq);
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
      return reply(h, hca.destroy_qp(client, copy_request<vhca_handle_req>(msg), rsp), rsp);
    }
    default: {
      vhca_empty_rsp rsp{};
      return reply(h, EOPNOTSUPP, rsp);
    }
  }
}

}  // namespace vf
