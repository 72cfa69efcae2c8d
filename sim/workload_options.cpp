#include "sim/workload_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>
#include <stdexcept>

#include "daemon/config/units.hpp"

namespace vf::sim {
namespace {

[[noreturn]] void bad(std::string what) { throw std::invalid_argument(std::move(what)); }

uint64_t parse_size(const std::string& s) {
  auto b = units::parse_uint(s, uint64_t{1} << 40);
  if (!b) b = units::parse_size_bytes(s, uint64_t{1} << 40);
  if (!b || *b == 0) bad(fmt::format("--size '{}' is not a size: write bytes or a unit, e.g. 64MiB", s));
  return *b;
}

}  // namespace

config::Config only_fabric(const config::Config& cfg, const std::string& name) {
  std::string names;
  for (const auto& f : cfg.fabrics) {
    if (name.empty() || f.name == name) {
      config::Config one = cfg;
      one.fabrics = {f};
      uint32_t index = 0;
      for (auto& h : one.fabrics[0].hcas) h.index = index++;
      return one;
    }
    names += (names.empty() ? "" : ", ") + f.name;
  }
  bad(fmt::format("--fabric '{}' is not in the config (it has: {})", name, names));
}

std::vector<size_t> place_ranks(size_t have, size_t ranks, const std::string& placement, uint64_t seed) {
  if (ranks == 0) ranks = have;
  if (ranks > have) bad(fmt::format("--ranks {} is more than the fabric's {} vHCAs", ranks, have));
  std::vector<size_t> slots(have);
  std::iota(slots.begin(), slots.end(), size_t{0});
  if (placement == "linear") {
  } else if (placement.rfind("strided:", 0) == 0) {
    // Rank i on vHCA (i * K) mod n, then the next free one: spreads
    // consecutive ranks over leaves (K = hosts per leaf).
    const auto k = units::parse_uint(placement.substr(8), have);
    if (!k || *k == 0) bad(fmt::format("--placement '{}': the stride must be 1 to {}", placement, have));
    std::vector<bool> taken(have);
    std::vector<size_t> order;
    for (size_t i = 0, at = 0; i < have; ++i, at = (at + *k) % have) {
      while (taken[at]) at = (at + 1) % have;
      taken[at] = true;
      order.push_back(at);
    }
    slots = order;
  } else if (placement == "random" || placement.rfind("random:", 0) == 0) {
    uint64_t s = seed;
    if (placement.size() > 6) {
      const auto v = units::parse_uint(placement.substr(7), ~uint64_t{0});
      if (!v) bad(fmt::format("--placement '{}': the seed must be a whole number", placement));
      s = *v;
    }
    std::mt19937_64 rng(s);
    for (size_t i = have - 1; i > 0; --i) std::swap(slots[i], slots[size_t(rng() % (i + 1))]);
  } else {
    bad(fmt::format("--placement '{}' is not linear, strided:K or random[:SEED]", placement));
  }
  slots.resize(ranks);
  return slots;
}

Plan make_plan(const WorkloadOptions& o, size_t ranks) {
  if (ranks < 2) bad(fmt::format("a workload needs at least 2 ranks; the fabric gives {}", ranks));
  if (const auto c = parse_collective(o.workload)) {
    const std::string algo = o.algo.empty() ? (*c == Collective::AllToAll ? "direct" : "ring") : o.algo;
    const auto a = parse_algorithm(algo);
    if (!a) bad(fmt::format("--algo '{}' is not ring, halving-doubling (hd) or direct", algo));
    const uint64_t bytes = parse_size(o.size);
    if (const std::string why = plan_problem(*c, *a, ranks, bytes); !why.empty()) bad(why);
    return collective_plan(*c, *a, ranks, bytes);
  }
  if (!o.algo.empty()) bad(fmt::format("--algo is for collectives, not {}", o.workload));
  if (o.workload == "incast") {
    if (o.receiver >= ranks) bad(fmt::format("--receiver {} is not a rank (0 to {})", o.receiver, ranks - 1));
    std::vector<size_t> senders;
    for (size_t r = 0; r < ranks && (o.senders == 0 || senders.size() < o.senders); ++r)
      if (r != o.receiver) senders.push_back(r);
    if (senders.empty()) bad("an incast needs at least 2 ranks");
    return incast_plan(ranks, o.receiver, senders, parse_size(o.size));
  }
  if (o.workload == "permutation") {
    if (ranks < 2) bad("a permutation needs at least 2 ranks");
    return permutation_plan(ranks, parse_size(o.size), o.seed);
  }
  if (o.workload == "flows") {
    if (o.flows_file.empty()) bad("--workload flows needs --flows FILE (one flow per line: SRC DST BYTES [START])");
    std::ifstream in(o.flows_file);
    if (!in) bad(fmt::format("cannot read --flows {}", o.flows_file));
    return flows_plan(ranks, in, o.flows_file);
  }
  bad(fmt::format("--workload '{}' is not allreduce, allgather, reducescatter, alltoall, incast, permutation or flows",
                  o.workload));
}

}  // namespace vf::sim
