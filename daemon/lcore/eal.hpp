// DPDK EAL lifetime for fabricd: init with the config's arguments, one mbuf
// pool of `pool_mbufs` buffers (mbuf_pool_size), and launching the dataplane loop on a worker lcore.
#pragma once

#include <rte_mempool.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace vf {

class Eal {
 public:
  Eal(const std::vector<std::string>& args, unsigned pool_mbufs);
  ~Eal();
  Eal(const Eal&) = delete;
  Eal& operator=(const Eal&) = delete;

  rte_mempool* pool() const { return pool_; }
  // Runs `fn` on a worker lcore, or on a plain thread when EAL has none.
  void launch(std::function<void()> fn);
  void join();

 private:
  rte_mempool* pool_ = nullptr;
  std::function<void()> fn_;
  unsigned worker_ = 0;
  bool on_worker_ = false;
  std::thread thread_;
};

}  // namespace vf
