// AppEventSink: what reaches an app's pipes, what is refused, and what the
// destroy replies count.
#include "daemon/vhca/event_sink.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "device/abi/vhca_abi.h"

namespace vf {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int p[2];
    EXPECT_EQ(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
    r = p[0];
    w = p[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
  // Hands the sink a duplicate of the write end, as SCM_RIGHTS would, and a
  // read end of its own, as the provider opens it through /proc/self/fd.
  AppEventSink::PipeEnds give() const {
    const std::string own = "/proc/self/fd/" + std::to_string(r);
    return {fcntl(w, F_DUPFD_CLOEXEC, 0), open(own.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  }
  template <typename T>
  std::vector<T> drain() const {
    std::vector<T> out;
    T rec;
    while (read(r, &rec, sizeof(rec)) == ssize_t(sizeof(rec))) out.push_back(rec);
    return out;
  }
};

TEST(EventSink, OnlyAPipesWriteEndIsUsable) {
  Pipe p, other;
  EXPECT_TRUE(AppEventSink::usable_pipe(p.w));
  EXPECT_FALSE(AppEventSink::usable_pipe(p.r));  // a read end
  EXPECT_TRUE(AppEventSink::usable_read_end(p.r, p.w));
  EXPECT_FALSE(AppEventSink::usable_read_end(p.w, p.w));      // a write end
  EXPECT_FALSE(AppEventSink::usable_read_end(other.r, p.w));  // another pipe's
  EXPECT_FALSE(AppEventSink::usable_read_end(-1, p.w));
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  EXPECT_FALSE(AppEventSink::usable_pipe(sv[0]));
  close(sv[0]);
  close(sv[1]);
  char path[] = "/tmp/vf-sink-XXXXXX";
  int f = mkstemp(path);
  ASSERT_GE(f, 0);
  unlink(path);
  EXPECT_FALSE(AppEventSink::usable_pipe(f));  // a regular file could grow without bound
  close(f);
  EXPECT_FALSE(AppEventSink::usable_pipe(-1));
}

TEST(EventSink, CompletionEventsCarryTheCqsUserHandleAndAreCounted) {
  AppEventSink sink;
  Pipe async, chan;
  sink.open_client(7, async.give());
  sink.add_cq(7, 3, 0x1234, chan.give());
  sink.cq_event(7, 3);
  sink.cq_event(7, 3);
  sink.cq_event(7, 4);  // unknown CQ: dropped
  sink.cq_event(8, 3);  // another client's handle space
  auto evs = chan.drain<vhca_comp_event>();
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].cq_handle, 0x1234u);
  EXPECT_EQ(sink.stats().dropped, 2u);
  sink.async_event(7, IBV_EVENT_CQ_ERR, 3);
  auto as = async.drain<vhca_async_event>();
  ASSERT_EQ(as.size(), 1u);
  EXPECT_EQ(as[0].element, 0x1234u);
  EXPECT_EQ(as[0].event_type, uint32_t(IBV_EVENT_CQ_ERR));
  auto n = sink.forget_cq(7, 3);
  EXPECT_EQ(n.comp, 2u);
  EXPECT_EQ(n.async, 1u);
  sink.cq_event(7, 3);  // forgotten
  EXPECT_TRUE(chan.drain<vhca_comp_event>().empty());
  EXPECT_EQ(sink.forget_cq(7, 3).comp, 0u);
}

TEST(EventSink, AsyncEventsNameTheirObjectByType) {
  AppEventSink sink;
  Pipe async;
  sink.open_client(1, async.give());
  sink.add_qp(1, 5, 0xaaaa);
  sink.add_srq(1, 5, 0xbbbb);  // same handle number, different object type
  sink.add_cq(1, 5, 0xcccc, {});
  sink.async_event(1, IBV_EVENT_QP_FATAL, 5);
  sink.async_event(1, IBV_EVENT_SRQ_LIMIT_REACHED, 5);
  sink.async_event(1, IBV_EVENT_COMM_EST, 5);
  sink.async_event(1, IBV_EVENT_QP_FATAL, 6);  // no such QP: dropped
  auto as = async.drain<vhca_async_event>();
  ASSERT_EQ(as.size(), 3u);
  EXPECT_EQ(as[0].element, 0xaaaau);
  EXPECT_EQ(as[1].element, 0xbbbbu);
  EXPECT_EQ(as[2].element, 0xaaaau);
  EXPECT_EQ(sink.forget_qp(1, 5), 2u);
  EXPECT_EQ(sink.forget_srq(1, 5), 1u);
  sink.device_fatal();
  as = async.drain<vhca_async_event>();
  ASSERT_EQ(as.size(), 1u);
  EXPECT_EQ(as[0].event_type, uint32_t(IBV_EVENT_DEVICE_FATAL));
  EXPECT_EQ(as[0].element, 1u);  // port 1
}

// A pipe the app never reads fills up: the lcore must not block. Destroy
// counts what the app read (as uverbs does), never what was dropped or still
// sits unread -- else it would wait for acks that can never come -- and takes
// the unread ones back out, as uverbs deletes them.
TEST(EventSink, AFullPipeDropsWithoutBlockingAndDestroyCountsOnlyWhatWasRead) {
  AppEventSink sink;
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);  // blocking: the sink must make its ends non-blocking
  ASSERT_TRUE(AppEventSink::usable_pipe(p[1]));
  const std::string own = "/proc/self/fd/" + std::to_string(p[0]);
  // The sink owns the only write end (and a read end of its own).
  sink.open_client(1, {p[1], open(own.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)});
  sink.add_cq(1, 1, 42, {});
  sink.add_qp(1, 2, 43);
  sink.add_qp(1, 3, 44);
  const int capacity = fcntl(p[1], F_GETPIPE_SZ) / int(sizeof(vhca_async_event));
  for (int i = 0; i < capacity + 10; ++i) sink.async_event(1, IBV_EVENT_COMM_EST, i % 2 ? 3 : 2);
  EXPECT_EQ(sink.stats().dropped, 10u);
  vhca_async_event ev;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(read(p[0], &ev, sizeof(ev)), ssize_t(sizeof(ev)));
  EXPECT_EQ(sink.forget_qp(1, 2), 50u);
  EXPECT_EQ(sink.stats().withdrawn, uint64_t(capacity / 2 - 50));
  sink.close_client(1);  // closes its write end
  // EOF after QP 3's records, all of them still there and in order.
  int got = 0;
  while (read(p[0], &ev, sizeof(ev)) == ssize_t(sizeof(ev))) {
    EXPECT_EQ(ev.element, 44u);
    ++got;
  }
  EXPECT_EQ(got, capacity / 2 - 50);
  close(p[0]);
}

// Interleaved owners: a destroyed object's unread records leave the pipe and
// its count; everyone else's stay, in the order they were written.
TEST(EventSink, ADestroyedObjectsUnreadRecordsAreWithdrawnAndTheRestKeepTheirOrder) {
  AppEventSink sink;
  Pipe async;
  sink.open_client(1, async.give());
  sink.add_qp(1, 1, 0x10);
  sink.add_qp(1, 2, 0x20);
  sink.add_cq(1, 1, 0x30, {});
  sink.async_event(1, IBV_EVENT_COMM_EST, 1);   // read below
  sink.async_event(1, IBV_EVENT_COMM_EST, 2);   // read below
  sink.async_event(1, IBV_EVENT_QP_FATAL, 1);   // unread
  sink.async_event(1, IBV_EVENT_CQ_ERR, 1);     // unread
  sink.async_event(1, IBV_EVENT_QP_FATAL, 2);   // unread
  sink.async_event(1, IBV_EVENT_SQ_DRAINED, 1);  // unread
  vhca_async_event ev;
  ASSERT_EQ(read(async.r, &ev, sizeof(ev)), ssize_t(sizeof(ev)));
  ASSERT_EQ(read(async.r, &ev, sizeof(ev)), ssize_t(sizeof(ev)));
  EXPECT_EQ(sink.forget_qp(1, 1), 1u);  // its COMM_EST; FATAL and SQ_DRAINED withdrawn
  EXPECT_EQ(sink.stats().withdrawn, 2u);
  auto left = async.drain<vhca_async_event>();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].element, 0x30u);
  EXPECT_EQ(left[0].event_type, uint32_t(IBV_EVENT_CQ_ERR));
  EXPECT_EQ(left[1].element, 0x20u);
  EXPECT_EQ(left[1].event_type, uint32_t(IBV_EVENT_QP_FATAL));
  EXPECT_EQ(sink.forget_cq(1, 1).async, 1u);
  EXPECT_EQ(sink.forget_qp(1, 2), 2u);
}

// Handles are reused: a QP destroyed with an event unread, then a new QP
// under the same handle. The app must never read the old record (its
// element is freed memory, or the new QP's if malloc reused the address),
// and the new QP's destroy counts exactly the one event the app read.
TEST(EventSink, AReusedHandleNeverInheritsItsPredecessorsEvents) {
  AppEventSink sink;
  Pipe async;
  sink.open_client(1, async.give());
  sink.add_qp(1, 5, 0xa0);
  sink.async_event(1, IBV_EVENT_QP_LAST_WQE_REACHED, 5);
  EXPECT_EQ(sink.forget_qp(1, 5), 0u);
  sink.add_qp(1, 5, 0xb0);
  sink.async_event(1, IBV_EVENT_COMM_EST, 5);
  auto evs = async.drain<vhca_async_event>();
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].element, 0xb0u);
  EXPECT_EQ(sink.forget_qp(1, 5), 1u);
}

// One completion channel serves two CQs: destroying one takes back only its
// own unread completion events.
TEST(EventSink, ASharedChannelLosesOnlyTheDestroyedCqsEvents) {
  AppEventSink sink;
  Pipe async, chan;
  sink.open_client(1, async.give());
  sink.add_cq(1, 1, 0x100, chan.give());
  sink.add_cq(1, 2, 0x200, chan.give());
  for (int i = 0; i < 3; ++i) {
    sink.cq_event(1, 1);
    sink.cq_event(1, 2);
  }
  vhca_comp_event ce;
  ASSERT_EQ(read(chan.r, &ce, sizeof(ce)), ssize_t(sizeof(ce)));  // CQ 1's first
  const auto n = sink.forget_cq(1, 1);
  EXPECT_EQ(n.comp, 1u);
  const auto left = chan.drain<vhca_comp_event>();
  ASSERT_EQ(left.size(), 3u);
  for (const auto& e : left) EXPECT_EQ(e.cq_handle, 0x200u);
  EXPECT_EQ(sink.forget_cq(1, 2).comp, 3u);
}

TEST(EventSink, AClosedReadEndCostsAnEpipeNotTheProcess) {
  signal(SIGPIPE, SIG_IGN);  // as fabricd's main does
  AppEventSink sink;
  Pipe chan;
  sink.open_client(1, {});
  sink.add_cq(1, 1, 9, {fcntl(chan.w, F_DUPFD_CLOEXEC, 0), -1});  // no read end but the app's
  close(chan.r);
  chan.r = -1;
  sink.cq_event(1, 1);
  EXPECT_EQ(sink.stats().dropped, 1u);
  EXPECT_EQ(sink.forget_cq(1, 1).comp, 0u);
}

}  // namespace
}  // namespace vf
