// vfabric-bench: RC SEND, RDMA WRITE and RDMA READ latency and bandwidth
// between two vHCAs of one fabric, through a running fabricd, printed beside
// the same-run cost of process_vm_writev/readv for the same sizes (the
// engine's floor for moving data). Run it as an unmodified verbs program:
// fabricctl exec -- vfabric-bench.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "tests/bench/rdma_phase.hpp"
#include "tests/bench/send_phase.hpp"

namespace {

using namespace vf::bench;

struct Options {
  std::string ca = "vib0", cb = "vib1";
  int gid_index = -1, lat_iters = 20000, bw_iters = 20000, depth = 64, batch = 16;
  size_t max_size = 1 << 20;
  long msgs = 400000;
};

// Opens and connects a pair; one-sided phases need remote access and
// explicit signalling (post lists signal only their last WR).
bool open_pair(VerbsSide& a, VerbsSide& b, const Options& o, size_t buf, bool one_sided) {
  vf::test::SideParams sp;
  sp.buf_bytes = buf;
  sp.send_wr = uint32_t(o.depth);
  sp.recv_wr = uint32_t(o.depth) + 2;  // the SEND latency phase leaves a receive posted
  sp.sge = 1;
  sp.cqe = o.depth * 2 + 4;
  sp.gid_index = o.gid_index;
  vf::test::ConnectParams cp;
  cp.gid_index = o.gid_index;
  if (one_sided) {
    sp.mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    sp.sig_all = false;
    cp.qp_access = sp.mr_access;
    cp.rd_atomic = 16;
  }
  try {
    vf::test::open_side(a, o.ca, sp);
    vf::test::open_side(b, o.cb, sp);
    vf::test::connect_to(a, b, cp);
    vf::test::connect_to(b, a, cp);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vfabric-bench: %s (is fabricd running? run under 'fabricctl exec --')\n",
                 e.what());
    return false;
  }
  return true;
}

int scaled(int iters, size_t bytes, double budget_bytes, int floor) {
  return int(std::clamp(budget_bytes / double(bytes), double(floor), double(iters)));
}

void send_phase(VerbsSide& a, VerbsSide& b, const Options& o) {
  send_latency_us(a, b, 8, o.lat_iters / 10 + 1);  // warm-up
  const double lat = send_latency_us(a, b, 8, o.lat_iters);
  const double bw = send_bandwidth_gbps(a, b, kSendSlot, o.depth, o.bw_iters);
  std::printf("  %-30s %10.2f us     process_vm_writev(8 B):    %8.3f us\n",
              "SEND 8 B half round trip", lat, vm_copy_us(8, 200000, true));
  const double vm = vm_copy_us(kSendSlot, 20000, true);
  std::printf("  %-30s %10.2f Gb/s   process_vm_writev(64 KiB): %8.2f Gb/s (%.2f us)\n",
              "SEND 64 KiB bandwidth", bw, double(kSendSlot) * 8 / (vm * 1e-6) / 1e9, vm);
}

void rdma_phase(VerbsSide& a, VerbsSide& b, const Options& o) {
  const size_t region = o.max_size;
  write_latency_us(a, b, region, 8, o.lat_iters / 10 + 1);  // warm-up
  std::printf("\n  %8s %12s %12s %12s %12s %14s %14s\n", "bytes", "WRITE lat", "READ lat",
              "WRITE bw", "READ bw", "vm_writev", "vm_readv");
  std::printf("  %8s %12s %12s %12s %12s %14s %14s\n", "", "(half RTT)", "(RTT)", "", "",
              "(per call)", "(per call)");
  for (size_t n = 8; n <= o.max_size; n *= 8) {
    const int li = scaled(o.lat_iters, n, 256.0 * (1 << 20), 50);
    const int bi = scaled(o.bw_iters, n, 4096.0 * (1 << 20), 200);
    const double wl = write_latency_us(a, b, region, n, li);
    const double rl = read_latency_us(a, b, region, n, li);
    const double wb = rdma_bandwidth_gbps(a, b, IBV_WR_RDMA_WRITE, region, n, o.depth, bi);
    const double rb = rdma_bandwidth_gbps(a, b, IBV_WR_RDMA_READ, region, n, o.depth, bi);
    const int vi = scaled(200000, n, 2048.0 * (1 << 20), 200);
    std::printf("  %8zu %9.2f us %9.2f us %7.2f Gb/s %7.2f Gb/s %11.3f us %11.3f us\n", n, wl, rl,
                wb, rb, vm_copy_us(n, vi, true), vm_copy_us(n, vi, false));
    if (n * 8 > o.max_size && n != o.max_size) n = o.max_size / 8;  // end on max_size
  }
  const double rate = write_msg_rate_mps(a, b, region, o.batch, o.depth, o.msgs);
  std::printf("\n  %-30s %10.3f Mmsg/s (post lists of %d, %d in flight)\n",
              "WRITE 8 B message rate", rate, o.batch, o.depth);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Measures, between two vHCAs of one fabric through a running fabricd: RC SEND half "
      "round-trip latency (8 B) and bandwidth (64 KiB); RDMA WRITE and READ latency and "
      "bandwidth from 8 B to --max-size in steps of x8; and the 8-byte RDMA WRITE message rate "
      "with post lists. Beside them it prints what process_vm_writev/readv -- the engine's DMA "
      "-- cost for the same sizes in the same run.\n\nExamples:\n  fabricctl exec -- "
      "vfabric-bench --client vib0 --server vib1\n  fabricctl exec -- vfabric-bench --client "
      "vroce0 --server vroce1 --gid-index 1"};
  Options o;
  app.add_option("--client", o.ca, "first vHCA")->capture_default_str();
  app.add_option("--server", o.cb, "second vHCA")->capture_default_str();
  app.add_option("--gid-index", o.gid_index, "GID index for RoCE (1 = RoCE v2); -1 = LID routing")
      ->capture_default_str();
  app.add_option("--lat-iters", o.lat_iters, "round trips for latency (fewer for large sizes)")
      ->capture_default_str();
  app.add_option("--bw-iters", o.bw_iters, "messages for bandwidth (fewer for large sizes)")
      ->capture_default_str();
  app.add_option("--depth", o.depth, "operations in flight for bandwidth")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--max-size", o.max_size, "largest WRITE/READ size in bytes")
      ->check(CLI::Range(size_t(8), size_t(64) << 20))
      ->capture_default_str();
  app.add_option("--batch", o.batch, "WRs per post list for the message rate")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--msgs", o.msgs, "messages for the message rate")->capture_default_str();
  app.add_flag("--quick", [&](int64_t) { o.lat_iters = o.bw_iters = 500, o.msgs = 20000; },
               "few iterations: a smoke run, not a measurement");
  CLI11_PARSE(app, argc, argv);
  if (o.batch > o.depth) o.batch = o.depth;

  VerbsSide a, b;
  if (!open_pair(a, b, o, kSendSlot * size_t(o.depth), false)) return 1;
  std::printf("vfabric-bench  %s <-> %s  (RC, %s)\n", o.ca.c_str(), o.cb.c_str(),
              a.port.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCEv2" : "InfiniBand");
  send_phase(a, b, o);

  VerbsSide c, d;
  if (!open_pair(c, d, o, 2 * o.max_size, true)) return 1;
  rdma_phase(c, d, o);
  return 0;
}
