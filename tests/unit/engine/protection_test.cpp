// Protection and hostile input: keys, PDs, bounds, access flags, memory that
// is not (or no longer) mapped, rings with nonsense indices or WQEs, CQ
// overruns, and teardown of a client in the middle of a transfer. Every case
// ends in an IBA completion status or a QP in error -- and the other QPs keep
// working.
#include <sys/wait.h>

#include <random>
#include <string>

#include "tests/unit/engine/harness.hpp"

namespace vf::engine::test {
namespace {

using Protection = Pair;

vhca_cqe one(App& app, AppCq& cq) {
  auto v = app.drain(cq);
  EXPECT_FALSE(v.empty());
  return v.empty() ? vhca_cqe{} : v.front();
}

TEST_F(Protection, SgeOutsideMr) {
  setup();
  std::vector<uint8_t> small(4096);
  auto mr = app_a->mr(pd_a, small.data(), small.size());
  app_a->post_send(*qp_a, send_wqe(1, {sge(small.data() + 4000, 200, mr.lkey)}));
  run_for(1'000'000);
  vhca_cqe e = one(*app_a, *cq_a);
  EXPECT_EQ(e.wr_id, 1u);
  EXPECT_EQ(e.status, IBV_WC_LOC_PROT_ERR);
  EXPECT_TRUE(net.log.empty());  // nothing left the HCA
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_ERR);
}

TEST_F(Protection, WrongLkey) {
  setup();
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 100, mr_a.lkey ^ 0x10000)}));
  run_for(1'000'000);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_LOC_PROT_ERR);
  EXPECT_TRUE(net.log.empty());
}

TEST_F(Protection, MrOfAnotherClientOrPd) {
  setup();
  // Same process, same memory -- but registered by another context.
  App other(hca_a, 3);
  uint32_t opd = other.alloc_pd();
  auto omr = other.mr(opd, buf_a.data(), 4096);
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 100, omr.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_LOC_PROT_ERR);
  // Another PD of the same client.
  auto [qa, qb] = another_pair();
  uint32_t pd2 = app_a->alloc_pd();
  auto mr2 = app_a->mr(pd2, buf_a.data(), 4096);
  app_a->post_send(*qa, send_wqe(2, {sge(buf_a.data(), 100, mr2.lkey)}));
  run_for(1'000'000);
  auto c = app_a->drain(*cq_a);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c.back().wr_id, 2u);
  EXPECT_EQ(c.back().status, IBV_WC_LOC_PROT_ERR);
}

TEST_F(Protection, DeregisteredKeyFails) {
  setup();
  std::vector<uint8_t> b(4096);
  auto mr = app_a->mr(pd_a, b.data(), b.size());
  vhca_handle_req d{};
  d.handle = mr.mr_handle;
  ASSERT_EQ(hca_a.dereg_mr(app_a->id(), d), 0);
  auto mr2 = app_a->mr(pd_a, b.data(), b.size());  // same slot, new keys
  EXPECT_NE(mr2.lkey, mr.lkey);
  EXPECT_NE(mr2.lkey, mr2.rkey);
  app_a->post_send(*qp_a, send_wqe(1, {sge(b.data(), 100, mr.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_LOC_PROT_ERR);
}

TEST_F(Protection, ReceiveBufferTooSmall) {
  setup();
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 1000, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 3000, mr_a.lkey)}));
  run_for(1'000'000);
  vhca_cqe r = one(*app_b, *cq_b);
  EXPECT_EQ(r.wr_id, 1u);
  EXPECT_EQ(r.status, IBV_WC_LOC_LEN_ERR);
  vhca_cqe s = one(*app_a, *cq_a);
  EXPECT_EQ(s.wr_id, 2u);
  EXPECT_EQ(s.status, IBV_WC_REM_INV_REQ_ERR);
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_ERR);
}

TEST_F(Protection, ReceiveIntoMrWithoutLocalWrite) {
  setup();
  std::vector<uint8_t> ro(8192);
  auto mr = app_b->mr(pd_b, ro.data(), ro.size(), IBV_ACCESS_REMOTE_READ);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(ro.data(), 4096, mr.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(one(*app_b, *cq_b).status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_REM_OP_ERR);
  EXPECT_EQ(ro[0], 0);
}

TEST_F(Protection, ReceiveWithBadLkey) {
  setup();
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey ^ 0x10000)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(one(*app_b, *cq_b).status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_REM_OP_ERR);
}

TEST_F(Protection, MemoryUnmappedInsideAnMr) {
  setup();
  const long pg = sysconf(_SC_PAGESIZE);
  auto* p = static_cast<uint8_t*>(
      mmap(nullptr, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  auto mr = app_a->mr(pd_a, p, 3 * pg);
  ASSERT_EQ(munmap(p + pg, pg), 0);  // a hole after registration
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 65536, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(p, uint32_t(3 * pg), mr.lkey)}));
  run_for(1'000'000);
  auto c = app_a->drain(*cq_a);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_GE(hca_a.counters().dma_errors, 1u);
  munmap(p, pg);
  munmap(p + 2 * pg, pg);
}

TEST_F(Protection, ReceiveIntoMemoryUnmappedInsideAnMr) {
  setup();
  const long pg = sysconf(_SC_PAGESIZE);
  auto* p = static_cast<uint8_t*>(
      mmap(nullptr, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  auto mr = app_b->mr(pd_b, p, 3 * pg);
  ASSERT_EQ(munmap(p + pg, pg), 0);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(p, uint32_t(3 * pg), mr.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), uint32_t(3 * pg), mr_a.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(one(*app_b, *cq_b).status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_REM_OP_ERR);
  EXPECT_GE(hca_b.counters().dma_errors, 1u);
  munmap(p, pg);
  munmap(p + 2 * pg, pg);
}

TEST_F(Protection, RegMrChecks) {
  setup();
  vhca_reg_mr_rsp r{};
  const long pg = sysconf(_SC_PAGESIZE);
  // Not mapped at all.
  auto* p = static_cast<uint8_t*>(
      mmap(nullptr, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_EQ(munmap(p, 2 * pg), 0);
  EXPECT_EQ(app_a->reg_mr(pd_a, p, pg, IBV_ACCESS_LOCAL_WRITE, r), EFAULT);
  // Read-only memory: fine to send from, not to receive into.
  auto* ro = static_cast<uint8_t*>(
      mmap(nullptr, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  EXPECT_EQ(app_a->reg_mr(pd_a, ro, pg, IBV_ACCESS_LOCAL_WRITE, r), EFAULT);
  EXPECT_EQ(app_a->reg_mr(pd_a, ro, pg, 0, r), 0);
  munmap(ro, pg);
  // A range running past the end of a mapping.
  auto* q = static_cast<uint8_t*>(
      mmap(nullptr, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_EQ(munmap(q + pg, pg), 0);
  EXPECT_EQ(app_a->reg_mr(pd_a, q, pg + 1, IBV_ACCESS_LOCAL_WRITE, r), EFAULT);
  EXPECT_EQ(app_a->reg_mr(pd_a, q, pg, IBV_ACCESS_LOCAL_WRITE, r), 0);
  munmap(q, pg);
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 0, IBV_ACCESS_LOCAL_WRITE, r), 0) << "a zero-byte region";
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 64, IBV_ACCESS_REMOTE_WRITE, r), EINVAL);
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 64, IBV_ACCESS_REMOTE_ATOMIC, r), EINVAL);
  // Features the device lacks are EOPNOTSUPP ("skip"), unknown bits EINVAL.
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 64, IBV_ACCESS_MW_BIND, r), 0) << "accepted, as mlx5 and rxe do";
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 64, IBV_ACCESS_ZERO_BASED, r), 0) << "named from IOVA 0";
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 64, IBV_ACCESS_ON_DEMAND, r), EOPNOTSUPP);
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 64, 1 << 15, r), EINVAL);
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING, r), 0);
  EXPECT_EQ(app_a->reg_mr(pd_a + 100, buf_a.data(), 64, 0, r), EINVAL);
  EXPECT_EQ(app_a->reg_mr(pd_a, reinterpret_cast<void*>(~0ull - 10), 64, 0, r), EINVAL);
  EXPECT_EQ(app_a->reg_mr(pd_a, buf_a.data(), (1ull << 40) + 1, 0, r), EINVAL);
}

TEST_F(Protection, DeadProcessCannotBeOpened) {
  int gate[2];
  ASSERT_EQ(pipe(gate), 0);
  pid_t child = fork();
  if (child == 0) {
    char b;
    close(gate[1]);
    (void)!read(gate[0], &b, 1);
    _exit(0);
  }
  ASSERT_GT(child, 0);
  close(gate[0]);
  const int mem = ::open(("/proc/" + std::to_string(child) + "/mem").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(mem, 0);
  close(gate[1]);  // the child exits
  int st;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  vhca_open_context_rsp rsp{};
  EXPECT_EQ(hca_a.open_client(77, child, mem, rsp), ESRCH);
  EXPECT_EQ(hca_a.counts().clients, 0u);
}

TEST_F(Protection, OpenNeedsTheClientsOwnAddressSpace) {
  vhca_open_context_rsp rsp{};
  // Not a mem file, read-only, or another process's: refused, nothing opened.
  EXPECT_EQ(hca_a.open_client(78, getpid(), ::open("/dev/null", O_RDWR | O_CLOEXEC), rsp), EACCES);
  EXPECT_EQ(hca_a.open_client(78, getpid(), ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC), rsp),
            EACCES);
  EXPECT_EQ(hca_a.open_client(78, getppid(), self_mem_fd(), rsp), EACCES);
  EXPECT_EQ(hca_a.open_client(78, getpid(), -1, rsp), EACCES);
  EXPECT_EQ(hca_a.counts().clients, 0u);
  EXPECT_EQ(hca_a.open_client(78, getpid(), self_mem_fd(), rsp), 0);
}

TEST_F(Protection, HostileSqProducerFailsOnlyThatQp) {
  setup();
  auto [qa, qb] = another_pair();
  __atomic_store_n(&qp_a->sq.hdr()->producer, qp_a->sq.entries + 5, __ATOMIC_RELEASE);
  run_for(1'000'000);
  EXPECT_EQ(app_a->query(*qp_a).attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(ev_a.count(IBV_EVENT_QP_FATAL, qp_a->handle), 1u);
  EXPECT_GE(hca_a.counters().hostile_ring_events, 1u);
  EXPECT_TRUE(net.log.empty());
  EXPECT_TRUE(exchange_ok(*qa, *qb));
}

TEST_F(Protection, HostileRqProducer) {
  setup();
  auto [qa, qb] = another_pair();
  __atomic_store_n(&qp_b->rq.hdr()->producer, 0x80000000u, __ATOMIC_RELEASE);
  app_a->post_send(*qp_a, send_wqe(1, {sge(buf_a.data(), 100, mr_a.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(app_b->query(*qp_b).attr.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(ev_b.count(IBV_EVENT_QP_FATAL, qp_b->handle), 1u);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_REM_OP_ERR);
  EXPECT_TRUE(exchange_ok(*qa, *qb));
}

TEST_F(Protection, GarbageSendWqeFields) {
  setup();
  struct Case {
    const char* what;
    std::function<void(vhca_send_wqe&)> edit;
    ibv_wc_status status = IBV_WC_LOC_QP_OP_ERR;
  } cases[] = {
      {"opcode 77", [](vhca_send_wqe& w) { w.opcode = 77; }},
      {"num_sge 200", [](vhca_send_wqe& w) { w.num_sge = 200; }},
      {"num_sge over the QP's max", [](vhca_send_wqe& w) { w.num_sge = 5; }},
      {"inline_len 5000",
       [](vhca_send_wqe& w) {
         w.send_flags |= IBV_SEND_INLINE;
         w.inline_len = 5000;
       }},
      {"unknown send flag", [](vhca_send_wqe& w) { w.send_flags |= 1u << 20; }},
      {"TSO (not offered)", [](vhca_send_wqe& w) { w.opcode = IBV_WR_TSO; }},
      {"LOCAL_INV of a key nobody has", [](vhca_send_wqe& w) {
         w.opcode = IBV_WR_LOCAL_INV;
         w.imm_data = 0x80123456;
       }},
      {"BIND_MW of a window nobody has",
       [](vhca_send_wqe& w) {
         w.opcode = IBV_WR_BIND_MW;
         w.bind.mw_handle = 999;
         w.compare_add = 10;
       },
       IBV_WC_MW_BIND_ERR},
  };
  uint64_t id = 1;
  for (auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto [qa, qb] = another_pair();
    vhca_send_wqe w = send_wqe(id, {sge(buf_a.data(), 10, mr_a.lkey)});
    c.edit(w);
    app_a->post_send(*qa, w);
    run_for(1'000'000);
    auto v = app_a->drain(*cq_a);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].wr_id, id);
    EXPECT_EQ(v[0].status, c.status);
    EXPECT_EQ(app_a->query(*qa).attr.qp_state, IBV_QPS_ERR);
    ++id;
  }
  EXPECT_TRUE(net.log.empty());
  EXPECT_TRUE(exchange_ok(*qp_a, *qp_b));
}

TEST_F(Protection, GarbageRecvWqe) {
  setup();
  auto [qa, qb] = another_pair();
  vhca_recv_wqe w = recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)});
  w.num_sge = 200;
  app_b->post_recv(*qp_b, w);
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(one(*app_b, *cq_b).status, IBV_WC_LOC_QP_OP_ERR);
  EXPECT_EQ(one(*app_a, *cq_a).status, IBV_WC_REM_OP_ERR);
  EXPECT_TRUE(exchange_ok(*qa, *qb));
}

TEST_F(Protection, RandomRingGarbageNeverHurtsOthers) {
  setup();
  std::mt19937_64 rng(12345);
  std::vector<std::pair<std::unique_ptr<AppQp>, std::unique_ptr<AppQp>>> victims;
  for (int i = 0; i < 8; ++i) victims.push_back(another_pair());
  for (int round = 0; round < 20; ++round) {
    for (auto& [qa, qb] : victims) {
      for (MappedRing* r : {&qa->sq, &qa->rq, &qb->rq}) {
        uint8_t* body = r->base + sizeof(vhca_ring_hdr);
        for (size_t i = 0; i < size_t(r->entries) * r->entry_size; i += 8) {
          uint64_t v = rng();
          std::memcpy(body + i, &v, 8);
        }
        // Mostly plausible indices, sometimes wild ones.
        uint32_t prod = rng() % 4 ? r->hdr()->producer + uint32_t(rng() % 4) : uint32_t(rng());
        __atomic_store_n(&r->hdr()->producer, prod, __ATOMIC_RELEASE);
      }
    }
    run_for(100'000);
    app_a->drain(*cq_a);
    app_b->drain(*cq_b);
  }
  EXPECT_TRUE(exchange_ok(*qp_a, *qp_b));
}

TEST_F(Protection, CqConsumerNonsenseStopsTheCq) {
  setup();
  __atomic_store_n(&cq_a->ring.hdr()->consumer, 12345u, __ATOMIC_RELEASE);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  run_for(1'000'000);
  EXPECT_EQ(cq_a->ring.hdr()->producer, 0u);  // nothing written over unread entries
  EXPECT_EQ(ev_a.count(IBV_EVENT_CQ_ERR, cq_a->handle), 1u);
  EXPECT_EQ(ev_a.count(IBV_EVENT_QP_FATAL, qp_a->handle), 1u);
  EXPECT_EQ(hca_a.counters().cq_overruns, 1u);
}

TEST_F(Protection, CqOverrun) {
  setup();
  auto small = app_a->cq(1);  // 2 entries
  ASSERT_EQ(small->entries, 2u);
  auto q = app_a->qp(pd_a, *small, *small);
  auto qb = app_b->qp(pd_b, *cq_b, *cq_b);
  connect(*app_a, *q, kLidA, *app_b, *qb, kLidB, params);
  for (int i = 0; i < 4; ++i) {
    app_b->post_recv(*qb, recv_wqe(i, {sge(buf_b.data(), 4096, mr_b.lkey)}));
    app_a->post_send(*q, send_wqe(i, {sge(buf_a.data(), 10, mr_a.lkey)}));
  }
  run_for(1'000'000);
  EXPECT_EQ(small->ring.hdr()->producer, 2u);
  EXPECT_EQ(ev_a.count(IBV_EVENT_CQ_ERR, small->handle), 1u);
  auto v = app_a->drain(*small);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(app_a->query(*q).attr.qp_state, IBV_QPS_ERR);
}

TEST_F(Protection, HandlesOfAnotherClientRejected) {
  setup();
  App other(hca_a, 3);
  vhca_handle_req h{};
  h.handle = qp_a->handle;
  vhca_destroy_qp_rsp dr{};
  EXPECT_EQ(hca_a.destroy_qp(other.id(), h, dr), ENOENT);
  EXPECT_EQ(other.modify(*qp_a, init_attr(), kInitMask), EINVAL);
  vhca_query_qp_req qq{};
  qq.qp_handle = qp_a->handle;
  vhca_query_qp_rsp qr{};
  EXPECT_EQ(hca_a.query_qp(other.id(), qq, qr), EINVAL);
  h.handle = cq_a->handle;
  EXPECT_EQ(hca_a.destroy_cq(other.id(), h), ENOENT);
  h.handle = pd_a;
  EXPECT_EQ(hca_a.dealloc_pd(other.id(), h), ENOENT);
  h.handle = mr_a.mr_handle;
  EXPECT_EQ(hca_a.dereg_mr(other.id(), h), ENOENT);
  AppQp q;
  EXPECT_EQ(other.create_qp(pd_a, *cq_a, *cq_a, {}, q), EINVAL);
  EXPECT_EQ(hca_a.counts().qps, 1u);
  EXPECT_TRUE(exchange_ok(*qp_a, *qp_b));
}

TEST_F(Protection, CloseClientMidTransferReleasesEverything) {
  setup();
  const uint32_t len = 600 * 1024;
  fill_pattern(buf_a.data(), len, 3);
  int n = 0;
  net.filter = [&](const Sent& s) {  // lose a few, so retransmit timers are armed
    return !s.is_ack() && ++n % 50 == 0 ? Verdict{Verdict::kDrop} : Verdict{};
  };
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), len, mr_b.lkey)}));
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), len, mr_a.lkey)}));
  settle();
  for (int i = 0; i < 3; ++i) {
    sched.run_next();
    settle();
  }
  ASSERT_GT(net.log.size(), 100u);
  ASSERT_FALSE(sched.idle());
  hca_a.close_client(app_a->id());
  EXPECT_EQ(hca_a.counts().clients, 0u);
  EXPECT_EQ(hca_a.counts().pds, 0u);
  EXPECT_EQ(hca_a.counts().mrs, 0u);
  EXPECT_EQ(hca_a.counts().cqs, 0u);
  EXPECT_EQ(hca_a.counts().qps, 0u);
  const size_t before = hca_a.counters().rx_dropped;
  run_for(500'000'000);  // B's ACKs/NAKs now hit a QPN that is gone
  EXPECT_GT(hca_a.counters().rx_dropped, before);
  EXPECT_FALSE(hca_a.poll(64));
  EXPECT_TRUE(app_b->drain(*cq_b).empty());  // B still waits for the rest
  hca_b.close_client(app_b->id());
  EXPECT_EQ(hca_b.counts().qps, 0u);
  EXPECT_EQ(hca_b.counts().clients, 0u);
  run_for(1'000'000);
  EXPECT_TRUE(sched.idle());  // no engine timer survives its QP
}

TEST_F(Protection, PeerClosedMidTransferEndsInRetryExceeded) {
  ConnParams p;
  p.retry_cnt = 2;
  p.timeout = 8;
  setup(p);
  app_b->post_recv(*qp_b, recv_wqe(1, {sge(buf_b.data(), 4096, mr_b.lkey)}));
  hca_b.close_client(app_b->id());
  app_a->post_send(*qp_a, send_wqe(2, {sge(buf_a.data(), 100, mr_a.lkey)}));
  auto c = wait_cqes(*app_a, *cq_a, 1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].status, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(sched.now(), 3 * (Nanos(4096) << 8));
}

}  // namespace
}  // namespace vf::engine::test
