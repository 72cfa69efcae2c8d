#include "sim/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

#include "daemon/config/units.hpp"

namespace vf::sim {
namespace {

constexpr uint64_t kMaxBytes = uint64_t{1} << 40;  // 1 TiB per rank: more is a typo
constexpr Nanos kMaxStart = 3600'000'000'000ULL;    // an hour of simulated time

size_t mod(long long a, size_t n) { return size_t(((a % (long long)n) + (long long)n) % (long long)n); }

// Chunk k of a buffer of `bytes` split into n: the first bytes % n chunks
// take one byte more.
uint64_t chunk(uint64_t bytes, size_t n, size_t k) { return bytes / n + (k < bytes % n ? 1 : 0); }

bool power_of_two(size_t n) { return n && !(n & (n - 1)); }

Step exchange(size_t to, uint64_t send, size_t from, uint64_t recv, int peer_step, Wait w) {
  Step s;
  s.send_to = int(to), s.send_bytes = send, s.recv_from = int(from), s.recv_bytes = recv;
  s.peer_step = peer_step, s.wait = w;
  return s;
}

// The ring's reduce-scatter (`first` = 0) or all-gather (`first` = 1) half:
// step s sends chunk r - s + first to the next rank, whose step s receives
// it; the chunk is the one that arrived at step s - 1, so a piece waits only
// for the same piece of the step before (NCCL's pipelined slices).
void ring_half(Plan& p, uint64_t bytes, int first, bool continues) {
  const size_t n = p.ranks.size();
  for (size_t r = 0; r < n; ++r)
    for (size_t s = 0; s + 1 < n; ++s) {
      const int step = int(p.ranks[r].size());
      const Wait w = (s == 0 && !continues) ? Wait::None : Wait::Piece;
      p.ranks[r].push_back(exchange(mod(long(r) + 1, n), chunk(bytes, n, mod(long(r) - long(s) + first, n)),
                                    mod(long(r) - 1, n), chunk(bytes, n, mod(long(r) - long(s) - 1 + first, n)),
                                    step, w));
    }
}

// Recursive halving (reduce-scatter): step k exchanges half of what is left
// with the rank N/2^(k+1) away. Recursive doubling (all-gather) mirrors it.
void halving(Plan& p, uint64_t bytes, bool continues) {
  const size_t n = p.ranks.size();
  for (size_t r = 0; r < n; ++r) {
    uint64_t left = bytes;
    for (size_t d = n / 2, k = 0; d >= 1; d /= 2, ++k) {
      left /= 2;
      const Wait w = (k == 0 && !continues) ? Wait::None : Wait::Step;
      p.ranks[r].push_back(exchange(r ^ d, left, r ^ d, left, int(p.ranks[r].size()), w));
    }
  }
}

void doubling(Plan& p, uint64_t bytes, bool continues) {
  const size_t n = p.ranks.size();
  for (size_t r = 0; r < n; ++r) {
    uint64_t have = bytes / n;
    for (size_t d = 1, k = 0; d < n; d *= 2, ++k) {
      const Wait w = (k == 0 && !continues) ? Wait::None : Wait::Step;
      p.ranks[r].push_back(exchange(r ^ d, have, r ^ d, have, int(p.ranks[r].size()), w));
      have *= 2;
    }
  }
}

// Every rank to every other at once (NCCL's grouped send/recv), in pairwise
// order: step s - 1 sends to r + s and receives from r - s.
void direct(Plan& p, uint64_t bytes) {
  const size_t n = p.ranks.size();
  for (size_t r = 0; r < n; ++r)
    for (size_t s = 1; s < n; ++s)
      p.ranks[r].push_back(exchange(mod(long(r + s), n), chunk(bytes, n, mod(long(r + s), n)), mod(long(r) - long(s), n),
                                    chunk(bytes, n, r), int(s - 1), Wait::None));
}

Plan empty_plan(size_t ranks, std::string name, std::string algo, uint64_t bytes, double factor) {
  Plan p;
  p.name = std::move(name), p.algo = std::move(algo), p.bytes = bytes, p.bus_factor = factor;
  p.ranks.resize(ranks);
  return p;
}

void add_flow(Plan& p, size_t src, size_t dst, uint64_t bytes, Nanos start) {
  Step in;
  in.recv_from = int(src), in.recv_bytes = bytes;
  Step out;
  out.send_to = int(dst), out.send_bytes = bytes, out.start = start;
  out.peer_step = int(p.ranks[dst].size());
  p.ranks[dst].push_back(in);
  p.ranks[src].push_back(out);
  p.bytes = std::max(p.bytes, bytes);
}

}  // namespace

uint64_t Plan::sent_by(size_t rank) const {
  uint64_t n = 0;
  for (const Step& s : ranks.at(rank)) n += s.send_bytes;
  return n;
}

uint64_t Plan::received_by(size_t rank) const {
  uint64_t n = 0;
  for (const Step& s : ranks.at(rank)) n += s.recv_bytes;
  return n;
}

uint64_t Plan::total_bytes() const {
  uint64_t n = 0;
  for (size_t r = 0; r < ranks.size(); ++r) n += sent_by(r);
  return n;
}

std::optional<Collective> parse_collective(const std::string& s) {
  std::string t;
  for (char c : s)
    if (c != '_' && c != '-') t += char(std::tolower(static_cast<unsigned char>(c)));
  if (t == "allreduce") return Collective::AllReduce;
  if (t == "allgather") return Collective::AllGather;
  if (t == "reducescatter") return Collective::ReduceScatter;
  if (t == "alltoall") return Collective::AllToAll;
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(const std::string& s) {
  if (s == "ring") return Algorithm::Ring;
  if (s == "hd" || s == "halving-doubling" || s == "halving_doubling") return Algorithm::HalvingDoubling;
  if (s == "direct") return Algorithm::Direct;
  return std::nullopt;
}

const char* to_string(Collective c) {
  switch (c) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::AllToAll: return "alltoall";
  }
  return "?";
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::HalvingDoubling: return "halving-doubling";
    case Algorithm::Direct: return "direct";
  }
  return "?";
}

std::string plan_problem(Collective c, Algorithm a, size_t ranks, uint64_t bytes) {
  if (ranks < 2) return fmt::format("a collective needs at least 2 ranks, not {}", ranks);
  if (bytes < ranks) return fmt::format("{} bytes do not split over {} ranks: give at least one byte per rank", bytes, ranks);
  if (bytes > kMaxBytes) return fmt::format("{} bytes per rank is more than 1 TiB", bytes);
  if (c == Collective::AllToAll && a != Algorithm::Direct)
    return fmt::format("alltoall runs with --algo direct, not {}", to_string(a));
  if (c != Collective::AllToAll && a == Algorithm::Direct)
    return fmt::format("{} runs with --algo ring or halving-doubling, not direct", to_string(c));
  if (a == Algorithm::HalvingDoubling && !power_of_two(ranks))
    return fmt::format("halving-doubling needs a power-of-two number of ranks, not {}: use --algo ring", ranks);
  return {};
}

Plan collective_plan(Collective c, Algorithm a, size_t ranks, uint64_t bytes) {
  if (const std::string why = plan_problem(c, a, ranks, bytes); !why.empty()) throw std::invalid_argument(why);
  const double n = double(ranks), share = (n - 1) / n;
  Plan p = empty_plan(ranks, to_string(c), to_string(a), bytes, c == Collective::AllReduce ? 2 * share : share);
  const bool ring = a == Algorithm::Ring;
  switch (c) {
    case Collective::AllReduce:
      if (ring) ring_half(p, bytes, 0, false), ring_half(p, bytes, 1, true);
      else halving(p, bytes, false), doubling(p, bytes, true);
      break;
    case Collective::ReduceScatter:
      if (ring) ring_half(p, bytes, 0, false);
      else halving(p, bytes, false);
      break;
    case Collective::AllGather:
      if (ring) ring_half(p, bytes, 1, false);
      else doubling(p, bytes, false);
      break;
    case Collective::AllToAll: direct(p, bytes); break;
  }
  return p;
}

Plan incast_plan(size_t ranks, size_t receiver, const std::vector<size_t>& senders, uint64_t bytes) {
  if (receiver >= ranks) throw std::invalid_argument(fmt::format("receiver {} is not one of {} ranks", receiver, ranks));
  Plan p = empty_plan(ranks, "incast", "flows", bytes, 1);
  for (size_t s : senders) {
    if (s >= ranks || s == receiver)
      throw std::invalid_argument(fmt::format("sender {} is not another of the {} ranks", s, ranks));
    add_flow(p, s, receiver, bytes, 0);
  }
  return p;
}

Plan permutation_plan(size_t ranks, uint64_t bytes, uint64_t seed) {
  if (ranks < 2) throw std::invalid_argument("a permutation needs at least 2 ranks");
  // A random derangement: shuffle, then rotate the fixed points among
  // themselves (or swap a lone one with a neighbour).
  std::vector<size_t> perm(ranks);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  for (size_t i = ranks - 1; i > 0; --i) std::swap(perm[i], perm[size_t(rng() % (i + 1))]);
  std::vector<size_t> fixed;
  for (size_t i = 0; i < ranks; ++i)
    if (perm[i] == i) fixed.push_back(i);
  if (fixed.size() == 1) std::swap(perm[fixed[0]], perm[(fixed[0] + 1) % ranks]);
  for (size_t i = 0; fixed.size() > 1 && i < fixed.size(); ++i) perm[fixed[i]] = fixed[(i + 1) % fixed.size()];
  Plan p = empty_plan(ranks, "permutation", "flows", bytes, 1);
  for (size_t i = 0; i < ranks; ++i) add_flow(p, i, perm[i], bytes, 0);
  return p;
}

Plan flows_plan(size_t ranks, std::istream& in, const std::string& name) {
  if (ranks < 2) throw std::invalid_argument(name + ": flows need at least 2 ranks");
  Plan p = empty_plan(ranks, "flows", "flows", 0, 1);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string src, dst, bytes, start, extra;
    if (!(words >> src)) continue;
    auto fail = [&](const std::string& what) {
      throw std::invalid_argument(fmt::format("{}:{}: {} (a flow is: SRC DST BYTES [START], e.g. 0 5 1MiB 10us)",
                                              name, no, what));
    };
    if (!(words >> dst >> bytes)) fail("a flow needs a source, a destination and a size");
    words >> start;
    if (words >> extra) fail(fmt::format("'{}' after the flow", extra));
    const auto s = units::parse_uint(src, ranks - 1), d = units::parse_uint(dst, ranks - 1);
    if (!s || !d) fail(fmt::format("'{}' or '{}' is not a rank from 0 to {}", src, dst, ranks - 1));
    if (*s == *d) fail(fmt::format("rank {} sends to itself", *s));
    auto b = units::parse_uint(bytes, kMaxBytes);  // plain bytes, as in a trace
    if (!b) b = units::parse_size_bytes(bytes, kMaxBytes);
    if (!b || *b == 0) fail(fmt::format("'{}' is not a size (64KiB, 1MiB, 4096)", bytes));
    std::optional<uint64_t> t = uint64_t{0};
    if (!start.empty() && start != "0") t = units::parse_delay_ns(start, kMaxStart);
    if (!t) fail(fmt::format("'{}' is not a start time (0, 10us, 1.5ms)", start));
    add_flow(p, size_t(*s), size_t(*d), *b, *t);
  }
  bool any = false;
  for (const auto& r : p.ranks) any = any || !r.empty();
  if (!any) throw std::invalid_argument(name + ": no flows (one per line: SRC DST BYTES [START])");
  return p;
}

}  // namespace vf::sim
