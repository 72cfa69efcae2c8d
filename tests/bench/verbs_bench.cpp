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

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string& what, int err = errno) {
  std::fprintf(stderr, "vfabric-bench: %s: %s\n", what.c_str(), std::strerror(err));
  std::exit(1);
}

[[noreturn]] void die_wc(const char* what, const ibv_wc& wc) {
  std::fprintf(stderr, "vfabric-bench: %s completion failed: %s (wr_id %llu)\n", what,
               ibv_wc_status_str(wc.status), static_cast<unsigned long long>(wc.wr_id));
  std::exit(1);
}

struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<char> buf;
  size_t slots = 1;
  ibv_port_attr port{};
  ibv_gid gid{};
};

ibv_context* open_dev(const std::string& name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list) die("ibv_get_device_list");
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n; ++i)
    if (name == ibv_get_device_name(list[i])) ctx = ibv_open_device(list[i]);
  ibv_free_device_list(list);
  if (!ctx) die("cannot open " + name + " (is it listed by ibv_devices?)");
  return ctx;
}

void setup(Side& s, const std::string& dev, size_t bytes, int depth, int gid_index) {
  s.ctx = open_dev(dev);
  if (ibv_query_port(s.ctx, 1, &s.port)) die("ibv_query_port");
  if (gid_index >= 0 && ibv_query_gid(s.ctx, 1, gid_index, &s.gid)) die("ibv_query_gid");
  s.pd = ibv_alloc_pd(s.ctx);
  s.buf.assign(bytes * size_t(depth), 'x');
  s.slots = size_t(depth);
  s.mr = ibv_reg_mr(s.pd, s.buf.data(), s.buf.size(), IBV_ACCESS_LOCAL_WRITE);
  s.cq = ibv_create_cq(s.ctx, depth * 2 + 4, nullptr, nullptr, 0);
  if (!s.pd || !s.mr || !s.cq) die("pd/mr/cq");
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = s.cq;
  ia.qp_type = IBV_QPT_RC;
  // The latency phases leave a receive posted on each side: room for both.
  ia.cap.max_send_wr = uint32_t(depth);
  ia.cap.max_recv_wr = uint32_t(depth) + 2;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.sq_sig_all = 1;
  s.qp = ibv_create_qp(s.pd, &ia);
  if (!s.qp) die("ibv_create_qp");
}

void connect(Side& a, const Side& b, int gid_index) {
  ibv_qp_attr at{};
  at.qp_state = IBV_QPS_INIT;
  at.port_num = 1;
  at.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    die("INIT");
  at = {};
  at.qp_state = IBV_QPS_RTR;
  at.path_mtu = a.port.active_mtu;
  at.dest_qp_num = b.qp->qp_num;
  at.max_dest_rd_atomic = 1;
  at.min_rnr_timer = 1;
  at.ah_attr.dlid = b.port.lid;
  at.ah_attr.port_num = 1;
  if (gid_index >= 0) {
    at.ah_attr.is_global = 1;
    at.ah_attr.grh.dgid = b.gid;
    at.ah_attr.grh.sgid_index = uint8_t(gid_index);
    at.ah_attr.grh.hop_limit = 64;
  }
  if (ibv_modify_qp(a.qp, &at,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    die("RTR");
  at = {};
  at.qp_state = IBV_QPS_RTS;
  at.timeout = 14;
  at.retry_cnt = 7;
  at.rnr_retry = 7;
  at.max_rd_atomic = 1;
  if (ibv_modify_qp(a.qp, &at,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                        IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
    die("RTS");
}

// Receives always offer a whole slot: a receive left over from one phase
// must fit any message of the next.
void post_recv(Side& s, size_t, int slot) {
  const size_t slot_size = s.buf.size() / s.slots;
  ibv_sge sge{reinterpret_cast<uintptr_t>(s.buf.data() + slot_size * size_t(slot)), uint32_t(slot_size),
              s.mr->lkey};
  ibv_recv_wr wr{}, *bad;
  wr.wr_id = uint64_t(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  if (int err = ibv_post_recv(s.qp, &wr, &bad)) die("ibv_post_recv", err);
}

void post_send(Side& s, size_t bytes, int slot) {
  const size_t slot_size = s.buf.size() / s.slots;
  ibv_sge sge{reinterpret_cast<uintptr_t>(s.buf.data() + slot_size * size_t(slot)), uint32_t(bytes), s.mr->lkey};
  ibv_send_wr wr{}, *bad;
  wr.wr_id = uint64_t(slot);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  if (int err = ibv_post_send(s.qp, &wr, &bad)) die("ibv_post_send", err);
}

// Waits for `n` completions on `s`, returns how many were receives.
int wait_cq(Side& s, int n) {
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

double latency_us(Side& a, Side& b, size_t bytes, int iters) {
  post_recv(a, bytes, 0);
  post_recv(b, bytes, 0);
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    post_send(a, bytes, 0);
    wait_cq(a, 1);
    wait_cq(b, 1);  // b's receive
    post_recv(b, bytes, 0);
    post_send(b, bytes, 0);
    wait_cq(b, 1);
    wait_cq(a, 1);
    post_recv(a, bytes, 0);
  }
  std::chrono::duration<double, std::micro> d = Clock::now() - t0;
  return d.count() / iters / 2;  // half round trip
}

double bandwidth_gbps(Side& a, Side& b, size_t bytes, int depth, int iters) {
  for (int i = 0; i < depth; ++i) post_recv(b, bytes, i);
  auto t0 = Clock::now();
  int sent = 0, done = 0, in_flight = 0;
  while (done < iters) {
    while (sent < iters && in_flight < depth) {
      post_send(a, bytes, sent % depth);
      ++sent;
      ++in_flight;
    }
    ibv_wc wc[16];
    int got = ibv_poll_cq(b.cq, 16, wc);
    for (int i = 0; i < got; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS) die_wc("receive", wc[i]);
      ++done;
      post_recv(b, bytes, int(wc[i].wr_id));
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

  const size_t kSmall = 8, kLarge = 65536;
  Side a, b;
  setup(a, ca, kLarge, depth, gid_index);
  setup(b, cb, kLarge, depth, gid_index);
  connect(a, b, gid_index);
  connect(b, a, gid_index);

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
