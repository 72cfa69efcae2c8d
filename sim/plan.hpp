// What a simulated workload sends: per rank, an ordered list of steps, each
// sending some bytes to one peer and/or receiving some from another, and
// what a step waits for before it may send. NCCL-style collectives
// (nccl-tests' names and bus-bandwidth factors), incast, permutation and
// flow lists all become a Plan; plan_run.hpp executes one over RC QPs.
// Pure: no fabric, no clock, so every pattern is unit-tested by its bytes.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "core/scheduler.hpp"

namespace vf::sim {

enum class Wait : uint8_t {
  None,   // sends from its start time, beside earlier steps (independent flows)
  Piece,  // piece j goes once piece j of the previous step has arrived (a pipelined ring)
  Step,   // sends once the previous step has arrived whole (halving-doubling)
};

struct Step {
  int send_to = -1;          // rank, or -1: sends nothing
  uint64_t send_bytes = 0;
  int peer_step = -1;        // which of send_to's steps receives it
  int recv_from = -1;        // rank, or -1: receives nothing
  uint64_t recv_bytes = 0;
  Wait wait = Wait::None;
  Nanos start = 0;           // Wait::None: not before this (from the plan's start)
};

struct Plan {
  std::string name;   // "allreduce", "incast", ...
  std::string algo;   // "ring", "halving-doubling", "direct", "flows"
  uint64_t bytes = 0;  // nccl-tests' size: the collective's buffer per rank; for flows, the largest flow
  double bus_factor = 1;  // busbw = algbw * bus_factor (nccl-tests)
  std::vector<std::vector<Step>> ranks;
  uint64_t sent_by(size_t rank) const;
  uint64_t received_by(size_t rank) const;
  uint64_t total_bytes() const;  // over every rank
};

enum class Collective : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll };
enum class Algorithm : uint8_t { Ring, HalvingDoubling, Direct };

std::optional<Collective> parse_collective(const std::string& s);  // "allreduce", "all_reduce", ...
std::optional<Algorithm> parse_algorithm(const std::string& s);    // "ring", "hd" or "halving-doubling", "direct"
const char* to_string(Collective c);
const char* to_string(Algorithm a);

// The first reason `algo` cannot run `c` on `ranks` ranks, or empty.
std::string plan_problem(Collective c, Algorithm a, size_t ranks, uint64_t bytes);
// nccl-tests' sizes: `bytes` is the buffer per rank (all-reduce: in and out;
// all-gather: the output; reduce-scatter: the input; all-to-all: in and out).
// Requires plan_problem(...) empty.
Plan collective_plan(Collective c, Algorithm a, size_t ranks, uint64_t bytes);

// Every listed sender to one receiver, `bytes` each, all at once.
Plan incast_plan(size_t ranks, size_t receiver, const std::vector<size_t>& senders, uint64_t bytes);
// Rank i sends `bytes` to perm[i] (perm a permutation without fixed points
// from `seed`, the same for the same seed on every machine).
Plan permutation_plan(size_t ranks, uint64_t bytes, uint64_t seed);

// A flow list: one flow per line, "SRC DST BYTES [START]", ranks as
// numbers, BYTES and START with units (64KiB, 10us); '#' starts a comment.
// Throws std::invalid_argument naming the line and what is wrong.
Plan flows_plan(size_t ranks, std::istream& in, const std::string& name);

}  // namespace vf::sim
