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
// *read* for it, and its unread events are discarded: uverbs counts an event
// when the app reads it and deletes the unread ones from the queue, so an app
// never reads a record naming an object it destroyed (its pointer may already
// be a new object's). A pipe cannot say who read what, so each pipe keeps the
// owners of its records in write order, and the provider hands us a read end
// of its own (non-blocking, opened through /proc/self/fd): at destroy we take
// every unread record out, drop the object's, and put the rest back in order.
// The app's reader meanwhile sees an empty pipe (EAGAIN or a short wait), as
// if the records had not been written yet; we are the pipe's only writer.
#pragma once

#include <infiniband/verbs.h>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <unordered_map>

#include "daemon/telemetry/event_sink_stats.hpp"
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
  // True if `read_fd` is a read end of the same pipe as `write_fd`, which we
  // may read without blocking (made non-blocking here: it must be a file
  // description of its own, not the one the app reads through).
  static bool usable_read_end(int read_fd, int write_fd);

  // A pipe as the provider hands it over: the write end we write events into
  // and a read end of our own that takes back a destroyed object's unread
  // records; -1 = none. Each method takes ownership of both fds.
  struct PipeEnds {
    int write = -1, read = -1;
  };
  void open_client(engine::ClientId, PipeEnds async);
  void close_client(engine::ClientId);  // forgets its objects, closes its fds
  void add_cq(engine::ClientId, uint32_t handle, uint64_t user_handle, PipeEnds channel);
  void add_qp(engine::ClientId, uint32_t handle, uint64_t user_handle);
  void add_srq(engine::ClientId, uint32_t handle, uint64_t user_handle);

  // What the app read for the object (written less withdrawn); it is
  // forgotten, its unread records withdrawn and its channel fds closed.
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
    unsigned users = 0;           // write ends we hold on this pipe
    int read_fd = -1;             // our own read end, closed with the last user
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
  ino_t attach(PipeEnds);          // registers a user of the pipe's log
  void detach(int fd, ino_t ino);  // closes fd, drops the log with its last user
  void logged(ino_t ino, uint64_t who);
  // Takes `who`'s unread records out of the pipe; how many.
  uint32_t withdraw(int fd, ino_t ino, size_t rec_size, uint64_t who);
  uint32_t async_read(engine::ClientId, Kind, uint32_t handle, uint32_t written);
  void async_to_object(Map&, Kind, engine::ClientId, ibv_event_type, uint32_t handle);
  void forget_client_objects(Map&, engine::ClientId);

  std::unordered_map<engine::ClientId, Client> clients_;  // -> async pipe
  std::unordered_map<ino_t, PipeLog> logs_;
  Map cqs_, qps_, srqs_;
  Stats stats_;
};

}  // namespace vf
