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
// Destroying an object waits until the app has acknowledged the events it
// *read* for it (uverbs counts an event when the app reads it and discards
// the unread ones). A pipe cannot say who read what, so each pipe keeps the
// owners of its records in write order: FIONREAD tells how many of the
// newest are still unread, and those are not counted. (Unlike uverbs, the
// unread records stay in the pipe: an app that reads them after destroying
// their object gets a stale pointer; apps drain events before destroying.)
#pragma once

#include <infiniband/verbs.h>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <unordered_map>

#include "daemon/event_sink_stats.hpp"
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

  using Stats = EventSinkStats;
  const Stats& stats() const { return stats_; }  // lcore only; copy it there

 private:
  enum Kind : uint64_t { kCq = 0, kQp = 1, kSrq = 2, kPort = 3 };
  // Who each record in one pipe is for, oldest first; only the newest
  // (at most a pipe's worth) can still be unread.
  struct PipeLog {
    std::deque<uint64_t> owners;  // kind << 32 | handle
    unsigned users = 0;           // fds we hold on this pipe
  };
  struct Obj {
    uint64_t user_handle = 0;
    int channel_fd = -1;  // CQs with a completion channel
    ino_t channel_ino = 0;
    uint32_t comp_reported = 0;
    uint32_t async_reported = 0;
  };
  struct Client {
    int fd = -1;
    ino_t ino = 0;
  };
  using Map = std::unordered_map<uint64_t, Obj>;  // key: client << 32 | handle
  static uint64_t key(engine::ClientId c, uint32_t h) { return uint64_t(c) << 32 | h; }
  static uint64_t owner(Kind k, uint32_t h) { return uint64_t(k) << 32 | h; }
  bool write_event(int fd, const void* rec, size_t len);
  ino_t attach(int fd);            // registers a user of fd's pipe log
  void detach(int fd, ino_t ino);  // closes fd, drops the log with its last user
  void logged(ino_t ino, uint64_t who);
  // Records for `who` still unread in the pipe behind `fd`.
  uint32_t unread(int fd, ino_t ino, size_t rec_size, uint64_t who);
  uint32_t async_read(engine::ClientId, Kind, uint32_t handle, uint32_t written);
  void async_to_object(Map&, Kind, engine::ClientId, ibv_event_type, uint32_t handle);
  void forget_client_objects(Map&, engine::ClientId);

  std::unordered_map<engine::ClientId, Client> clients_;  // -> async pipe
  std::unordered_map<ino_t, PipeLog> logs_;
  Map cqs_, qps_, srqs_;
  Stats stats_;
};

}  // namespace vf
