// A hostile app against one vHCA, through the daemon's own request path
// (check_request_framing, execute_device_command) into the engine: slow-path
// messages, whatever it writes into the rings it was given (WQEs, indices, CQ
// arming), packets injected from the "wire", and time passing. The vHCA's port
// loops every packet back to itself, so requester, responder and completer all
// run on fuzzer-made work. The app is a forked child that only sleeps: every
// DMA lands in its copy of the arena, never in the fuzzer.
//
// Input: a sequence of ops, each one byte then its operands:
//   0x00-0x3F  request for cmd (op % VHCA_CMD_MAX), body from the input, header filled in
//   0x40-0x7F  the same with fields steered to valid values (arena addresses)
//   0x80       raw message: u16 length, bytes (nothing filled in)
//   0x81       ring write: ring, u16 offset, u8 length, bytes
//   0x82       ring producer += u8
//   0x83       inject packet: u8 slid/sl flags, u16 length, bytes
//   0x84       poll the engine and deliver looped packets
//   0x85       advance virtual time by u16 microseconds (timers fire)
// After each input the client is closed: no object, packet or timer may be left.
#include <endian.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "daemon/vhca/device_commands.hpp"
#include "daemon/vhca/device_server.hpp"
#include "daemon/vhca/event_sink.hpp"
#include "core/scheduler.hpp"
#include "device/abi/vhca_abi.h"
#include "device/engine/hca.hpp"
#include "tests/fuzz/fuzz_mbuf.hpp"

namespace {

constexpr size_t kArena = 1 << 16;
alignas(4096) uint8_t g_arena[kArena];  // mapped at the same address in the child
constexpr uint16_t kLid = 1;

rte_mempool* pool() {
  static rte_mempool* p = rte_pktmbuf_pool_create("vf_fuzz_dev", 2047, 0, 0, RTE_PKTMBUF_HEADROOM + 4608, SOCKET_ID_ANY);
  return p;
}

// The vHCA's port, wired back to itself.
class LoopPort : public vf::dp::HostPort {
 public:
  rte_mbuf* alloc() override { return rte_pktmbuf_alloc(pool()); }
  bool can_transmit(const vf::dp::Route&) const override { return queue.size() < 256; }
  const vf::PortInfo& info() const override { return info_; }
  void transmit(rte_mbuf* m, const vf::dp::Route& av) override {
    vf::engine::RxMeta meta;
    meta.slid = kLid;
    meta.dlid = av.dlid;
    meta.sl = av.sl;
    meta.has_grh = av.is_global;
    std::memcpy(meta.dgid, av.dgid.data(), 16);
    queue.push_back({m, meta});
  }
  struct Pkt {
    rte_mbuf* m;
    vf::engine::RxMeta meta;
  };
  std::deque<Pkt> queue;
  LoopPort() {
    info_.lid = kLid;
    info_.sm_lid = kLid;
    info_.gids = {vf::Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x12, 0x34}};
  }

 private:
  vf::PortInfo info_;
};

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return n_ == 0; }
  uint8_t u8() { return n_ ? (--n_, *d_++) : 0; }
  uint16_t u16() { return uint16_t(u8() | u8() << 8); }
  size_t take(void* out, size_t want) {
    const size_t k = want < n_ ? want : n_;
    if (k) std::memcpy(out, d_, k);
    d_ += k, n_ -= k;
    return k;
  }

 private:
  const uint8_t* d_;
  size_t n_;
};

struct Ring {
  uint8_t* base = nullptr;
  size_t size = 0;
};

struct Rig {
  Rig() {
    vf::fuzz::init_eal();
    if (!pool()) std::abort();
    child = fork();
    if (child == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (;;) pause();
    }
    if (child < 0) std::abort();
    vf::engine::HcaConfig cfg;
    cfg.name = "vfuzz0";
    cfg.node_guid = 0x0002c90300001234ull;
    cfg.limits.max_qp_wr = 256;
    cfg.limits.max_cqe = 1023;
    cfg.limits.max_srq_wr = 256;
    hca = new vf::engine::Hca(cfg, sched, port);
    hca->set_event_sink(&events);
    fds.doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    fds.status_ro = memfd_create("vf_fuzz_status", MFD_CLOEXEC);
    if (fds.doorbell < 0 || fds.status_ro < 0 || ftruncate(fds.status_ro, 4096) != 0) std::abort();
    baseline_mbufs = rte_mempool_in_use_count(pool());
  }

  void deliver() {
    for (int round = 0; round < 64 && (hca->poll(64) || !port.queue.empty()); ++round) {
      for (size_t n = port.queue.size(); n-- && !port.queue.empty();) {
        auto p = port.queue.front();
        port.queue.pop_front();
        hca->receive(p.m, p.meta);
      }
    }
  }

  vf::Scheduler sched;
  LoopPort port;
  vf::AppEventSink events;
  vf::engine::Hca* hca = nullptr;  // never destroyed: lives as long as the fuzzer
  vf::ContextFds fds;
  pid_t child = -1;
  unsigned baseline_mbufs = 0;
  vf::engine::ClientId next_client = 1;
};

Rig& rig() {
  static Rig* r = new Rig;
  return *r;
}

// The daemon's own read end of a pipe, as the provider opens it (ABI v9).
int reopen_read_end(int read_fd) {
  return open(("/proc/self/fd/" + std::to_string(read_fd)).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

void close_all(std::vector<int>& v) {
  for (int fd : v)
    if (fd >= 0) close(fd);
  v.clear();
}

// A registration request from `msg` whose addr/length point into the arena.
template <class Req>
Req steered(const std::vector<uint8_t>& msg) {
  Req r;
  std::memcpy(&r, msg.data(), sizeof(r));
  const uint64_t off = r.addr % kArena;
  r.addr = uint64_t(reinterpret_cast<uintptr_t>(g_arena)) + off;
  r.length = r.length % (kArena - off + 1);
  return r;
}

// Header filled in; with `steer`, the fields that name memory point into the
// arena so registrations succeed and DMA happens.
std::vector<uint8_t> make_request(Reader& in, uint32_t cmd, bool steer) {
  size_t len = vf::request_size(cmd);
  if (len == 0) len = sizeof(vhca_req_hdr) + in.u8();
  std::vector<uint8_t> msg(len, 0);
  in.take(msg.data() + sizeof(vhca_req_hdr), len - sizeof(vhca_req_hdr));
  vhca_req_hdr h{cmd, 7, uint32_t(len), VHCA_ABI_VERSION};
  std::memcpy(msg.data(), &h, sizeof(h));
  if (steer && cmd == VHCA_CMD_REG_MR) {
    auto r = steered<vhca_reg_mr_req>(msg);
    if (r.iova & 1) r.iova = r.addr;  // half named by their address, as ibv_reg_mr does
    std::memcpy(msg.data(), &r, sizeof(r));
  }
  if (steer && cmd == VHCA_CMD_REREG_MR) {
    const auto r = steered<vhca_rereg_mr_req>(msg);
    std::memcpy(msg.data(), &r, sizeof(r));
  }
  if (steer && cmd == VHCA_CMD_ALLOC_MW) {  // windows that exist, for SQ scribbles to bind
    vhca_alloc_mw_req r;
    std::memcpy(&r, msg.data(), sizeof(r));
    r.pd_handle = 1 + r.pd_handle % 4;
    r.type = IBV_MW_TYPE_1 + r.type % 2;
    std::memcpy(msg.data(), &r, sizeof(r));
  }
  if (steer && (cmd == VHCA_CMD_ATTACH_MCAST || cmd == VHCA_CMD_DETACH_MCAST)) {
    // Groups that exist, on QPs that exist: few GIDs, multicast LIDs.
    vhca_mcast_req r;
    std::memcpy(&r, msg.data(), sizeof(r));
    r.qp_handle = 1 + r.qp_handle % 8;
    r.lid = uint16_t(0xC000 | (r.lid & 3));
    r.gid[0] = 0xFF;
    std::memset(r.gid + 1, 0, 14);
    r.gid[15] &= 3;
    std::memcpy(msg.data(), &r, sizeof(r));
  }
  return msg;
}

void execute(Rig& g, vf::engine::ClientId client, const std::vector<uint8_t>& msg, std::vector<int> req_fds,
             std::vector<Ring>& rings, std::vector<int>& keep) {
  if (vf::check_request_framing(msg.data(), msg.size()) != 0) {
    close_all(req_fds);
    return;
  }
  vf::DeviceReply r = vf::execute_device_command(*g.hca, g.events, client, vf::DevicePeer{g.child}, msg, std::move(req_fds), g.fds);
  vhca_req_hdr h;
  std::memcpy(&h, msg.data(), sizeof(h));
  const bool ring_fds = h.cmd == VHCA_CMD_CREATE_CQ || h.cmd == VHCA_CMD_RESIZE_CQ || h.cmd == VHCA_CMD_CREATE_QP ||
                        h.cmd == VHCA_CMD_CREATE_SRQ;
  for (int fd : r.fds) {
    struct stat st {};
    if (ring_fds && rings.size() < 16 && fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) rings.push_back({static_cast<uint8_t*>(p), size_t(st.st_size)});
    }
    keep.push_back(fd);
  }
}

void inject(Rig& g, Reader& in) {
  const uint8_t flags = in.u8();
  const uint16_t len = in.u16() % 4200;
  rte_mbuf* m = rte_pktmbuf_alloc(pool());
  if (!m) return;
  char* d = rte_pktmbuf_append(m, len);
  if (!d && len) {
    rte_pktmbuf_free(m);
    return;
  }
  std::memset(d, 0, len);
  in.take(d, len);
  vf::engine::RxMeta meta;
  meta.slid = flags & 1 ? kLid : uint16_t(flags);
  meta.dlid = kLid;
  meta.sl = flags >> 4;
  meta.has_grh = flags & 2;
  g.hca->receive(m, meta);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Rig& g = rig();
  const vf::engine::ClientId client = g.next_client++;
  std::vector<Ring> rings;
  std::vector<int> keep;  // fds the "app" received
  int async[2];
  if (pipe2(async, O_CLOEXEC | O_NONBLOCK) != 0) std::abort();
  const std::string mem = "/proc/" + std::to_string(g.child) + "/mem";
  const int mem_fd = open(mem.c_str(), O_RDWR | O_CLOEXEC);
  if (mem_fd < 0) std::abort();
  vhca_open_context_req open_req{{VHCA_CMD_OPEN_CONTEXT, 1, sizeof(open_req), VHCA_ABI_VERSION}};
  std::vector<uint8_t> open_msg(sizeof(open_req));
  std::memcpy(open_msg.data(), &open_req, sizeof(open_req));
  execute(g, client, open_msg, {async[1], mem_fd, reopen_read_end(async[0])}, rings, keep);

  Reader in(data, size);
  for (int ops = 0; !in.empty() && ops < 256; ++ops) {
    const uint8_t op = in.u8();
    if (op < 0x80) {
      std::vector<int> req_fds;
      const uint32_t cmd = op % VHCA_CMD_MAX;
      if (cmd == VHCA_CMD_CREATE_CQ && (op & 0x40)) {  // with a completion channel
        int ch[2];
        if (pipe2(ch, O_CLOEXEC | O_NONBLOCK) == 0) {
          keep.push_back(ch[0]);
          req_fds.push_back(ch[1]);
          req_fds.push_back(reopen_read_end(ch[0]));
        }
      }
      execute(g, client, make_request(in, cmd, op & 0x40), std::move(req_fds), rings, keep);
    } else if (op == 0x80) {
      std::vector<uint8_t> msg(in.u16() % (VHCA_MAX_MSG + 16));
      msg.resize(in.take(msg.data(), msg.size()));
      execute(g, client, msg, {}, rings, keep);
    } else if (op == 0x81 && !rings.empty()) {
      Ring& r = rings[in.u8() % rings.size()];
      const size_t off = in.u16() % r.size;
      const size_t len = in.u8();
      in.take(r.base + off, len < r.size - off ? len : r.size - off);
    } else if (op == 0x82 && !rings.empty()) {
      Ring& r = rings[in.u8() % rings.size()];
      auto* hdr = reinterpret_cast<vhca_ring_hdr*>(r.base);
      __atomic_store_n(&hdr->producer, hdr->producer + in.u8(), __ATOMIC_RELEASE);
    } else if (op == 0x83) {
      inject(g, in);
    } else if (op == 0x84) {
      g.deliver();
    } else if (op == 0x85) {
      g.sched.advance_to(g.sched.now() + vf::Nanos(in.u16()) * 1000);
      g.deliver();
    }
  }

  g.deliver();
  g.hca->close_client(client);
  g.events.close_client(client);
  g.deliver();
  // Packets still looping (to QPs now gone) are dropped; then nothing may remain.
  for (auto& p : g.port.queue) rte_pktmbuf_free(p.m);
  g.port.queue.clear();
  g.sched.run_until_idle(g.sched.now() + vf::Nanos(10'000'000'000));
  g.deliver();
  for (auto& r : rings) munmap(r.base, r.size);
  close_all(keep);
  close(async[0]);
  const auto c = g.hca->counts();
  if (c.clients || c.pds || c.mrs || c.cqs || c.qps || c.srqs || c.ahs || c.mws) std::abort();
  if (rte_mempool_in_use_count(pool()) != g.baseline_mbufs) std::abort();
  return 0;
}
