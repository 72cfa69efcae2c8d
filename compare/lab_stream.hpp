// Traffic for the comparison's virtual-time runs: an RC stream of SENDs or
// RDMA WRITEs from one lab host to another that keeps a window of WRs posted
// until a number of messages has completed, and records when each did. The
// engines, ports, links and switches are the ones fabricd runs
// (sim/lab.hpp); only the clock is virtual, so every figure
// taken from it is an exact function of the configuration.
#pragma once

#include <memory>
#include <vector>

#include "compare/analytic.hpp"
#include "sim/lab.hpp"

namespace vf::compare {

struct StreamSpec {
  unsigned from = 0, to = 1;
  Op op = Op::kWrite;
  uint32_t bytes = 65536;
  unsigned messages = 64;
  unsigned window = 64;  // WRs outstanding at once
  sim::ConnParams conn;
  uint8_t sl = 0;  // IB: the service level (SL n -> VL n)
};

class Stream {
 public:
  Stream(sim::FabricLab& lab, const StreamSpec& spec);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Reaps completions at both ends and posts more; true once every message
  // completed (successfully or not).
  bool poll();
  bool finished() const { return ok + failed >= spec_.messages; }

  unsigned ok = 0, failed = 0;
  Nanos started = 0;              // when the first WR was posted
  std::vector<Nanos> done_at;     // each completion, in order
  uint64_t payload_bytes() const { return uint64_t(ok) * spec_.bytes; }

 private:
  void post_sends();
  void post_recv(uint64_t id);

  sim::FabricLab& lab_;
  StreamSpec spec_;
  std::vector<uint8_t> src_, dst_;
  vhca_reg_mr_rsp smr_{}, dmr_{};
  std::unique_ptr<sim::AppCq> cq_, peer_cq_;
  std::unique_ptr<sim::AppQp> qp_, peer_;
  unsigned posted_ = 0, outstanding_ = 0;
};

// Goodput of a finished stream from its first post to its last completion.
double goodput_bps(const Stream& s);

// Jain's fairness index of per-flow amounts (1 = equal shares).
double jain_index(const std::vector<double>& x);

}  // namespace vf::compare
