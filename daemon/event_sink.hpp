// Delivers the engine's events to apps, the way uverbs does: completion
// events into the CQ's completion channel, async events into the context's
// async-event pipe, each in the kernel's record layout that libibverbs reads
// (vhca_comp_event, vhca_async_event). The pipes' write ends come from the
// provider (SCM_RIGHTS); the events name the app's own object pointers
// (user_handle), so the daemon keeps the (client, handle) -> user_handle map.
//
// Lives on the lcore: every method runs there. Writes never block -- a pipe
// the app does not drain fills up, and further events to it are dropped and
// counted (uverbs has no such limit, but must never stall the dataplane).
// Events that were written are counted per object, because destroying an
// object waits until the app has acknowledged exactly that many.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <unordered_map>

#include "device/engine/hca.hpp"

namespace vf {

class AppEventSink : public engine::EventSink {
 public:
  AppEventSink() = default;
  ~AppEventSink() override;
  AppEventSink(const AppEventSink&) = delete;
  AppEventSink& operator=(const AppEventSink&) = delete;

  // True if `fd` is a pipe (or FIFO) we may write events into; anything else
  // an app sends is refused (a regular file or socket could block or grow).
  static bool usable_pipe(int fd);

  // Each takes ownership of the fd (a pipe's write end; -1 = none).
  void open_client(engine::ClientId, int async_fd);
  void close_client(engine::ClientId);  // forgets its objects, closes its fds
  void add_cq(engine::ClientId, uint32_t handle, uint64_t user_handle, int channel_fd);
  void add_qp(engine::ClientId, uint32_t handle, uint64_t user_handle);
  void add_srq(engine::ClientId, uint32_t handle, uint64_t user_handle);

  // What was written for the object; it is forgotten (and its channel fd closed).
  struct CqReported {
    uint32_t comp = 0, async = 0;
  };
  CqReported forget_cq(engine::ClientId, uint32_t handle);
  uint32_t forget_qp(engine::ClientId, uint32_t handle);
  uint32_t forget_srq(engine::ClientId, uint32_t handle);

  // Unaffiliated events, to every open context.
  void device_fatal();
  void port_event(ibv_event_type, uint8_t port);

  // engine::EventSink
  void cq_event(engine::ClientId, uint32_t cq_handle) override;
  void async_event(engine::ClientId, ibv_event_type, uint32_t handle) override;

  struct Stats {
    uint64_t comp_events = 0, async_events = 0;
    uint64_t dropped = 0;  // pipe full, closed by the app, or no such object
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Obj {
    uint64_t user_handle = 0;
    int channel_fd = -1;  // CQs with a completion channel
    uint32_t comp_reported = 0;
    uint32_t async_reported = 0;
  };
  using Map = std::unordered_map<uint64_t, Obj>;  // key: client << 32 | handle
  static uint64_t key(engine::ClientId c, uint32_t h) { return uint64_t(c) << 32 | h; }
  bool write_event(int fd, const void* rec, size_t len);
  void async_to_object(Map&, engine::ClientId, ibv_event_type, uint32_t handle);
  void forget_client_objects(Map&, engine::ClientId);

  std::unordered_map<engine::ClientId, int> clients_;  // -> async pipe
  Map cqs_, qps_, srqs_;
  Stats stats_;
};

}  // namespace vf
