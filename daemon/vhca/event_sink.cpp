#include "daemon/vhca/event_sink.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "device/abi/vhca_abi.h"

namespace vf {

AppEventSink::~AppEventSink() {
  for (auto* m : {&cqs_, &qps_, &srqs_})
    for (auto& [k, o] : *m)
      if (o.channel_fd >= 0) close(o.channel_fd);
  for (auto& [c, cl] : clients_)
    if (cl.fd >= 0) close(cl.fd);
}

bool AppEventSink::usable_pipe(int fd) {
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  const int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) return false;
  // The flag is on the open file description the app shares with us; its
  // copy is a write end it never writes, so this changes nothing for it.
  return fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

bool AppEventSink::usable_read_end(int read_fd, int write_fd) {
  struct stat r, w;
  if (read_fd < 0 || write_fd < 0 || fstat(read_fd, &r) != 0 || fstat(write_fd, &w) != 0) return false;
  if (!S_ISFIFO(r.st_mode) || r.st_ino != w.st_ino || r.st_dev != w.st_dev) return false;
  const int fl = fcntl(read_fd, F_GETFL);
  if (fl < 0 || (fl & O_ACCMODE) != O_RDONLY) return false;
  // Ours alone if the provider opened it through /proc/self/fd as the ABI
  // says; an app that sends its own read end only makes its own reads
  // non-blocking, and we must never block the lcore.
  return fcntl(read_fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

ino_t AppEventSink::attach(PipeEnds p) {
  struct stat st;
  if (p.write < 0 || fstat(p.write, &st) != 0) {
    if (p.read >= 0) close(p.read);
    return 0;
  }
  PipeLog& log = logs_[st.st_ino];
  ++log.users;
  if (log.read_fd < 0)
    log.read_fd = p.read;
  else if (p.read >= 0)
    close(p.read);  // a channel shared by several CQs: one read end will do
  return st.st_ino;
}

void AppEventSink::detach(int fd, ino_t ino) {
  if (fd < 0) return;
  close(fd);
  auto it = logs_.find(ino);
  if (it != logs_.end() && --it->second.users == 0) {
    if (it->second.read_fd >= 0) close(it->second.read_fd);
    logs_.erase(it);
  }
}

void AppEventSink::logged(ino_t ino, uint64_t who) {
  auto it = logs_.find(ino);
  if (it == logs_.end()) return;
  auto& q = it->second.owners;
  q.push_back(who);
  // A pipe holds at most 64 KiB by default (4096 async or 8192 completion
  // records); older records cannot be unread unless the app grew its pipe.
  constexpr size_t kMaxUnread = 1u << 16;
  if (q.size() > kMaxUnread) q.pop_front();
}

namespace {
// What was unread in the pipe when we looked, whole records only (every
// write and every read of it is whole records, so a remainder would be a
// foreign writer). Bounded by that first look: an app that kept a write end
// and writes as fast as we read must not hold the lcore here.
std::vector<uint8_t> take_unread(int read_fd) {
  int pending = 0;
  if (ioctl(read_fd, FIONREAD, &pending) != 0 || pending <= 0) return {};
  std::vector<uint8_t> buf(static_cast<size_t>(pending));
  size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = read(read_fd, buf.data() + got, buf.size() - got);
    if (n > 0) {
      got += size_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EAGAIN: the app read some meanwhile; 0: no write end left
    }
  }
  buf.resize(got);
  return buf;
}
}  // namespace

uint32_t AppEventSink::withdraw(int fd, ino_t ino, size_t rec_size, uint64_t who) {
  auto it = logs_.find(ino);
  if (it == logs_.end() || fd < 0 || it->second.read_fd < 0) return 0;
  auto& q = it->second.owners;
  const std::vector<uint8_t> unread = take_unread(it->second.read_fd);
  const size_t n = unread.size() / rec_size;
  // The unread records are the newest n logged ones (older log entries were
  // read); any older than the log's memory count as someone else's.
  const size_t known = std::min(n, q.size());
  q.erase(q.begin(), q.end() - ptrdiff_t(known));
  std::vector<uint8_t> kept;
  kept.reserve(unread.size());
  std::deque<uint64_t> owners;
  uint32_t removed = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool logged_rec = i >= n - known;
    const uint64_t owner_of = logged_rec ? q[i - (n - known)] : ~uint64_t(0);
    if (owner_of == who) {
      ++removed;
      continue;
    }
    kept.insert(kept.end(), unread.begin() + ptrdiff_t(i * rec_size), unread.begin() + ptrdiff_t((i + 1) * rec_size));
    if (logged_rec) owners.push_back(owner_of);
  }
  q = std::move(owners);
  // Back in their order. The pipe had room for all of them a moment ago and
  // only this thread writes it, so this fits; a failure is counted, not hidden.
  size_t off = 0;
  while (off < kept.size()) {
    const ssize_t w = write(fd, kept.data() + off, kept.size() - off);
    if (w > 0) {
      off += size_t(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      stats_.dropped += (kept.size() - off) / rec_size;
      break;
    }
  }
  stats_.withdrawn += removed;
  return removed;
}

void AppEventSink::open_client(engine::ClientId c, PipeEnds async) {
  auto it = clients_.find(c);
  if (it != clients_.end()) {
    detach(it->second.fd, it->second.ino);
    clients_.erase(it);
  }
  clients_[c] = Client{async.write, attach(async)};
}

void AppEventSink::forget_client_objects(Map& m, engine::ClientId c) {
  for (auto it = m.begin(); it != m.end();) {
    if (uint32_t(it->first >> 32) == c) {
      detach(it->second.channel_fd, it->second.channel_ino);
      it = m.erase(it);
    } else {
      ++it;
    }
  }
}

void AppEventSink::close_client(engine::ClientId c) {
  forget_client_objects(cqs_, c);
  forget_client_objects(qps_, c);
  forget_client_objects(srqs_, c);
  if (auto it = clients_.find(c); it != clients_.end()) {
    detach(it->second.fd, it->second.ino);
    clients_.erase(it);
  }
}

void AppEventSink::add_cq(engine::ClientId c, uint32_t handle, uint64_t user_handle, PipeEnds channel) {
  Obj& o = cqs_[key(c, handle)];
  detach(o.channel_fd, o.channel_ino);  // a stale entry: handles are reused
  o = Obj{};
  o.user_handle = user_handle;
  o.channel_fd = channel.write;
  o.channel_ino = attach(channel);
}

void AppEventSink::add_qp(engine::ClientId c, uint32_t handle, uint64_t user_handle) {
  Obj o;
  o.user_handle = user_handle;
  qps_[key(c, handle)] = o;
}

void AppEventSink::add_srq(engine::ClientId c, uint32_t handle, uint64_t user_handle) {
  Obj o;
  o.user_handle = user_handle;
  srqs_[key(c, handle)] = o;
}

uint32_t AppEventSink::async_read(engine::ClientId c, Kind k, uint32_t handle, uint32_t written) {
  auto it = clients_.find(c);
  if (it == clients_.end()) return written;
  const uint32_t withdrawn =
      withdraw(it->second.fd, it->second.ino, sizeof(vhca_async_event), owner(k, handle));
  return written - std::min(written, withdrawn);
}

AppEventSink::CqReported AppEventSink::forget_cq(engine::ClientId c, uint32_t handle) {
  auto it = cqs_.find(key(c, handle));
  if (it == cqs_.end()) return {};
  Obj& o = it->second;
  CqReported r;
  const uint32_t comp_withdrawn =
      withdraw(o.channel_fd, o.channel_ino, sizeof(vhca_comp_event), owner(kCq, handle));
  r.comp = o.comp_reported - std::min(o.comp_reported, comp_withdrawn);
  r.async = async_read(c, kCq, handle, o.async_reported);
  detach(o.channel_fd, o.channel_ino);
  cqs_.erase(it);
  return r;
}

uint32_t AppEventSink::forget_qp(engine::ClientId c, uint32_t handle) {
  auto it = qps_.find(key(c, handle));
  if (it == qps_.end()) return 0;
  const uint32_t n = async_read(c, kQp, handle, it->second.async_reported);
  qps_.erase(it);
  return n;
}

uint32_t AppEventSink::forget_srq(engine::ClientId c, uint32_t handle) {
  auto it = srqs_.find(key(c, handle));
  if (it == srqs_.end()) return 0;
  const uint32_t n = async_read(c, kSrq, handle, it->second.async_reported);
  srqs_.erase(it);
  return n;
}

// One record per write: pipes write up to PIPE_BUF bytes atomically, so a
// record is either all there or (EAGAIN, full pipe) not at all.
bool AppEventSink::write_event(int fd, const void* rec, size_t len) {
  if (fd < 0) return false;
  ssize_t n;
  do n = write(fd, rec, len);
  while (n < 0 && errno == EINTR);
  if (n == ssize_t(len)) return true;
  ++stats_.dropped;  // EAGAIN (full) or EPIPE (the app closed the read end)
  return false;
}

void AppEventSink::cq_event(engine::ClientId c, uint32_t cq_handle) {
  auto it = cqs_.find(key(c, cq_handle));
  if (it == cqs_.end() || it->second.channel_fd < 0) {
    ++stats_.dropped;  // armed without a channel: ibv_req_notify_cq allows it
    return;
  }
  const vhca_comp_event ev{it->second.user_handle};
  if (write_event(it->second.channel_fd, &ev, sizeof(ev))) {
    logged(it->second.channel_ino, owner(kCq, cq_handle));
    ++it->second.comp_reported;
    ++stats_.comp_events;
  }
}

void AppEventSink::async_to_object(Map& m, Kind k, engine::ClientId c, ibv_event_type type,
                                   uint32_t handle) {
  auto obj = m.find(key(c, handle));
  auto client = clients_.find(c);
  if (obj == m.end() || client == clients_.end()) {
    ++stats_.dropped;
    return;
  }
  const vhca_async_event ev{obj->second.user_handle, uint32_t(type), 0};
  if (write_event(client->second.fd, &ev, sizeof(ev))) {
    logged(client->second.ino, owner(k, handle));
    ++obj->second.async_reported;
    ++stats_.async_events;
  }
}

void AppEventSink::async_event(engine::ClientId c, ibv_event_type type, uint32_t handle) {
  switch (type) {
    case IBV_EVENT_CQ_ERR: return async_to_object(cqs_, kCq, c, type, handle);
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: return async_to_object(srqs_, kSrq, c, type, handle);
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: return async_to_object(qps_, kQp, c, type, handle);
    default: {
      // Unaffiliated: `handle` is the port (libibverbs reads element as port_num).
      auto client = clients_.find(c);
      const vhca_async_event ev{handle, uint32_t(type), 0};
      if (client != clients_.end() && write_event(client->second.fd, &ev, sizeof(ev))) {
        logged(client->second.ino, owner(kPort, handle));
        ++stats_.async_events;
      }
      return;
    }
  }
}

void AppEventSink::port_event(ibv_event_type type, uint8_t port) {
  const vhca_async_event ev{port, uint32_t(type), 0};
  for (auto& [c, cl] : clients_)
    if (write_event(cl.fd, &ev, sizeof(ev))) {
      logged(cl.ino, owner(kPort, port));
      ++stats_.async_events;
    }
}

// Like mlx5 on a catastrophic error, the event names port 1 (the element of
// an unaffiliated event is a port number in the uverbs record).
void AppEventSink::device_fatal() { port_event(IBV_EVENT_DEVICE_FATAL, 1); }

}  // namespace vf
