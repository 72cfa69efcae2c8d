#include "daemon/lcore/eal.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <stdexcept>

#include "daemon/lcore/mbuf_pool.hpp"

namespace vf {
namespace {

// Each mbuf holds a 4096-byte MTU frame with headers; how many: mbuf_pool.hpp.
constexpr unsigned kMbufDataRoom = RTE_PKTMBUF_HEADROOM + 4608;

}  // namespace

Eal::Eal(const std::vector<std::string>& args, unsigned pool_mbufs) {
  std::vector<std::string> argv_s{"fabricd"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  // Two daemons (or a test run beside a lab) must not share EAL files.
  argv_s.push_back("--file-prefix=fabricd-" + std::to_string(getpid()));
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  if (rte_eal_init(int(argv.size()), argv.data()) < 0)
    throw std::runtime_error(std::string("DPDK EAL initialisation failed: ") +
                             rte_strerror(rte_errno) +
                             " (check daemon.eal_args in the config)");
  // A large fabric may need more than the EAL's memory (-m) holds: run with
  // the largest pool that fits rather than not at all, and say so.
  for (unsigned n = pool_mbufs;; n = (n + 1) / 2 - 1) {
    pool_ = rte_pktmbuf_pool_create("vf_mbufs", n, 256, 0, kMbufDataRoom, SOCKET_ID_ANY);
    if (pool_) {
      if (n < pool_mbufs)
        spdlog::warn("the fabric needs {} packet buffers, the EAL memory holds {}: senders may wait for buffers "
                     "(raise -m in daemon.eal_args: each buffer takes 4.9 KiB)",
                     pool_mbufs, n);
      return;
    }
    if (rte_errno != ENOMEM || n <= kMinPoolMbufs) break;
  }
  throw std::runtime_error("cannot create the pool of " + std::to_string(pool_mbufs) +
                           " packet buffers the fabric needs: " + rte_strerror(rte_errno) +
                           " (raise -m in daemon.eal_args: each buffer takes 4.9 KiB)");
}

Eal::~Eal() {
  join();
  rte_eal_cleanup();
}

static int run_fn(void* arg) {
  (*static_cast<std::function<void()>*>(arg))();
  return 0;
}

void Eal::launch(std::function<void()> fn) {
  fn_ = std::move(fn);
  worker_ = rte_get_next_lcore(-1, 1, 0);
  if (worker_ < RTE_MAX_LCORE && rte_eal_remote_launch(run_fn, &fn_, worker_) == 0) {
    on_worker_ = true;
    return;
  }
  thread_ = std::thread([this] { fn_(); });
}

void Eal::join() {
  if (on_worker_) {
    rte_eal_wait_lcore(worker_);
    on_worker_ = false;
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace vf
