// Runs a Plan (plan.hpp) on a ConfigFabric: one in-process app per rank on
// the vHCA it is placed on, RC QPs between every pair of ranks that
// exchange data (`channels` per pair, pieces spread over them), and every
// piece an RDMA WRITE with immediate of at most `chunk` bytes into the
// peer's buffer, its immediate naming the receiver's step -- as NCCL's
// RDMA transport moves slices. A rank posts a piece as soon as what it
// waits for has arrived and its window has room.
//
// Payload bytes are not materialised unless `check` is set: then every
// step has its own send and receive region, filled with a pattern of
// (sender, step, offset) and checked on arrival. Without it, every piece is
// read from and written to one chunk-sized buffer per rank (the fabric
// still carries, and CRCs, every byte of it), so per-rank memory is two
// chunks whatever the collective's size.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/scheduler.hpp"
#include "sim/config_fabric.hpp"
#include "sim/plan.hpp"

namespace vf::sim {

struct RunOptions {
  std::vector<size_t> hosts;      // rank -> vHCA index in the ConfigFabric
  uint64_t chunk = 512 * 1024;    // bytes per WR (NCCL's slice)
  unsigned channels = 1;          // RC QPs per pair of ranks
  unsigned window = 64;           // WRs a rank keeps outstanding
  bool check = false;             // materialise and check every byte
  uint8_t sl = 0;                 // IB service level / RoCE priority via the port's default
};

// The first problem with running `p` with `o` on `f`, or empty.
std::string run_problem(const ConfigFabric& f, const Plan& p, const RunOptions& o);

class PlanRun {
 public:
  // Creates every rank's PD, CQ, buffers and QPs and connects them (in
  // virtual time: RoCE resolves its next hops on the wire). Throws
  // std::invalid_argument for run_problem(), std::system_error when a verb fails.
  PlanRun(ConfigFabric& f, const Plan& p, const RunOptions& o);
  ~PlanRun();
  PlanRun(const PlanRun&) = delete;
  PlanRun& operator=(const PlanRun&) = delete;

  // Begins an iteration at the fabric's now (after the previous one finished).
  void start();
  // Reaps completions and posts what may go, on every rank; true if it did anything.
  bool poll();
  // The same on the ranks of these vHCAs only (those whose engines just
  // ran: nothing else can have changed for the others).
  bool poll(const std::vector<size_t>& hosts);
  bool done() const { return finished_ranks_ == ranks_.size() || !error_.empty(); }
  // The first failure (a completion in error, corrupted data); empty if none.
  const std::string& error() const { return error_; }

  Nanos started() const { return started_; }
  Nanos finished() const;              // the last rank's finish
  Nanos rank_finished(size_t r) const;  // when rank r's last byte arrived and last WR completed
  uint64_t delivered() const { return delivered_; }  // payload bytes received this iteration
  uint64_t checked() const { return checked_; }      // bytes compared over every iteration (check only)
  size_t qps() const { return qp_count_; }
  // When the next flow with a later start may go (kNever: none).
  Nanos next_start();

 private:
  struct Rank;
  struct Conn;
  void connect_pairs();
  Conn& conn(size_t a, size_t b);
  bool pump(size_t r);
  bool poll_rank(size_t r);
  void post_piece(size_t r, size_t step, uint64_t piece);
  void on_cqe(size_t r, const vhca_cqe& c);
  void step_arrived(size_t r, size_t step);
  void step_progress(size_t r, size_t step);
  void maybe_finish(size_t r);

  ConfigFabric& f_;
  const Plan& plan_;
  RunOptions o_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::unordered_map<uint64_t, Conn*> by_pair_;
  std::vector<int> rank_of_host_;  // -1: no rank there
  size_t finished_ranks_ = 0, qp_count_ = 0;
  uint64_t delivered_ = 0, checked_ = 0;
  Nanos started_ = 0;
  std::string error_;
  std::vector<Nanos> starts_;  // flows' start times still ahead, latest first
};

// What the plan's ranks send, as nccl-tests prints it. Flows (incast,
// permutation, a list) have no collective: algbw = busbw is then the mean
// rate of each receiving host, total bytes / receivers / time.
struct CollectiveFigures {
  double time_us = 0, algbw_gbs = 0, busbw_gbs = 0;  // GB/s (10^9 bytes), as nccl-tests
};
CollectiveFigures figures(const Plan& p, Nanos elapsed);

}  // namespace vf::sim
