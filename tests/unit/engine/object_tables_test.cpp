// ObjectTables on its own: handles, ownership, capacity, and the references
// an object holds on the objects it uses (what makes dealloc_pd / destroy_cq
// answer EBUSY and a client's teardown leave nothing behind).
#include "device/engine/object_tables.hpp"

#include <gtest/gtest.h>

namespace vf::engine {
namespace {

struct Tables : ::testing::Test {
  void SetUp() override {
    DeviceLimits l;
    l.max_pd = 2;
    tables.set_capacity(l);
    auto c = std::make_unique<Client>();
    c->id = 7;
    ASSERT_TRUE(tables.add_client(std::move(c)));
    auto o = std::make_unique<Client>();
    o->id = 8;
    ASSERT_TRUE(tables.add_client(std::move(o)));
    me = tables.client(7);
    other = tables.client(8);
  }
  Pd* new_pd(Client* c) {
    auto pd = std::make_unique<Pd>();
    pd->client = c;
    return tables.adopt(std::move(pd));
  }
  ObjectTables tables;
  Client* me = nullptr;
  Client* other = nullptr;
};

TEST_F(Tables, HandlesResolveOnlyForTheirOwner) {
  Pd* pd = new_pd(me);
  ASSERT_NE(pd, nullptr);
  EXPECT_NE(pd->handle, 0u);
  EXPECT_EQ(tables.owned<Pd>(me, pd->handle), pd);
  EXPECT_EQ(tables.owned<Pd>(other, pd->handle), nullptr);
  EXPECT_EQ(tables.owned<Pd>(nullptr, pd->handle), nullptr);
  EXPECT_EQ(tables.owned<Pd>(me, 0), nullptr);
  EXPECT_EQ(tables.owned<Pd>(me, pd->handle + 1), nullptr);
}

TEST_F(Tables, AdoptFailsWhenFullAndASlotIsReused) {
  Pd* a = new_pd(me);
  Pd* b = new_pd(other);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(new_pd(me), nullptr);  // max_pd = 2
  const uint32_t h = a->handle;
  tables.release(*a);
  EXPECT_EQ(tables.counts().pds, 1u);
  Pd* c = new_pd(me);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->handle, h);
}

TEST_F(Tables, ReferencesFollowAdoptAndRelease) {
  Pd* pd = new_pd(me);
  ASSERT_NE(pd, nullptr);
  auto mr = std::make_unique<Mr>();
  mr->client = me;
  mr->pd = pd;
  Mr* m = tables.adopt(std::move(mr));
  auto ah = std::make_unique<Ah>();
  ah->client = me;
  ah->pd = pd;
  Ah* a = tables.adopt(std::move(ah));
  ASSERT_NE(m, nullptr);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(pd->users, 2u);
  tables.release(*m);
  EXPECT_EQ(pd->users, 1u);
  tables.release(*a);
  EXPECT_EQ(pd->users, 0u);
  EXPECT_EQ(tables.counts().mrs + tables.counts().ahs, 0u);
}

TEST_F(Tables, AQpHoldsItsPdCqsAndSrq) {
  Pd* pd = new_pd(me);
  auto cq = std::make_unique<Cq>();
  cq->client = me;
  Cq* scq = tables.adopt(std::move(cq));
  auto srq = std::make_unique<Srq>();
  srq->client = me;
  srq->pd = pd;
  Srq* s = tables.adopt(std::move(srq));
  ASSERT_NE(scq, nullptr);
  ASSERT_NE(s, nullptr);
  auto qp = std::make_unique<Qp>();
  qp->client = me;
  qp->pd = pd;
  qp->scq = qp->rcq = scq;
  qp->srq = s;
  Qp* q = tables.adopt(std::move(qp));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(pd->users, 2u);  // the SRQ and the QP
  EXPECT_EQ(scq->users, 2u);  // send and receive CQ
  EXPECT_EQ(s->users, 1u);
  tables.release(*q);
  EXPECT_EQ(pd->users, 1u);
  EXPECT_EQ(scq->users, 0u);
  EXPECT_EQ(s->users, 0u);
}

TEST_F(Tables, HandlesOfListsOneClientsObjects) {
  Pd* a = new_pd(me);
  Pd* b = new_pd(other);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(tables.handles_of<Pd>(me), std::vector<uint32_t>{a->handle});
  EXPECT_EQ(tables.handles_of<Pd>(other), std::vector<uint32_t>{b->handle});
  auto again = std::make_unique<Client>();
  again->id = 7;
  EXPECT_FALSE(tables.add_client(std::move(again)));  // an id is one client
  EXPECT_EQ(tables.client(7), me);
}

}  // namespace
}  // namespace vf::engine
