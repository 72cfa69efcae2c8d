#include "compare/lab_stream.hpp"

#include <algorithm>

namespace vf::compare {

using sim::App;

Stream::Stream(sim::FabricLab& lab, const StreamSpec& spec) : lab_(lab), spec_(spec) {
  App& a = *lab.host(spec.from).app;
  App& b = *lab.host(spec.to).app;
  // One source and one sink buffer serve every message: the figures are about
  // the fabric, and the data's integrity is what the engine tests check.
  src_.assign(std::max<uint32_t>(spec.bytes, 1), uint8_t(spec.from + 1));
  dst_.assign(src_.size(), 0);
  const uint32_t pa = a.alloc_pd(), pb = b.alloc_pd();
  smr_ = a.mr(pa, src_.data(), src_.size());
  dmr_ = b.mr(pb, dst_.data(), dst_.size());
  const uint32_t cqe = std::max(2 * spec.window, 255u);
  cq_ = a.cq(cqe);
  peer_cq_ = b.cq(cqe);
  sim::QpCaps caps;
  caps.send_wr = caps.recv_wr = spec.window;
  qp_ = a.qp(pa, *cq_, *cq_, caps);
  peer_ = b.qp(pb, *peer_cq_, *peer_cq_, caps);
  lab.connect(spec.from, *qp_, spec.to, *peer_, spec.conn, spec.sl);
  if (spec.op == Op::kSend)
    for (unsigned k = 0; k < spec.window; ++k) post_recv(k);
  started = lab.sched.now();
  post_sends();
}

Stream::~Stream() = default;

void Stream::post_recv(uint64_t id) {
  lab_.host(spec_.to).app->post_recv(
      *peer_, sim::recv_wqe(id, {sim::sge(dst_.data(), spec_.bytes, dmr_.lkey)}));
}

void Stream::post_sends() {
  App& a = *lab_.host(spec_.from).app;
  while (outstanding_ < spec_.window && posted_ < spec_.messages) {
    const ibv_wr_opcode opc = spec_.op == Op::kSend ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
    vhca_send_wqe w = sim::send_wqe(posted_, {sim::sge(src_.data(), spec_.bytes, smr_.lkey)},
                                             IBV_SEND_SIGNALED, opc);
    if (spec_.op == Op::kWrite) {
      w.remote_addr = reinterpret_cast<uint64_t>(dst_.data());
      w.rkey = dmr_.rkey;
    }
    a.post_send(*qp_, w);
    ++posted_;
    ++outstanding_;
  }
}

bool Stream::poll() {
  vhca_cqe e;
  while (lab_.host(spec_.from).app->poll_cq(*cq_, e)) {
    e.status == IBV_WC_SUCCESS ? ++ok : ++failed;
    done_at.push_back(lab_.sched.now());
    --outstanding_;
  }
  while (lab_.host(spec_.to).app->poll_cq(*peer_cq_, e))
    if (spec_.op == Op::kSend && e.status == IBV_WC_SUCCESS) post_recv(e.wr_id);
  if (!finished() && failed == 0) post_sends();
  return finished() || failed > 0;
}

double goodput_bps(const Stream& s) {
  if (s.done_at.empty() || s.done_at.back() <= s.started) return 0;
  return double(s.payload_bytes()) * 8 / (double(s.done_at.back() - s.started) / 1e9);
}

double jain_index(const std::vector<double>& x) {
  double sum = 0, sq = 0;
  for (double v : x) {
    sum += v;
    sq += v * v;
  }
  return sq == 0 ? 0 : sum * sum / (double(x.size()) * sq);
}

}  // namespace vf::compare
