// Address handles: the validation matrix of create_ah on IB and RoCE,
// handles per client, PD references, counts.
#include "tests/unit/engine/ud_fixture.hpp"

namespace vf::engine::test {
namespace {

class Ah : public UdPair {};

TEST_F(Ah, IbValidationMatrix) {
  build(false);
  struct Case {
    const char* what;
    ibv_ah_attr a;
    int want;
  };
  auto with = [](ibv_ah_attr a, const std::function<void(ibv_ah_attr&)>& f) {
    f(a);
    return a;
  };
  const ibv_ah_attr base = ib_ah(kLidB);
  const ibv_ah_attr glob = global_ah(kLidB, gid_b);
  const Case cases[] = {
      {"plain", base, 0},
      {"port 0", with(base, [](ibv_ah_attr& a) { a.port_num = 0; }), EINVAL},
      {"port 2", with(base, [](ibv_ah_attr& a) { a.port_num = 2; }), EINVAL},
      {"sl 15", with(base, [](ibv_ah_attr& a) { a.sl = 15; }), 0},
      {"sl 16", with(base, [](ibv_ah_attr& a) { a.sl = 16; }), EINVAL},
      {"dlid 0", with(base, [](ibv_ah_attr& a) { a.dlid = 0; }), EINVAL},
      {"dlid 0 global", with(glob, [](ibv_ah_attr& a) { a.dlid = 0; }), EINVAL},
      {"multicast dlid", with(glob, [](ibv_ah_attr& a) { a.dlid = 0xC001; }), 0},
      {"permissive dlid", with(base, [](ibv_ah_attr& a) { a.dlid = 0xFFFF; }), EINVAL},
      {"global", glob, 0},
      {"sgid index 1 of 1", with(glob, [](ibv_ah_attr& a) { a.grh.sgid_index = 1; }), EINVAL},
      {"sgid index ignored without GRH", with(base, [](ibv_ah_attr& a) { a.grh.sgid_index = 9; }), 0},
      {"hop limit 0", with(glob, [](ibv_ah_attr& a) { a.grh.hop_limit = 0; }), 0},
      {"is_global 2", with(glob, [](ibv_ah_attr& a) { a.is_global = 2; }), EINVAL},
  };
  unsigned made = 0;
  for (const Case& c : cases) {
    uint32_t h = 0;
    EXPECT_EQ(create_ah(*app_a, pd_a, c.a, h), c.want) << c.what;
    if (c.want == 0) {
      EXPECT_NE(h, 0u) << c.what;
      ++made;
    }
  }
  EXPECT_EQ(hca_a->counts().ahs, made);
}

TEST_F(Ah, RoceValidation) {
  build(true);
  uint32_t h = 0;
  EXPECT_EQ(create_ah(*app_a, pd_a, ib_ah(kLidB), h), EINVAL);  // no GRH on RoCE (mlx5: EINVAL)
  ibv_ah_attr g = global_ah(0, gid_b);
  EXPECT_EQ(create_ah(*app_a, pd_a, g, h), 0);
  g.grh.sgid_index = 1;
  EXPECT_EQ(create_ah(*app_a, pd_a, g, h), EINVAL);
}

TEST_F(Ah, HandlesArePerClientAndHoldThePd) {
  build(false);
  uint32_t h = 0;
  EXPECT_EQ(create_ah(*app_a, 999, ib_ah(kLidB), h), EINVAL);  // no such PD
  App other(*hca_a, 7);
  const uint32_t opd = other.alloc_pd();
  EXPECT_EQ(create_ah(*app_a, opd, ib_ah(kLidB), h), EINVAL);  // another client's PD
  const uint32_t pd2 = app_a->alloc_pd();
  ASSERT_EQ(create_ah(*app_a, pd2, ib_ah(kLidB), h), 0);
  vhca_handle_req q{};
  q.handle = pd2;
  EXPECT_EQ(hca_a->dealloc_pd(app_a->id(), q), EBUSY);
  EXPECT_EQ(destroy_ah(other, h), ENOENT);  // not its handle
  EXPECT_EQ(hca_a->counts().ahs, 1u);
  EXPECT_EQ(destroy_ah(*app_a, h), 0);
  EXPECT_EQ(destroy_ah(*app_a, h), ENOENT);
  EXPECT_EQ(hca_a->dealloc_pd(app_a->id(), q), 0);
  EXPECT_EQ(hca_a->counts().ahs, 0u);
  // Teardown of a client frees its AHs.
  ASSERT_EQ(create_ah(other, opd, ib_ah(kLidB), h), 0);
  EXPECT_EQ(hca_a->counts().ahs, 1u);
  hca_a->close_client(other.id());
  EXPECT_EQ(hca_a->counts().ahs, 0u);
  vhca_query_device_rsp d{};
  ASSERT_EQ(hca_a->query_device(app_a->id(), d), 0);
  EXPECT_EQ(d.attr.max_ah, int(hca_a->config().limits.max_ah));
  EXPECT_GT(d.attr.max_ah, 0);
}

}  // namespace
}  // namespace vf::engine::test
