// AppEventSink: what reaches an app's pipes, what is refused, and what the
// destroy replies count.
#include "daemon/event_sink.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

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
  // Hands a duplicate of the write end to the sink, as SCM_RIGHTS would.
  int give() const { return fcntl(w, F_DUPFD_CLOEXEC, 0); }
  template <typename T>
  std::vector<T> drain() const {
    std::vector<T> out;
    T rec;
    while (read(r, &rec, sizeof(rec)) == ssize_t(sizeof(rec))) out.push_back(rec);
    return out;
  }
};

TEST(EventSink, OnlyAPipesWriteEndIsUsable) {
  Pipe p;
  EXPECT_TRUE(AppEventSink::usable_pipe(p.w));
  EXPECT_FALSE(AppEventSink::usable_pipe(p.r));  // a read end
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
  sink.add_cq(1, 5, 0xcccc, -1);
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
// sits unread -- else it would wait for acks that can never come.
TEST(EventSink, AFullPipeDropsWithoutBlockingAndDestroyCountsOnlyWhatWasRead) {
  AppEventSink sink;
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);  // blocking: the sink must make it non-blocking
  ASSERT_TRUE(AppEventSink::usable_pipe(p[1]));
  sink.open_client(1, p[1]);  // the sink owns the only write end
  sink.add_cq(1, 1, 42, -1);
  sink.add_qp(1, 2, 43);
  const int capacity = fcntl(p[1], F_GETPIPE_SZ) / int(sizeof(vhca_async_event));
  for (int i = 0; i < capacity + 10; ++i) sink.async_event(1, IBV_EVENT_COMM_EST, 2);
  EXPECT_EQ(sink.stats().dropped, 10u);
  vhca_async_event ev;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(read(p[0], &ev, sizeof(ev)), ssize_t(sizeof(ev)));
  EXPECT_EQ(sink.forget_qp(1, 2), 100u);
  sink.close_client(1);  // closes its write end
  // EOF after the buffered records: the sink held the only write end.
  int got = 0;
  while (read(p[0], &ev, sizeof(ev)) == ssize_t(sizeof(ev))) ++got;
  EXPECT_EQ(got, capacity - 100);
  close(p[0]);
}

// Interleaved owners: only the destroyed object's unread records are held
// back from its count, whatever else is queued around them.
TEST(EventSink, UnreadRecordsAreAttributedToTheirOwner) {
  AppEventSink sink;
  Pipe async;
  sink.open_client(1, async.give());
  sink.add_qp(1, 1, 0x10);
  sink.add_qp(1, 2, 0x20);
  sink.add_cq(1, 1, 0x30, -1);
  sink.async_event(1, IBV_EVENT_COMM_EST, 1);   // read below
  sink.async_event(1, IBV_EVENT_COMM_EST, 2);   // read below
  sink.async_event(1, IBV_EVENT_QP_FATAL, 1);   // unread
  sink.async_event(1, IBV_EVENT_CQ_ERR, 1);     // unread
  sink.async_event(1, IBV_EVENT_QP_FATAL, 2);   // unread
  vhca_async_event ev;
  ASSERT_EQ(read(async.r, &ev, sizeof(ev)), ssize_t(sizeof(ev)));
  ASSERT_EQ(read(async.r, &ev, sizeof(ev)), ssize_t(sizeof(ev)));
  EXPECT_EQ(sink.forget_qp(1, 1), 1u);
  EXPECT_EQ(sink.forget_cq(1, 1).async, 0u);
  ASSERT_EQ(read(async.r, &ev, sizeof(ev)), ssize_t(sizeof(ev)));  // QP 1's FATAL
  EXPECT_EQ(sink.forget_qp(1, 2), 1u);  // its FATAL is still unread
}

TEST(EventSink, AClosedReadEndCostsAnEpipeNotTheProcess) {
  signal(SIGPIPE, SIG_IGN);  // as fabricd's main does
  AppEventSink sink;
  Pipe chan;
  sink.open_client(1, -1);
  sink.add_cq(1, 1, 9, chan.give());
  close(chan.r);
  chan.r = -1;
  sink.cq_event(1, 1);
  EXPECT_EQ(sink.stats().dropped, 1u);
  EXPECT_EQ(sink.forget_cq(1, 1).comp, 0u);
}

}  // namespace
}  // namespace vf
