// vfabric-bench: RC SEND latency and bandwidth between two vHCAs of one
// fabric, through a running fabricd, printed beside the same-run cost of
// process_vm_writev for the same sizes (the engine's floor for moving data).
// Run it as an unmodified verbs program: fabricctl exec -- vfabric-bench.
#include <infiniband/verbs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/rc_pair.hpp"

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what, int err = errno) {
  std::fprintf(stderr, "vfabric-bench: %s: %s\n", what.c_str(), std::strerror(err));
  std::exit(1);
}

constexpr size_t kSlot = 65536;

[[noreturn]] void die_wc(const char* what, const ibv_wc& wc) {
  std::fprintf(stderr, "vfabric-bench: %s completion failed: %s (wr_id %llu)\n", what,
               ibv_wc_status_str(wc.status), static_cast<unsigned long long>(wc.wr_id));
  std::exit(1);
}

using vf::test::VerbsSide;

// Receives always offer a whole slot: a receive left over from one phase
// must fit any message of the next.
void post_recv(VerbsSide& s, size_t slot_size, int slot) {
  if (int err = vf::test::post_recv(s, uint64_t(slot), {vf::test::sge(s, slot_size * size_t(slot), uint32_t(slot_size))}))
    die("ibv_post_recv", err);
}

void post_send(VerbsSide& s, size_t slot_size, size_t bytes, int slot) {
  if (int err = vf::test::post_send(s, uint64_t(slot), {vf::test::sge(s, slot_size * size_t(slot), uint32_t(bytes))}))
    die("ibv_post_send", err);
}

// Waits for `n` completions on `s`, returns how many were receives.
int wait_cq(VerbsSide& s, int n) {
  ibv_wc wc[16];
  int recvs = 0;
  while (n > 0) {
    int got = ibv_poll_cq(s.cq, n < 16 ? n : 16, wc);
    if (got < 0) die("ibv_poll_cq");
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("a", wc[i]);
      recvs += wc[i].opcode == IBV_WC_RECV;
    }
    n -= got;
  }
  return recvs;
}

double latency_us(VerbsSide& a, VerbsSide& b, size_t bytes, int iters) {
  post_recv(a, kSlot, 0);
  post_recv(b, kSlot, 0);
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    post_send(a, kSlot, bytes, 0);
    wait_cq(a, 1);
    wait_cq(b, 1);  // b's receive
    post_recv(b, kSlot, 0);
    post_send(b, kSlot, bytes, 0);
    wait_cq(b, 1);
    wait_cq(a, 1);
    post_recv(a, kSlot, 0);
  }
  std::chrono::duration<double, std::micro> d = Clock::now() - t0;
  return d.count() / iters / 2;  // half round trip
}

double bandwidth_gbps(VerbsSide& a, VerbsSide& b, size_t bytes, int depth, int iters) {
  for (int i = 0; i < depth; ++i) post_recv(b, kSlot, i);
  auto t0 = Clock::now();
  int sent = 0, done = 0, in_flight = 0;
  while (done < iters) {
    while (sent < iters && in_flight < depth) {
      post_send(a, kSlot, bytes, sent % depth);
      ++sent;
      ++in_flight;
    }
    ibv_wc wc[16];
    int got = ibv_poll_cq(b.cq, 16, wc);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("receive", wc[i]);
      ++done;
      post_recv(b, kSlot, int(wc[i].wr_id));
    }
    got = ibv_poll_cq(a.cq, 16, wc);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("send", wc[i]);
      --in_flight;
    }
  }
  while (in_flight > 0) in_flight -= wait_cq(a, 1) == 0 ? 1 : 0;
  std::chrono::duration<double> d = Clock::now() - t0;
  return double(bytes) * iters * 8 / d.count() / 1e9;
}

// The same-run floor: one process_vm_writev of `bytes` into this process.
double vm_writev_us(size_t bytes, int iters) {
  std::vector<char> src(bytes, 'a'), dst(bytes);
  iovec l{src.data(), bytes}, r{dst.data(), bytes};
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i)
    if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) != ssize_t(bytes)) die("process_vm_writev");
  std::chrono::duration<double, std::micro> d = Clock::now() - t0;
  return d.count() / iters;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Measures RC SEND half round-trip latency (8 B) and bandwidth (64 KiB) between two vHCAs "
      "of one fabric through a running fabricd, and prints beside them what process_vm_writev "
      "costs for the same sizes in the same run.\n\nExample:\n  fabricctl exec -- vfabric-bench "
      "--client vib0 --server vib1\n  fabricctl exec -- vfabric-bench --client vroce0 --server "
      "vroce1 --gid-index 1"};
  std::string ca = "vib0", cb = "vib1";
  int gid_index = -1, lat_iters = 20000, bw_iters = 20000, depth = 64;
  app.add_option("--client", ca, "first vHCA")->capture_default_str();
  app.add_option("--server", cb, "second vHCA")->capture_default_str();
  app.add_option("--gid-index", gid_index, "GID index for RoCE (1 = RoCE v2); -1 = LID routing")
      ->capture_default_str();
  app.add_option("--lat-iters", lat_iters, "round trips for latency")->capture_default_str();
  app.add_option("--bw-iters", bw_iters, "messages for bandwidth")->capture_default_str();
  app.add_option("--depth", depth, "messages in flight for bandwidth")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const size_t kSmall = 8, kLarge = kSlot;
  VerbsSide a, b;
  vf::test::SideParams sp;
  sp.buf_bytes = kSlot * size_t(depth);
  sp.send_wr = uint32_t(depth);
  sp.recv_wr = uint32_t(depth) + 2;  // the latency phases leave a receive posted on each side
  sp.sge = 1;
  sp.cqe = depth * 2 + 4;
  sp.gid_index = gid_index;
  vf::test::ConnectParams cp;
  cp.gid_index = gid_index;
  try {
    vf::test::open_side(a, ca, sp);
    vf::test::open_side(b, cb, sp);
    vf::test::connect_to(a, b, cp);
    vf::test::connect_to(b, a, cp);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vfabric-bench: %s (is fabricd running? run under 'fabricctl exec --')\n", e.what());
    return 1;
  }

  latency_us(a, b, kSmall, lat_iters / 10 + 1);  // warm-up
  const double lat = latency_us(a, b, kSmall, lat_iters);
  const double bw = bandwidth_gbps(a, b, kLarge, depth, bw_iters);
  const double vm_small = vm_writev_us(kSmall, 200000);
  const double vm_large = vm_writev_us(kLarge, 20000);
  const double vm_bw = double(kLarge) * 8 / (vm_large * 1e-6) / 1e9;

  std::printf("vfabric-bench  %s <-> %s  (RC SEND, %s)\n", ca.c_str(), cb.c_str(),
              a.port.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCEv2" : "InfiniBand");
  std::printf("  %-34s %10.2f us   process_vm_writev(8 B):    %8.3f us\n",
              "8 B SEND half round-trip latency", lat, vm_small);
  std::printf("  %-34s %10.2f Gb/s process_vm_writev(64 KiB): %8.2f Gb/s (%.2f us)\n",
              "64 KiB SEND bandwidth", bw, vm_bw, vm_large);
  return 0;
}
